package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ParseProtocols parses the value of --protocols: MCP protocol revisions
// separated by commas. It returns them newest first without duplicates, or
// nil for an empty value (every revision mcp-go knows). An unknown revision
// is an error naming the valid ones.
func ParseProtocols(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	listed := map[string]bool{}
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if !mcp.IsValidProtocolVersion(v) {
			return nil, fmt.Errorf("--protocols %q: unknown revision %q; valid revisions are %s",
				s, v, strings.Join(mcp.ValidProtocolVersions, ", "))
		}
		listed[v] = true
	}
	var out []string
	for _, v := range mcp.ValidProtocolVersions {
		if listed[v] {
			out = append(out, v)
		}
	}
	return out, nil
}

// versionFilter restricts the server to the revisions of --protocols. mcp-go
// cannot refuse a request with a code of our choosing from a hook, so the
// filter sits in front of it, reads each message from the client, and either
// answers it itself or passes it on (initialize possibly rewritten).
type versionFilter struct {
	supported []string // every listed revision, newest first
	modern    bool     // 2026-07-28 is listed: server/discover is served
	legacy    []string // the listed revisions served through initialize, newest first
	// onDiscover, when set, is called for each server/discover the filter
	// refuses itself (mcp-go's hook traces the ones it serves).
	onDiscover func()
	// discover is Config.Discover.
	discover string
	// pingError, when set, is the message of the JSON-RPC error -32000
	// every ping is answered with; onPing is called for each.
	pingError string
	onPing    func()
}

// Values of --discover.
const (
	DiscoverIgnore = "ignore"
	DiscoverNullID = "null-id"
)

func newVersionFilter(versions []string) *versionFilter {
	f := &versionFilter{supported: versions}
	for _, v := range versions {
		if mcp.IsModernProtocol(v) {
			f.modern = true
		} else {
			f.legacy = append(f.legacy, v)
		}
	}
	return f
}

// refusal is the answer the filter gives in mcp-go's stead: a JSON-RPC
// error response and, over HTTP, its status.
type refusal struct {
	body   []byte
	status int
}

// filter inspects one message from the client. It returns a refusal to
// answer with, or else the message to pass on to mcp-go: msg itself, or an
// initialize request whose protocolVersion was replaced by the revision this
// server picks.
func (f *versionFilter) filter(msg []byte) ([]byte, *refusal) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		// Not a request (a notification, a response, a batch or not
		// JSON): mcp-go deals with it.
		return msg, nil
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		Meta            struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p) // fields of the wrong shape stay empty
	declared := p.Meta.ProtocolVersion

	switch {
	case m.Method == string(mcp.MethodPing) && f.pingError != "":
		if f.onPing != nil {
			f.onPing()
		}
		return nil, &refusal{errorBody(m.ID, mcp.JSONRPCErrorDetails{Code: -32000, Message: f.pingError}), http.StatusOK}
	case m.Method == string(mcp.MethodServerDiscover) && !f.modern:
		// A server from before 2026-07-28 knows no such method.
		if f.onDiscover != nil {
			f.onDiscover()
		}
		switch f.discover {
		case DiscoverIgnore:
			return nil, &refusal{}
		case DiscoverNullID:
			return nil, &refusal{errorBody(json.RawMessage("null"), mcp.JSONRPCErrorDetails{Code: -32000, Message: "Bad Request: Server not initialized"}), http.StatusBadRequest}
		}
		return nil, &refusal{errorBody(m.ID, mcp.JSONRPCErrorDetails{Code: mcp.METHOD_NOT_FOUND, Message: "Method not found"}), http.StatusOK}
	case mcp.IsModernProtocol(declared) && !slices.Contains(f.supported, declared):
		return nil, f.unsupported(m.ID, declared)
	case m.Method == string(mcp.MethodInitialize) && !mcp.IsModernProtocol(declared):
		if len(f.legacy) == 0 {
			return nil, f.unsupported(m.ID, p.ProtocolVersion)
		}
		if pick := f.negotiate(p.ProtocolVersion); pick != p.ProtocolVersion {
			if out, ok := setParam(msg, "protocolVersion", pick); ok {
				return out, nil
			}
		}
	}
	return msg, nil
}

