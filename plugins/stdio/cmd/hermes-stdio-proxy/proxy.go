package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/proxy"
)

// Bounds of what a client (the sandboxed server) can make the proxy hold.
const (
	// MaxHeaderBytes bounds a request's line and headers.
	MaxHeaderBytes = 32 << 10
	// HeaderTimeout bounds reading a request's headers.
	HeaderTimeout = 10 * time.Second
	// DialTimeout bounds resolving and connecting to a host.
	DialTimeout = 15 * time.Second
	// IdleTimeout closes a kept-alive client connection with no request.
	IdleTimeout = 2 * time.Minute
	// MaxConns bounds the client connections served at once.
	MaxConns = 256
)

// Proxy is one server's filtering proxy.
type Proxy struct {
	allow proxy.AllowList
	log   hclog.Logger
	srv   *http.Server
	rp    *httputil.ReverseProxy
	// resolve looks host names up (the system's resolver by default).
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	// report is told each distinct target turned away because no entry
	// of the allow-list names it, the first proxy.MaxRefused of them,
	// before the client hears of it.
	report func(target string)

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
	closed  bool
	// refused are the distinct targets turned away so far.
	refused []string
}

// noteRefused reports target once, among the first proxy.MaxRefused.
func (p *Proxy) noteRefused(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.refused) >= proxy.MaxRefused || slices.Contains(p.refused, target) {
		return
	}
	p.refused = append(p.refused, target)
	p.report(target)
}

// New returns a proxy for allow that logs to log (nil for none) and tells
// report (nil for no one) each target it turns away.
func New(allow proxy.AllowList, logger hclog.Logger, report func(target string)) *Proxy {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if report == nil {
		report = func(string) {}
	}
	p := &Proxy{allow: allow, log: logger, report: report, tunnels: map[net.Conn]struct{}{}}
	p.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dial,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    DialTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.Host = pr.Out.URL.Host
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "hermes sandbox proxy: cannot reach "+strconv.QuoteToASCII(clip(r.URL.Host, 200))+": "+clip(err.Error(), 300), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: HeaderTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		IdleTimeout:       IdleTimeout,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	return p
}

// Serve serves clients from ln until Close; it returns http.ErrServerClosed
// then.
func (p *Proxy) Serve(ln net.Listener) error {
	return p.srv.Serve(&limitListener{Listener: ln, sem: make(chan struct{}, MaxConns)})
}

// Close stops the proxy: its listeners, requests and tunnels end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.mu.Unlock()
	return p.srv.Close()
}

// ServeHTTP handles one request from the server.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, port, err := RequestTarget(r)
	if err != nil {
		p.log.Debug("proxy: bad request", "method", quote(r.Method), "target", quote(r.RequestURI), "error", err.Error())
		http.Error(w, "hermes sandbox proxy: "+err.Error(), http.StatusBadRequest)
		return
	}
	target := net.JoinHostPort(host, strconv.Itoa(port))
	if _, ok := p.allow.Allows(host, port); !ok {
		p.log.Debug("proxy: refused", "method", quote(r.Method), "target", quote(target))
		p.noteRefused(target)
		http.Error(w, "hermes sandbox proxy: "+strconv.QuoteToASCII(clip(target, 260))+" is not in this server's network allow-list (sandbox.network in config.yaml)", http.StatusForbidden)
		return
	}
	p.log.Debug("proxy: allowed", "method", quote(r.Method), "target", quote(target))
	if r.Method == http.MethodConnect {
		p.tunnel(w, r, target)
		return
	}
	p.rp.ServeHTTP(w, r)
}

// RequestTarget returns the host and port a proxy request is for: the
// authority of a CONNECT, or the host of an absolute-form http:// URL
// (port 80 unless given). Any other request is an error.
func RequestTarget(r *http.Request) (string, int, error) {
	if r.Method == http.MethodConnect {
		host, port, err := proxy.SplitTarget(r.Host, 0)
		if err != nil {
			return "", 0, fmt.Errorf("CONNECT %s: %v", strconv.QuoteToASCII(clip(r.Host, 100)), err)
		}
		if port == 0 {
			return "", 0, fmt.Errorf("CONNECT %s: no port", strconv.QuoteToASCII(clip(r.Host, 100)))
		}
		return host, port, nil
	}
	if r.URL == nil || !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		return "", 0, errors.New("this is a proxy: send CONNECT or an absolute http:// URL")
	}
	if r.URL.User != nil {
		return "", 0, errors.New("user information in the URL is refused")
	}
	host, port, err := proxy.SplitTarget(r.URL.Host, 80)
	if err != nil {
		return "", 0, fmt.Errorf("URL host %s: %v", strconv.QuoteToASCII(clip(r.URL.Host, 100)), err)
	}
	return host, port, nil
}

// tunnel connects a CONNECT client to target and moves bytes both ways
// until either side ends.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request, target string) {
	ctx, cancel := context.WithTimeout(r.Context(), DialTimeout)
	up, err := p.dial(ctx, "tcp", target)
	cancel()
	if err != nil {
		p.log.Debug("proxy: cannot connect", "target", quote(target), "error", err.Error())
		http.Error(w, "hermes sandbox proxy: cannot reach "+strconv.QuoteToASCII(target)+": "+clip(err.Error(), 300), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "hermes sandbox proxy: cannot tunnel here", http.StatusInternalServerError)
		return
	}
	client, rw, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if !p.track(client, up) {
		_ = client.Close()
		_ = up.Close()
		return
	}
	defer p.untrack(client, up)
	_ = client.SetDeadline(time.Time{})
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// Bytes the client sent after its CONNECT are already buffered.
	if n := rw.Reader.Buffered(); n > 0 {
		b, _ := rw.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, client); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, up); closeWrite(client); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	for _, c := range conns {
		delete(p.tunnels, c)
		_ = c.Close()
	}
	p.mu.Unlock()
}

// dial connects to an allowed addr ("host:port"), refusing addresses the
// entry did not name (see the package comment).
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := proxy.SplitTarget(addr, 0)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("bad address %s", strconv.QuoteToASCII(clip(addr, 100)))
	}
	pat, ok := p.allow.Allows(host, port)
	if !ok {
		return nil, fmt.Errorf("%s is not allowed", strconv.QuoteToASCII(addr))
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if addrs, err = p.resolve(ctx, host); err != nil {
			return nil, err
		}
	}
	var d net.Dialer
	var last error = errors.New("no address")
	for _, a := range addrs {
		a = a.Unmap()
		if local(a) && !pat.IP && pat.Host != "localhost" {
			last = fmt.Errorf("%s resolves to the local address %s, which only an allow-list entry naming that address may reach", host, a)
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), strconv.Itoa(port)))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// local reports whether a is an address of this machine or its link.
func local(a netip.Addr) bool {
	return a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast()
}

// quote escapes a client-sent string for the log.
func quote(s string) string { return strconv.QuoteToASCII(clip(s, 200)) }

// limitListener serves at most cap(sem) connections at once.
type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes a TCP connection, for tunnels.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// clip bounds a string from a client before it is shown.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
