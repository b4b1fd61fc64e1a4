package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/server"
)

// EndpointPath is the path of the MCP endpoint on the HTTP server.
const EndpointPath = "/mcp"

// SessionIdleTTL ends an HTTP session no request touched for this long.
const SessionIdleTTL = time.Hour

// HTTPOptions configure the HTTP server.
type HTTPOptions struct {
	// Addr is host:port to listen on; port 0 picks a free port.
	Addr string
	// Token is the bearer token every request must carry.
	Token string
	// AllowRemote permits a non-loopback Addr and Host headers that are not
	// loopback names. Origin headers must still be loopback origins.
	AllowRemote bool
	// MaxRequestBytes bounds one request body (mcp_serve.max_request_mb).
	MaxRequestBytes int64
	// Logger receives refused requests (never the token).
	Logger hclog.Logger
}

// NonLoopbackError refuses a listening address that is not loopback
// without AllowRemote.
type NonLoopbackError struct{ Addr string }

func (e *NonLoopbackError) Error() string {
	return fmt.Sprintf("%s is not a loopback address: other machines could reach the server; use 127.0.0.1:PORT, or add --allow-remote if you mean it", e.Addr)
}

// Listen opens the listener o.Addr names, refusing a non-loopback address
// unless o.AllowRemote.
func Listen(o HTTPOptions) (net.Listener, error) {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8765", o.Addr)
	}
	if !o.AllowRemote && !isLoopbackHost(host) {
		return nil, &NonLoopbackError{Addr: o.Addr}
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w; pick another port", o.Addr, err)
	}
	return ln, nil
}

// URL returns the endpoint's URL on ln.
func URL(ln net.Listener) string {
	return "http://" + ln.Addr().String() + EndpointPath
}

// Handler returns the HTTP handler of s: the streamable HTTP endpoint at
// EndpointPath behind the Origin, Host and bearer token checks.
func Handler(s *server.MCPServer, o HTTPOptions) http.Handler {
	h, _ := newHandler(s, o)
	return h
}

// newHandler is Handler, with the mcp-go server behind it, whose session
// sweeper the caller stops (Shutdown) when it is done serving.
func newHandler(s *server.MCPServer, o HTTPOptions) (http.Handler, *server.StreamableHTTPServer) {
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	mcpHandler := server.NewStreamableHTTPServer(s,
		server.WithEndpointPath(EndpointPath),
		server.WithDisableLocalhostProtection(o.AllowRemote),
		// Sessions are known, ended ones refused, both bounded; a session
		// idle for SessionIdleTTL ends.
		server.WithSessionIdManager(newSessionIDs()),
		server.WithSessionIdleTTL(SessionIdleTTL),
	)
	want := []byte("Bearer " + o.Token)
	limit := o.MaxRequestBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
			log.Warn("refused a request from a foreign origin", "origin", origin, "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: requests from web pages of other origins are refused", http.StatusForbidden)
			return
		}
		if !o.AllowRemote && !isLoopbackHost(hostOnly(r.Host)) {
			log.Warn("refused a request with a foreign Host header", "host", r.Host, "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: the Host header must name a loopback address", http.StatusForbidden)
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if o.Token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			log.Warn("refused a request without the right bearer token", "remote", r.RemoteAddr, "had_authorization", len(got) > 0)
			w.Header().Set("WWW-Authenticate", `Bearer realm="hermes mcp serve"`)
			http.Error(w, "Unauthorized: send Authorization: Bearer <HERMES_MCP_SERVE_TOKEN from $HERMES_HOME/.env>", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != EndpointPath {
			http.NotFound(w, r)
			return
		}
		if limit > 0 {
			if r.ContentLength > limit {
				http.Error(w, RequestTooLargeMessage(limit), http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		mcpHandler.ServeHTTP(w, r)
	}), mcpHandler
}

// ServeHTTP serves s on ln until ctx ends, then shuts down within a few
// seconds.
func ServeHTTP(ctx context.Context, s *server.MCPServer, ln net.Listener, o HTTPOptions) error {
	h, mcpHandler := newHandler(s, o)
	defer func() {
		end, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = mcpHandler.Shutdown(end) // its sessions and their sweeper
	}()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	end, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(end); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// hostOnly strips the port of a Host header.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// isLoopbackHost reports whether host (no port; brackets allowed) names a
// loopback address.
func isLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// loopbackOrigin reports whether an Origin header names a page served
// from a loopback address.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackHost(u.Hostname())
}
