package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Latest is the newest MCP revision hermes speaks: the stateless one
// (server/discover instead of initialize, metadata on every request).
const Latest = mcp.LATEST_PROTOCOL_VERSION

// Protocol says which MCP revision a session speaks and why, in words a
// user can act on (hermes mcp test shows both).
type Protocol struct {
	Revision string
	// Why is one line: pinned, remembered, or what negotiation found.
	Why string
	// Source is "pinned" (the protocol key), "remembered" (the state file)
	// or "negotiated".
	Source string
}

// Protocol sources.
const (
	SourcePinned     = "pinned"
	SourceRemembered = "remembered"
	SourceNegotiated = "negotiated"
)

// negotiate brings c up in the newest revision both sides speak, or the
// pinned one. Over one connection it tries, as the specification says a
// client does: the current revision through server/discover (mcp-go falls
// back to initialize when the server does not know it), and a revision the
// server names when it refuses the one asked for. A remembered legacy
// revision skips the discover probe; when the server refuses it, the full
// negotiation runs.
func negotiate(ctx context.Context, c *client.Client, w *watch, srv *config.Server, remembered string) (*mcp.InitializeResult, Protocol, error) {
	p := Protocol{Source: SourceNegotiated}
	want := Latest
	switch {
	case srv.Protocol != "" && srv.Protocol != config.ProtocolAuto:
		want, p.Source = srv.Protocol, SourcePinned
	case remembered != "":
		want, p.Source = remembered, SourceRemembered
	}
	w.mu.Lock()
	w.pingProbe = p.Source == SourceNegotiated
	w.mu.Unlock()
	init, err := initializeAt(ctx, c, want)
	if err != nil && p.Source != SourcePinned && answered(err) {
		// The server refused the revision: try the newest it named, or
		// the full negotiation when it named none.
		next := Latest
		var uv mcp.UnsupportedProtocolVersionError
		if errors.As(err, &uv) {
			next = newestCommon(uv.Supported)
		}
		if next != "" && (next != want || !mcp.IsModernProtocol(want)) {
			first := err
			init, err = initializeAt(ctx, c, next)
			if err == nil && p.Source == SourceRemembered {
				p.Source = SourceNegotiated
				p.Why = fmt.Sprintf("the server no longer speaks the remembered %s (%s); ", want, oneLine(first))
			}
		}
	}
	if err != nil {
		var uv mcp.UnsupportedProtocolVersionError
		switch {
		case errors.As(err, &uv) && p.Source == SourcePinned:
			return nil, p, connectErr(srv.Name, sdk.CodeConfig,
				"MCP server '%s' does not speak the pinned protocol %s; it %s. Set protocol: auto for it in config.yaml",
				srv.Name, want, theirRevisions(uv, want))
		case errors.As(err, &uv):
			return nil, p, noCommonRevision(srv, want, uv)
		}
		return nil, p, err
	}
	p.Revision = c.ProtocolVersion()
	if p.Revision == "" {
		p.Revision = init.ProtocolVersion
	}
	switch p.Source {
	case SourcePinned:
		if p.Revision != want {
			why := ""
			if mcp.IsModernProtocol(want) {
				why = fmt.Sprintf(" (server/discover: %s)", w.probeFailure())
			}
			return nil, p, connectErr(srv.Name, sdk.CodeConfig,
				"MCP server '%s' does not speak the pinned protocol %s%s; it answered with %s. Set protocol: auto (or %s) for it in config.yaml",
				srv.Name, want, why, p.Revision, p.Revision)
		}
		p.Why = "pinned by the protocol key of the server's entry"
	case SourceRemembered:
		p.Why = "remembered from the last connection"
		if !mcp.IsModernProtocol(p.Revision) {
			p.Why += fmt.Sprintf(": the server does not speak %s", Latest)
		}
	default:
		if mcp.IsModernProtocol(p.Revision) {
			p.Why += fmt.Sprintf("the newest both sides speak (server/discover lists %s)", shownList(w.supportedVersions()))
		} else if f := w.probeFailure(); f != "" {
			p.Why += fmt.Sprintf("the server does not speak %s (server/discover: %s); it chose %s in initialize", Latest, f, p.Revision)
		} else {
			p.Why += fmt.Sprintf("the server chose %s in initialize", p.Revision)
		}
	}
	return init, p, nil
}

