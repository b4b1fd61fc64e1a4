package testserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Main runs the hermes-testserver binary with the given arguments and
// returns its exit status. Flags also come from the EnvFlags variable.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := ParseConfig(args, os.Getenv(EnvFlags), stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "hermes-testserver: %v\n", err)
		return 2
	}
	switch {
	case cfg.daemonFork != "":
		return daemonFork(cfg.daemonFork)
	case cfg.daemonRun != "":
		return daemonRun(cfg.daemonRun)
	}
	if cfg.FailStart != "" {
		fmt.Fprintln(stderr, cfg.FailStart)
		return 1
	}
	if cfg.Daemon != "" {
		if err := startDaemon(cfg.Daemon); err != nil {
			fmt.Fprintf(stderr, "hermes-testserver: --daemon: %v\n", err)
			return 1
		}
	}
	stopOn := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if cfg.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
		stopOn = stopOn[:1]
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopOn...)
	defer stop()
	if err := Run(ctx, cfg, stdin, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "hermes-testserver: %v\n", err)
		return 1
	}
	if cfg.Linger {
		<-ctx.Done()
	}
	return 0
}

// Run serves cfg until ctx ends or, over stdio, until stdin closes.
func Run(ctx context.Context, cfg *Config, stdin io.Reader, stdout, stderr io.Writer) error {
	if cfg.Server.Stderr == nil {
		cfg.Server.Stderr = stderr
	}
	if cfg.StderrNoise {
		go writeNoise(ctx, stderr)
	}
	if cfg.SlowStart > 0 {
		select {
		case <-time.After(cfg.SlowStart):
		case <-ctx.Done():
			return nil
		}
	}
	if cfg.HTTPAddr == "" && cfg.SSEAddr == "" {
		return runStdio(ctx, cfg, stdin, stdout, stderr)
	}
	return runHTTP(ctx, cfg, stdout, stderr)
}

// writeNoise writes a line to w every 10 ms until ctx ends.
func writeNoise(ctx context.Context, w io.Writer) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for i := 1; ; i++ {
		fmt.Fprintf(w, "hermes-testserver background noise %d: lorem ipsum dolor sit amet\n", i)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func runStdio(ctx context.Context, cfg *Config, stdin io.Reader, stdout, stderr io.Writer) error {
	switch {
	case cfg.Hostile.Active():
		return runHostileStdio(ctx, cfg, stdin, stdout)
	case cfg.Garbage:
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(stdout, "garbage line %d: this is not JSON-RPC <html>\n", i)
		}
		_, _ = io.Copy(io.Discard, stdin)
		return nil
	case cfg.HangInitialize:
		_, _ = io.Copy(io.Discard, stdin)
		return nil
	}
	if cfg.Banner {
		fmt.Fprintln(stdout, "hermes-testserver starting (a banner some servers print)")
	}
	srv := New(cfg.Server)
	stdio := server.NewStdioServer(srv)
	stdio.SetErrorLogger(log.New(stderr, "hermes-testserver: ", log.LstdFlags))
	var err error
	if cfg.Protocols != nil {
		versions := cfg.Protocols
		stdio.SetContextFunc(func(ctx context.Context) context.Context {
			return server.WithSupportedProtocolVersions(ctx, versions)
		})
		vf := newVersionFilter(versions)
		vf.discover = cfg.Discover
		vf.pingError = cfg.PingError
		if cfg.Server.Trace {
			vf.onDiscover = func() { fmt.Fprintln(stderr, TraceDiscover) }
			vf.onPing = func() { fmt.Fprintln(stderr, TracePing) }
		}
		err = vf.listenFiltered(ctx, stdio, stdin, stdout)
	} else {
		err = stdio.Listen(ctx, stdin, stdout)
	}
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, context.Canceled)) {
		return nil
	}
	return err
}

