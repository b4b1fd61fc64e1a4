package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/proxy"
)

// serve starts a proxy for allow on loopback and returns its address.
func serve(t *testing.T, allow []string, resolve map[string]string) string {
	t.Helper()
	a, err := proxy.NewAllowList(allow)
	if err != nil {
		t.Fatal(err)
	}
	p := New(a, nil, nil)
	p.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		if ip, ok := resolve[host]; ok {
			return []netip.Addr{netip.MustParseAddr(ip)}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.Serve(ln) }()
	t.Cleanup(func() { _ = p.Close() })
	return ln.Addr().String()
}

// site is a loopback web server that answers "hi".
func site(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hi "+r.Host)
	})}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	return ln.Addr().String()
}

func get(t *testing.T, proxyAddr, u string) (int, string) {
	t.Helper()
	pu, _ := url.Parse("http://" + proxyAddr)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// connect sends a CONNECT and returns the status line and the connection.
func connect(t *testing.T, proxyAddr, target string) (string, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status, c, br
}

func TestProxyAllowsOnlyTheList(t *testing.T) {
	web := site(t)
	_, port, _ := net.SplitHostPort(web)
	other := site(t)
	p := serve(t, []string{web, "named.test:" + port, "rebind.test"}, map[string]string{"named.test": "127.0.0.1", "rebind.test": "127.0.0.1"})

	if code, body := get(t, p, "http://"+web+"/"); code != 200 || body != "hi "+web {
		t.Errorf("allowed host: %d %q", code, body)
	}
	if code, body := get(t, p, "http://"+other+"/"); code != 403 || !strings.Contains(body, "allow-list") {
		t.Errorf("other port: %d %q", code, body)
	}
	if code, _ := get(t, p, "http://evil.test/"); code != 403 {
		t.Errorf("other host: %d", code)
	}
	// An allowed name that resolves to a local address is refused: only an
	// entry naming the address itself reaches it.
	if code, body := get(t, p, "http://named.test:"+port+"/"); code != 502 || !strings.Contains(body, "local address") {
		t.Errorf("name resolving to loopback: %d %q", code, body)
	}

	status, c, br := connect(t, p, web)
	if !strings.HasPrefix(status, "200") {
		t.Fatalf("CONNECT allowed: %s", status)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: tunnel\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hi tunnel" {
		t.Errorf("through the tunnel: %q", b)
	}
	if status, _, _ := connect(t, p, other); !strings.HasPrefix(status, "403") {
		t.Errorf("CONNECT not allowed: %s", status)
	}
	if status, _, _ := connect(t, p, "rebind.test:"+port); !strings.HasPrefix(status, "502") {
		t.Errorf("CONNECT to a name resolving to loopback: %s", status)
	}
}

// Oversized headers and requests that are not proxy requests are refused.
func TestProxyBounds(t *testing.T) {
	p := serve(t, []string{"a.test"}, nil)
	c, err := net.Dial("tcp", p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX: %s\r\n\r\n", strings.Repeat("x", 2*MaxHeaderBytes))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 431 {
		t.Fatalf("oversized headers: %v %v", resp, err)
	}
	c2, err := net.Dial("tcp", p)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintf(c2, "GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n")
	resp, err = http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("origin-form request: %v %v", resp, err)
	}
}

// FuzzRequestTarget: whatever a client sends, parsing never panics, a
// target it returns is a clean host and port, and the allow-list lets
// through only what one of its entries names.
func FuzzRequestTarget(f *testing.F) {
	for _, s := range []string{
		"CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n",
		"GET http://api.example.com/x HTTP/1.1\r\nHost: evil.example\r\n\r\n",
		"GET http://user:pw@api.example.com/ HTTP/1.1\r\n\r\n",
		"CONNECT [::1]:22 HTTP/1.1\r\n\r\n",
		"GET /relative HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
		"CONNECT api.example.com.evil.net:443 HTTP/1.1\r\n\r\n",
	} {
		f.Add(s)
	}
	allow, err := proxy.NewAllowList([]string{"api.example.com", "*.example.org:443", "[::1]:8080"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			return
		}
		host, port, err := RequestTarget(req)
		if err != nil {
			return
		}
		if host == "" || port < 1 || port > 65535 || strings.ContainsAny(host, " /@[]%?#\\") || host != strings.ToLower(host) {
			t.Fatalf("RequestTarget(%q) = %q %d", raw, host, port)
		}
		if pat, ok := allow.Allows(host, port); ok {
			switch {
			case pat.Wildcard && !strings.HasSuffix(host, ".example.org"):
				t.Fatalf("%q:%d allowed by %v", host, port, pat)
			case !pat.Wildcard && host != pat.Host:
				t.Fatalf("%q:%d allowed by %v", host, port, pat)
			}
		}
	})
}
