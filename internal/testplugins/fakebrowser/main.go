// Command fakebrowser stands in for a web browser in tests (BROWSER=
// "fakebrowser --log FILE"): it appends the URL it was given to FILE, then
// fetches it (following redirects), as a browser would when a login page
// sends it straight on to the loopback callback. It never writes to
// stdout or stderr, which the host discards anyway.
package main

import (
	"flag"
	"io"
	"net/http"
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
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		os.Exit(1)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