// initializeAt runs mcp-go's Initialize asking for revision v: the
// discover probe (and initialize on failure) for the current revision, the
// initialize handshake for an older one.
func initializeAt(ctx context.Context, c *client.Client, v string) (*mcp.InitializeResult, error) {
	return c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: v,
		ClientInfo:      mcp.Implementation{Name: "hermes", Version: Version},
	}})
}

// answered reports whether err is the server's JSON-RPC answer (it refused
// something), not a broken connection, a timeout or a cancellation.
func answered(err error) bool {
	var te *mcptransport.Error
	if errors.As(err, &te) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return true
}

// newestCommon returns the newest revision in theirs that hermes speaks,
// or "".
func newestCommon(theirs []string) string {
	for _, v := range config.ProtocolRevisions {
		if slices.Contains(theirs, v) {
			return v
		}
	}
	return ""
}

// noCommonRevision is the error of a negotiation that found no revision
// both sides speak, with both lists.
func noCommonRevision(srv *config.Server, asked string, uv mcp.UnsupportedProtocolVersionError) error {
	return connectErr(srv.Name, sdk.CodeConfig,
		"MCP server '%s' and hermes have no protocol revision in common: the server %s; hermes speaks %s. Update the server or hermes",
		srv.Name, theirRevisions(uv, asked), strings.Join(config.ProtocolRevisions, ", "))
}

// maxShownRevisions bounds the revisions of a server's list shown in a
// message (the list is the server's, of any length).
const maxShownRevisions = 8

// theirRevisions says which revisions the server speaks, from its refusal.
func theirRevisions(uv mcp.UnsupportedProtocolVersionError, asked string) string {
	switch {
	case len(uv.Supported) > 0:
		return "speaks " + shownList(uv.Supported)
	case uv.Version != "" && uv.Version != asked:
		return "answered with " + termsafe.Escape(truncate(uv.Version, 40))
	}
	return "did not say which revisions it speaks"
}