func runHTTP(ctx context.Context, cfg *Config, stdout, stderr io.Writer) error {
	var handler http.Handler
	if cfg.Hostile.Active() {
		handler = hostileHandler(cfg)
	} else {
		if cfg.SessionTTL > 0 && cfg.sessions == nil {
			cfg.sessions = newExpiringSessions(cfg.SessionTTL)
			cfg.Server.ExpireSessions = cfg.sessions.expireAll
		}
		handler = Handler(cfg, New(cfg.Server), stderr)
	}

	addr := cfg.HTTPAddr
	if addr == "" {
		addr = cfg.SSEAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(stderr, "hermes-testserver http: ", log.LstdFlags),
	}
	scheme := "http"
	if cfg.TLSCert != "" {
		tc, err := ServerTLSConfig(cfg.TLSCert, cfg.TLSKey, cfg.ClientCA)
		if err != nil {
			ln.Close()
			return err
		}
		hs.TLSConfig = tc
		ln = tls.NewListener(ln, tc)
		scheme = "https"
	}
	port := ln.Addr().(*net.TCPAddr).Port
	fmt.Fprintf(stdout, "listening on %s://127.0.0.1:%d\n", scheme, port)

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	return nil
}

// ServerTLSConfig loads a server certificate and, when clientCA is set,
// requires client certificates signed by it.
func ServerTLSConfig(certFile, keyFile, clientCA string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading TLS key pair: %w", err)
	}
	tc := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"h2", "http/1.1"},
	}
	if clientCA != "" {
		pem, err := os.ReadFile(clientCA)
		if err != nil {
			return nil, fmt.Errorf("reading client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client CA %s holds no PEM certificate", clientCA)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// Handler builds the HTTP handler of the binary: the streamable HTTP
// transport at /mcp (behind the --protocols filter when cfg.Protocols is
// set), or, with cfg.SSEAddr, the SSE transport at /sse and /message,
// wrapped in the HTTP faults cfg selects. Logs go to logw.
func Handler(cfg *Config, srv *server.MCPServer, logw io.Writer) http.Handler {
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	recordAuth := func(ctx context.Context, r *http.Request) context.Context {
		return ContextWithAuthorization(ctx, r.Header.Get("Authorization"))
	}
	mux := http.NewServeMux()
	if cfg.HTTPAddr == "" {
		sse := server.NewSSEServer(srv, server.WithSSEContextFunc(recordAuth))
		mux.Handle("/sse", sse)
		mux.Handle("/message", sse)
		return mux
	}
	opts := []server.StreamableHTTPOption{
		server.WithHTTPContextFunc(recordAuth),
		server.WithStreamableHTTPLogger(logger),
	}
	if cfg.SessionTTL > 0 {
		if cfg.sessions == nil {
			cfg.sessions = newExpiringSessions(cfg.SessionTTL)
		}
		opts = append(opts, server.WithSessionIdManager(cfg.sessions))
	}
	var mcpHandler http.Handler
	if cfg.Protocols != nil {
		opts = append(opts, server.WithStreamableHTTPProtocolVersions(cfg.Protocols...))
		vf := newVersionFilter(cfg.Protocols)
		vf.discover = cfg.Discover
		if cfg.Server.Trace {
			vf.onDiscover = func() { fmt.Fprintln(cfg.Server.Stderr, TraceDiscover) }
		}
		mcpHandler = vf.handler(server.NewStreamableHTTPServer(srv, opts...))
	} else {
		mcpHandler = server.NewStreamableHTTPServer(srv, opts...)
	}
	mux.Handle(MCPPath, mcpHandler)
	if cfg.RequireBearer != "" {
		mux.HandleFunc(ProtectedResourcePath, servePRM)
	}
	if cfg.OAuthIssuer != "" {
		if cfg.oauth == nil {
			cfg.oauth = newResourceServer(cfg)
		}
		mux.HandleFunc(ProtectedResourcePath, cfg.oauth.servePRM)
	}
	return faults(cfg, mux)
}

// MCPPath is the streamable HTTP endpoint path.
const MCPPath = "/mcp"

// ProtectedResourcePath is where --require-bearer and --oauth-issuer serve
// the OAuth protected resource metadata (RFC 9728) of MCPPath, named by the
// WWW-Authenticate challenge.
const ProtectedResourcePath = "/.well-known/oauth-protected-resource/mcp"
