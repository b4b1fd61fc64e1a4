// Command authproxy is a loopback reverse proxy for the conformance run's
// server suites: the suite's client cannot send an Authorization header,
// and both `hermes mcp serve --http` and `hermes mcp gateway` refuse every
// request without a bearer token. authproxy adds "Authorization: Bearer
// <token>" to each request, the token read from the variable -token-env
// names ($HERMES_MCP_SERVE_TOKEN by default, never from the command line),
// and forwards it, body, headers, Host and Origin untouched, so the
// server's own Host and Origin checks still see what the suite sent. It
// listens on loopback only and is for conformance/run.sh; it is not part
// of hermes.
//
//	HERMES_MCP_SERVE_TOKEN=... authproxy -to http://127.0.0.1:PORT/mcp
//	GATEWAY_TOKEN=... authproxy -token-env GATEWAY_TOKEN -to http://127.0.0.1:PORT/mcp
//
// Once listening it prints "authproxy: http://127.0.0.1:<port>/mcp" (the
// URL to test, with the path of -to) on stdout.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("authproxy: ")
	to := flag.String("to", "", "the URL of the MCP endpoint to forward to (loopback)")
	listen := flag.String("listen", "127.0.0.1:0", "the loopback address to listen on")
	tokenEnv := flag.String("token-env", "HERMES_MCP_SERVE_TOKEN", "the variable holding the bearer token to add")
	flag.Parse()
	token := os.Getenv(*tokenEnv)
	if token == "" {
		log.Fatalf("%s is not set: it is the bearer token to add", *tokenEnv)
	}
	target, err := url.Parse(*to)
	if err != nil || target.Scheme != "http" || !loopback(target.Hostname()) {
		log.Fatalf("-to %q: want an http:// URL on loopback", *to)
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !loopback(host) {
		log.Fatalf("-listen %q: want a loopback HOST:PORT", *listen)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
			// SetURL points Host at the target; keep the client's, which
			// the server validates.
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Set("Authorization", "Bearer "+token)
		},
		// Stream server-sent events as they come.
		FlushInterval: -1,
	}
	fmt.Printf("authproxy: http://%s%s\n", ln.Addr(), target.Path)
	if err := http.Serve(ln, proxy); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