// shownList is a server's list of revisions, escaped and bounded.
func shownList(vs []string) string {
	out := make([]string, 0, min(len(vs), maxShownRevisions)+1)
	for i, v := range vs {
		if i == maxShownRevisions {
			out = append(out, fmt.Sprintf("and %d more", len(vs)-i))
			break
		}
		out = append(out, termsafe.Escape(truncate(v, 40)))
	}
	return strings.Join(out, ", ")
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func oneLine(err error) string {
	return termsafe.Escape(truncate(strings.Join(strings.Fields(err.Error()), " "), 200))
}

// watch sits between mcp-go's client and the plugin connection. It keeps
// the raw tool schemas of tools/list answers (schemas.go), and it watches
// the server/discover probe: it keeps what the server said (for
// Protocol.Why), and turns a result that is not a real discover answer
// into the error it stands for, so that mcp-go falls back to initialize:
// one without supportedVersions (some older servers answer any unknown
// method with an empty result), or one that does not list the revision the
// probe asked for (mcp-go would take it as agreement).
type watch struct {
	mcptransport.Interface

	mu        sync.Mutex
	failure   string
	supported []string
	// retry asks SendRequest to send the probe once more; retried says
	// it was (once per connection).
	retry, retried bool
	// http: the connection is MCP over HTTP.
	http bool
	// pingProbe lets the probe ask a ping whether a stdio server ignores
	// it: only while the revision is negotiated afresh (a first connect),
	// never for a pinned or remembered one, which the server is expected
	// to speak.
	pingProbe bool

	schemas rawSchemas
}

// httpWatch is a watch over an HTTP connection, which also takes
// the negotiated version (mcp-go recognises HTTP by this method).
type httpWatch struct{ *watch }

// SetProtocolVersion passes the version on to the plugin connection.
func (h httpWatch) SetProtocolVersion(v string) {
	h.Interface.(mcptransport.HTTPConnection).SetProtocolVersion(v)
}

// watchProbe wraps tr.
func watchProbe(tr mcptransport.Interface) (mcptransport.Interface, *watch) {
	w := &watch{Interface: tr}
	if _, ok := tr.(mcptransport.HTTPConnection); ok {
		w.http = true
		return httpWatch{w}, w
	}
	return w, w
}

// SetRequestHandler passes the handler of the server's requests on.
func (w *watch) SetRequestHandler(h mcptransport.RequestHandler) {
	if b, ok := w.Interface.(mcptransport.BidirectionalInterface); ok {
		b.SetRequestHandler(h)
	}
}

// RequiresLegacyProtocol passes the connection's answer on.
func (w *watch) RequiresLegacyProtocol() bool {
	l, ok := w.Interface.(interface{ RequiresLegacyProtocol() bool })
	return ok && l.RequiresLegacyProtocol()
}

// SendRequest sends req; a server/discover exchange is checked.
func (w *watch) SendRequest(ctx context.Context, req mcptransport.JSONRPCRequest) (*mcptransport.JSONRPCResponse, error) {
	var resp *mcptransport.JSONRPCResponse
	var err error
	if req.Method == string(mcp.MethodServerDiscover) {
		resp, err = w.probe(ctx, req)
	} else {
		resp, err = w.Interface.SendRequest(ctx, req)
	}
	switch req.Method {
	case string(mcp.MethodToolsList):
		if err == nil && resp.Error == nil {
			w.schemas.keep(resp.Result)
		}
		return resp, err
	case string(mcp.MethodServerDiscover):
		resp, err = w.checkDiscover(ctx, req, resp, err)
		if retry := w.retryVersion(); retry {
			resp, err = w.probe(ctx, req)
			resp, err = w.checkDiscover(ctx, req, resp, err)
		}
		return resp, err
	}
	return resp, err
}

// pingAfter is how long the server/discover probe waits over stdio before
// it asks, with a ping, whether the server is there; pingGrace is how long
// discover still has once the ping was answered.
const (
	pingAfter = 250 * time.Millisecond
	pingGrace = time.Second
)

// pingID is the id of the probe's ping.
const pingID = "hermes-probe-ping"

// errDiscoverIgnored ends a probe the server ignored.
var errDiscoverIgnored = errors.New("the server answered ping but not server/discover (it ignores methods it does not know)")

// probe sends the server/discover probe. Over stdio a server from before
// 2026-07-28 may ignore a method it does not know instead of refusing it,
// which would cost the whole probe bound (5 s) on a first connect: so when
// discover has no answer after pingAfter, a ping (which every revision
// before 2026-07-28 answers, even before initialize) asks whether the
// server is there. When the ping is answered and discover, sent first,
// still is not (within pingGrace, or twice the ping's round trip), the
// server ignored it: the probe ends and the host falls back to initialize,
// about 1.3 s after the probe went out instead of mcp-go's 5 s bound. A
// server that answers neither (still starting) keeps the full bound. Only
// a first connect (nothing pinned or remembered) asks: a server that once
// spoke a revision, or was pinned to it, is given the whole bound. Over HTTP every request has its own answer, and a refusal
// ends the probe by itself.
func (w *watch) probe(ctx context.Context, req mcptransport.JSONRPCRequest) (*mcptransport.JSONRPCResponse, error) {
	w.mu.Lock()
	ping := w.pingProbe
	w.mu.Unlock()
	if w.http || !ping {
		return w.Interface.SendRequest(ctx, req)
	}
	type answer struct {
		resp *mcptransport.JSONRPCResponse
		err  error
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	discover := make(chan answer, 1)
	go func() {
		r, err := w.Interface.SendRequest(pctx, req)
		discover <- answer{r, err}
	}()
	timer := time.NewTimer(pingAfter)
	defer timer.Stop()
	select {
	case a := <-discover:
		return a.resp, a.err
	case <-timer.C:
	}
	pinged := make(chan error, 1)
	sent := time.Now()
	go func() {
		_, err := w.Interface.SendRequest(pctx, mcptransport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(pingID), Method: string(mcp.MethodPing)})
		pinged <- err
	}()
	select {
	case a := <-discover:
		return a.resp, a.err
	case err := <-pinged:
		if err != nil {
			a := <-discover
			return a.resp, a.err
		}
	}
	timer.Reset(max(pingGrace, 2*time.Since(sent)))
	select {
	case a := <-discover:
		return a.resp, a.err
	case <-timer.C:
	}
	cancel()
	<-discover
	return nil, errDiscoverIgnored
}

// checkDiscover checks the answer to a server/discover probe.
func (w *watch) checkDiscover(_ context.Context, req mcptransport.JSONRPCRequest, resp *mcptransport.JSONRPCResponse, err error) (*mcptransport.JSONRPCResponse, error) {
	switch {
	case err != nil:
		w.fail(oneLine(err))
		return resp, err
	case resp.Error != nil:
		w.fail(termsafe.Escape(fmt.Sprintf("%s (%d)", truncate(resp.Error.Message, 200), resp.Error.Code)))
		if asked := requestedVersion(req.Params); resp.Error.Code == mcp.UNSUPPORTED_PROTOCOL_VERSION && asked != "" {
			// A refusal that lists the very revision asked for (a server
			// that was not ready, or wants the request re-sent): the
			// specification's client retries with a supported revision,
			// which this one is; once.
			var uv mcp.UnsupportedProtocolVersionError
			if errors.As(resp.Error.AsError(), &uv) && slices.Contains(uv.Supported, asked) {
				w.mu.Lock()
				if !w.retried {
					w.retried, w.retry = true, true
				}
				w.mu.Unlock()
			}
		}
		return resp, nil
	}
	var result struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(resp.Result, &result) != nil || len(result.SupportedVersions) == 0 {
		w.fail("the answer lists no supportedVersions")
		return &mcptransport.JSONRPCResponse{JSONRPC: resp.JSONRPC, ID: resp.ID, Error: &mcp.JSONRPCErrorDetails{
			Code: mcp.METHOD_NOT_FOUND, Message: "server/discover answered without supportedVersions"}}, nil
	}
	if asked := requestedVersion(req.Params); asked != "" && !slices.Contains(result.SupportedVersions, asked) {
		w.fail("it lists " + shownList(result.SupportedVersions))
		e := mcp.UnsupportedProtocolVersionError{Version: asked, Supported: result.SupportedVersions}.JSONRPCError()
		return &mcptransport.JSONRPCResponse{JSONRPC: resp.JSONRPC, ID: resp.ID, Error: &e.Error}, nil
	}
	w.mu.Lock()
	w.failure, w.supported = "", result.SupportedVersions
	w.mu.Unlock()
	return resp, nil
}

// retryVersion reports, once, that the probe should be re-sent.
func (w *watch) retryVersion() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.retry
	w.retry = false
	return r
}

