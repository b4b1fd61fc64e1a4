package testserver

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// htmlPage is what --html-root and --html-only serve.
const htmlPage = "<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><h1>This is a web page, not an MCP server</h1></body></html>\n"

func writeHTML(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, htmlPage)
}

// faults wraps next in the HTTP faults selected by cfg. The outermost fault
// wins: html-only, redirect-to, require-bearer or oauth-issuer, status-on,
// html-root, hang-initialize, garbage, cut-stream.
func faults(cfg *Config, next http.Handler) http.Handler {
	h := next
	if cfg.CutStream {
		h = cutStream(h)
	}
	if cfg.Garbage {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				inner.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "this is not JSON {{{\n")
		})
	}
	if cfg.HangInitialize {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				if m, _ := peekCall(r); m == "initialize" || m == "server/discover" {
					<-r.Context().Done()
					return
				}
			}
			inner.ServeHTTP(w, r)
		})
	}
	if cfg.HTMLRoot {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.URL.Path == "/" || r.URL.Path == MCPPath) {
				writeHTML(w)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	if cfg.StatusOnNth > 0 {
		inner := h
		var posts atomic.Int64
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && posts.Add(1) >= int64(cfg.StatusOnNth) {
				http.Error(w, fmt.Sprintf("injected HTTP status %d", cfg.StatusCode), cfg.StatusCode)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	if cfg.RequireBearer != "" {
		inner := h
		want := "Bearer " + cfg.RequireBearer
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != ProtectedResourcePath && r.Header.Get("Authorization") != want {
				if cfg.PlainChallenge {
					w.Header().Set("WWW-Authenticate", `Bearer realm="hermes-testserver"`)
				} else {
					w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer resource_metadata=%q", baseURL(r)+ProtectedResourcePath))
				}
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	if cfg.oauth != nil {
		h = cfg.oauth.protect(h)
	}
	if cfg.RedirectTo != "" {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, cfg.RedirectTo, http.StatusTemporaryRedirect)
		})
	}
	if cfg.HTMLOnly {
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeHTML(w) })
	}
	return h
}

// baseURL is the scheme and host the request was addressed to.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// servePRM serves minimal OAuth protected resource metadata for /mcp.
func servePRM(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"resource":                 baseURL(r) + MCPPath,
		"bearer_methods_supported": []string{"header"},
	})
}

// peekCall reads a POST body, puts it back, and returns the JSON-RPC method
// and, for tools/call, the tool name.
func peekCall(r *http.Request) (method, tool string) {
	if r.Body == nil {
		return "", ""
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return "", ""
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return "", ""
	}
	return msg.Method, msg.Params.Name
}

// errStreamCut is returned for writes after --cut-stream cut a response.
var errStreamCut = errors.New("response stream cut on purpose")

// cutStream cuts the response of slow_stream calls right after the first
// SSE event was flushed: HTTP/1 connections are hijacked and closed; other
// responses are aborted when the handler returns.
func cutStream(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if m, tool := peekCall(r); m != "tools/call" || tool != "slow_stream" {
			next.ServeHTTP(w, r)
			return
		}
		cw := &cutWriter{rw: w}
		next.ServeHTTP(cw, r)
		cw.mu.Lock()
		cw.served = true
		aborted := cw.cut && !cw.hijacked
		cw.mu.Unlock()
		if aborted {
			panic(http.ErrAbortHandler)
		}
	})
}

// cutWriter passes writes through until an SSE event has been flushed, then
// cuts the connection and swallows everything else.
type cutWriter struct {
	rw       http.ResponseWriter
	mu       sync.Mutex
	event    bool // an SSE event was written
	cut      bool
	hijacked bool
	served   bool // the handler returned; Hijack is no longer allowed
}

func (c *cutWriter) Header() http.Header { return c.rw.Header() }

func (c *cutWriter) WriteHeader(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.cut {
		c.rw.WriteHeader(code)
	}
}

func (c *cutWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return 0, errStreamCut
	}
	if strings.HasPrefix(c.rw.Header().Get("Content-Type"), "text/event-stream") {
		c.event = true
	}
	return c.rw.Write(p)
}

func (c *cutWriter) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return
	}
	if f, ok := c.rw.(http.Flusher); ok {
		f.Flush()
	}
	if !c.event || c.served {
		return
	}
	c.cut = true
	if hj, ok := c.rw.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			c.hijacked = true
		}
	}
}

// expiringSessions is a session ID manager whose sessions end a fixed time
// after initialize; later requests for them get 404, as from a restarted
// server.
type expiringSessions struct {
	ttl      time.Duration
	mu       sync.Mutex
	sessions map[string]time.Time // session ID -> creation time
}

func newExpiringSessions(ttl time.Duration) *expiringSessions {
	return &expiringSessions{ttl: ttl, sessions: map[string]time.Time{}}
}

// Generate mints a new session ID.
func (e *expiringSessions) Generate() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "mcp-session-" + hex.EncodeToString(b[:])
	e.mu.Lock()
	e.sessions[id] = time.Now()
	e.mu.Unlock()
	return id
}

// Validate reports unknown sessions as errors and expired ones as
// terminated; both become 404.
func (e *expiringSessions) Validate(id string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	created, ok := e.sessions[id]
	if !ok {
		return false, fmt.Errorf("session not found: %s", id)
	}
	if time.Since(created) >= e.ttl {
		return true, nil
	}
	return false, nil
}

// expireAll ends every session now (the expire_sessions tool).
func (e *expiringSessions) expireAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for id := range e.sessions {
		e.sessions[id] = time.Time{}
	}
}

// Terminate forgets a session.
func (e *expiringSessions) Terminate(id string) (bool, error) {
	e.mu.Lock()
	delete(e.sessions, id)
	e.mu.Unlock()
	return false, nil
}