// negotiate is the revision initialize answers to a client asking for
// requested: requested itself when listed, else the newest listed legacy
// revision. An empty request means 2025-03-26, as in mcp-go.
func (f *versionFilter) negotiate(requested string) string {
	if requested == "" {
		requested = mcp.ProtocolVersion20250326
	}
	if slices.Contains(f.legacy, requested) {
		return requested
	}
	return f.legacy[0]
}

// unsupported refuses a request for a revision this server does not speak,
// the way mcp-go does: UNSUPPORTED_PROTOCOL_VERSION naming the supported
// revisions, HTTP status 400.
func (f *versionFilter) unsupported(id json.RawMessage, requested string) *refusal {
	e := mcp.UnsupportedProtocolVersionError{Version: requested, Supported: f.supported}.JSONRPCError()
	return &refusal{errorBody(id, e.Error), http.StatusBadRequest}
}

// errorBody is a JSON-RPC error response to the request id (kept verbatim).
func errorBody(id json.RawMessage, e mcp.JSONRPCErrorDetails) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string                  `json:"jsonrpc"`
		ID      json.RawMessage         `json:"id"`
		Error   mcp.JSONRPCErrorDetails `json:"error"`
	}{mcp.JSONRPC_VERSION, id, e})
	return b
}

// setParam returns msg with params[key] set to value, compacted to one line.
func setParam(msg []byte, key, value string) ([]byte, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(msg, &top) != nil {
		return msg, false
	}
	params := map[string]json.RawMessage{}
	if raw, ok := top["params"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &params) != nil {
			return msg, false
		}
	}
	params[key], _ = json.Marshal(value)
	var err error
	if top["params"], err = json.Marshal(params); err != nil {
		return msg, false
	}
	out, err := json.Marshal(top)
	return out, err == nil
}

// maxFilteredBody is the largest POST body the HTTP filter reads; larger
// ones go to mcp-go unfiltered.
const maxFilteredBody = 64 << 20

// handler puts the filter in front of mcp-go's streamable HTTP transport:
// it reads each POST body, answers refused requests itself (JSON-RPC error
// as application/json), and restores the body, possibly rewritten, for next.
// A request after initialize whose Mcp-Protocol-Version header names an
// unlisted revision gets the plain 400 mcp-go gives an unknown one.
func (f *versionFilter) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxFilteredBody+1))
		if err != nil {
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(body) > maxFilteredBody {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			next.ServeHTTP(w, r)
			return
		}
		pass, refused := f.filter(body)
		if refused != nil && refused.body == nil {
			<-r.Context().Done() // ignored: no answer
			return
		}
		if refused != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(refused.status)
			_, _ = w.Write(append(refused.body, '\n'))
			return
		}
		if v := r.Header.Get(mcp.HeaderProtocolVersion); v != "" && !mcp.IsModernProtocol(v) &&
			mcp.IsValidProtocolVersion(v) && !slices.Contains(f.supported, v) && !isInitialize(pass) {
			http.Error(w, "Unsupported protocol version: "+v, http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(pass))
		r.ContentLength = int64(len(pass))
		r.Header.Del("Content-Length")
		next.ServeHTTP(w, r)
	})
}

func isInitialize(msg []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == string(mcp.MethodInitialize)
}

// listenFiltered serves stdio through the filter: it reads stdin line by
// line, writes refusals to stdout itself and passes the other lines to
// mcp-go's Listen through a pipe. Both write to stdout one message per
// Write, serialised by a lock.
func (f *versionFilter) listenFiltered(ctx context.Context, stdio *server.StdioServer, stdin io.Reader, stdout io.Writer) error {
	out := &lockedWriter{w: stdout}
	pr, pw := io.Pipe()
	go func() {
		in := bufio.NewReader(stdin)
		for {
			line, err := in.ReadBytes('\n')
			if msg := bytes.TrimRight(line, "\r\n"); len(msg) > 0 {
				pass, refused := f.filter(msg)
				var werr error
				switch {
				case refused != nil && refused.body == nil:
					// ignored: no answer
				case refused != nil:
					_, werr = out.Write(append(refused.body, '\n'))
				default:
					_, werr = pw.Write(append(pass, '\n'))
				}
				if werr != nil {
					pw.CloseWithError(werr)
					return
				}
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				pw.CloseWithError(err) // nil: mcp-go reads EOF
				return
			}
		}
	}()
	err := stdio.Listen(ctx, pr, out)
	pr.Close() // unblock the reader goroutine's next pass-on
	return err
}

// lockedWriter serialises Writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