func (w *watch) fail(why string) {
	w.mu.Lock()
	w.failure = why
	w.mu.Unlock()
}

// probeFailure says why the last discover probe failed, or "".
func (w *watch) probeFailure() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failure
}

// supportedVersions returns what the server's discover answer listed.
func (w *watch) supportedVersions() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.supported)
}

// requestedVersion returns the protocol version a request's _meta
// declares, or "".
func requestedVersion(params any) string {
	b, err := json.Marshal(params)
	if err != nil {
		return ""
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	var v string
	_ = json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v
}

// listenBackoff bounds the wait before the stream of notifications is
// opened again after it ended.
var listenBackoff = [2]time.Duration{time.Second, 30 * time.Second}

// Listen opens, on the 2026-07-28 revision, the stream of the server's
// list_changed notifications (subscriptions/listen) for the lists whose
// capability says they change, and keeps it open (again after a backoff
// when it ends) until the session ends; the notifications reach
// Deps.OnNotification as on older revisions, where they need no
// subscription and Listen does nothing. onEnd, when not nil, hears why a
// stream ended (for the log).
func (s *Session) Listen(onEnd func(error)) {
	if !mcp.IsModernProtocol(s.Protocol.Revision) || s.Init == nil {
		return
	}
	caps := s.Init.Capabilities
	filter := mcp.SubscriptionFilter{
		ToolsListChanged:     caps.Tools != nil && caps.Tools.ListChanged,
		PromptsListChanged:   caps.Prompts != nil && caps.Prompts.ListChanged,
		ResourcesListChanged: caps.Resources != nil && caps.Resources.ListChanged,
	}
	if filter.IsEmpty() {
		return
	}
	s.listenOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopListen = cancel
		go func() {
			wait := listenBackoff[0]
			for {
				start := time.Now()
				err := s.Client.Listen(ctx, filter)
				select {
				case <-ctx.Done():
					return
				case <-s.conn.Done():
					return
				default:
				}
				if onEnd != nil {
					onEnd(err)
				}
				if time.Since(start) > listenBackoff[1] {
					wait = listenBackoff[0]
				}
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return
				case <-s.conn.Done():
					return
				}
				wait = min(2*wait, listenBackoff[1])
			}
		}()
	})
}

// stopListening ends the stream Listen opened, if any.
func (s *Session) stopListening() {
	s.listenOnce.Do(func() {})
	if s.stopListen != nil {
		s.stopListen()
	}
}
