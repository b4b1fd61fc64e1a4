// Command fakebrowser stands in for a web browser in tests (BROWSER=
// "fakebrowser --log FILE"): it appends the URL it was given to FILE, then
// fetches it (following redirects, keeping cookies), as a browser would
// when a login page sends it straight on to the loopback callback. It never writes to
// stdout or stderr, which the host discards anyway.
package main

import (
	"flag"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"time"
)

func main() {
	logPath := flag.String("log", "", "file to append each URL to")
	noFetch := flag.Bool("no-fetch", false, "only log the URL")
	flag.Parse()
	if flag.NArg() == 0 {
		os.Exit(2)
	}
	url := flag.Arg(flag.NArg() - 1)
	if *logPath != "" {
		if f, err := os.OpenFile(*logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = f.WriteString(url + "\n")
			f.Close()
		}
	}
	if *noFetch {
		return
	}
	// A login page that sets a cookie and redirects (oidc-provider's
	// interaction) needs it back on the next request, as a browser does.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Timeout: 30 * time.Second, Jar: jar}
	resp, err := c.Get(url)
	if err != nil {
		os.Exit(1)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
