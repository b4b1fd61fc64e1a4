package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// legacySSE is the state of the HTTP+SSE transport of 2024-11-05: one
// event stream (GET) brings every message of the server, and the first
// event names the endpoint messages are POSTed to.
type legacySSE struct {
	endpoint   *url.URL
	endpointCh chan struct{} // closed once the endpoint is known

	mu      sync.Mutex
	waiting map[string]chan struct{} // request id → closed when answered
}

// openLegacy opens the event stream and waits, within ctx, for the
// endpoint.
func (t *httpTransport) openLegacy(ctx context.Context) error {
	t.legacy = &legacySSE{endpointCh: make(chan struct{}), waiting: map[string]chan struct{}{}}
	req, err := t.newRequest(t.ctx, http.MethodGet, t.cfg.URL, nil, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	rctx, info := withInfo(req.Context())
	req = req.WithContext(rctx)
	type result struct {
		resp *http.Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := t.client.Do(req)
		got <- result{resp, err}
	}()
	var r result
	select {
	case r = <-got:
	case <-ctx.Done():
		t.cancel()
		return t.connectTimeout()
	}
	if r.err != nil {
		if ctx.Err() != nil {
			return t.connectTimeout()
		}
		return t.requestError(r.err, "the SSE stream request")
	}
	resp := r.resp
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
		return t.statusError("the SSE stream request", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), false, body, info)
	}
	if ct := resp.Header.Get("Content-Type"); mediaType(ct) != "text/event-stream" {
		_ = resp.Body.Close()
		return t.notMCPError(ct)
	}
	go t.readLegacy(resp.Body)
	select {
	case <-t.legacy.endpointCh:
		t.log.Debug("connected", "transport", "sse", "url", t.shownURL)
		return nil
	case <-t.done:
		return t.err
	case <-ctx.Done():
		t.cancel()
		return t.connectTimeout()
	}
}

func (t *httpTransport) connectTimeout() *sdk.Error {
	return sdk.NewError(sdk.CodeTimeout, "MCP server '%s' at %s did not accept a connection in time (connect_timeout)", t.cfg.Server, t.shownURL)
}

// readLegacy passes the event stream's messages on until it ends, which
// ends the connection: without the stream no answer can come.
func (t *httpTransport) readLegacy(body io.ReadCloser) {
	defer body.Close()
	er := newEventReader(body, t.max)
	for {
		ev, err := er.next()
		if err != nil {
			if t.ctx.Err() != nil {
				return
			}
			if errors.Is(err, errTooLarge) {
				t.log.Warn("event stream over the message limit; ending the connection", "url", t.shownURL)
				t.finish(t.tooLargeError(true))
				return
			}
			msg := "stream ended"
			if !errors.Is(err, io.EOF) {
				msg = t.scrub(err.Error())
			}
			t.log.Warn("SSE stream lost", "url", t.shownURL, "error", msg)
			t.finish(sdk.NewError(sdk.CodeClosed, "the SSE stream of MCP server '%s' at %s was lost (%s); reconnecting", t.cfg.Server, t.shownURL, msg))
			return
		}
		switch {
		case ev.name == "endpoint":
			t.setEndpoint(string(ev.data))
		case ev.isMessage():
			if p := peek(ev.data); p.response && p.id != nil {
				t.legacy.answered(p.id)
			}
			t.deliver(ev.data)
		}
	}
}

// setEndpoint takes the endpoint the server named, relative to the
// stream's URL; one on another origin is refused (the configured
// credentials would follow it).
func (t *httpTransport) setEndpoint(raw string) {
	select {
	case <-t.legacy.endpointCh:
		return // the first one stands
	default:
	}
	base, _ := url.Parse(t.cfg.URL)
	u, err := base.Parse(strings.TrimSpace(raw))
	if err != nil || !sameOrigin(u, base) {
		t.finish(sdk.NewError(sdk.CodeNotMCP, "MCP server '%s' at %s named an endpoint on another origin or none; check the URL", t.cfg.Server, t.shownURL))
		return
	}
	t.legacy.endpoint = u
	close(t.legacy.endpointCh)
}

// answered marks the request id as answered.
func (l *legacySSE) answered(id []byte) {
	l.mu.Lock()
	ch, ok := l.waiting[string(id)]
	delete(l.waiting, string(id))
	l.mu.Unlock()
	if ok {
		close(ch)
	}
}

// expect registers a request whose answer will come on the stream.
func (l *legacySSE) expect(id []byte) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	key := string(id)
	l.mu.Lock()
	l.waiting[key] = ch
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		if l.waiting[key] == ch {
			delete(l.waiting, key)
		}
		l.mu.Unlock()
	}
}

// postLegacy POSTs one message to the endpoint. A request's exchange lasts
// until its answer came on the stream, within its bound.
func (t *httpTransport) postLegacy(ctx context.Context, msg []byte, p peeked) error {
	limit, key := t.limitOf(p)
	bctx, cancel := bound(ctx, limit)
	defer cancel()
	bctx, info := withInfo(bctx)
	var answered <-chan struct{}
	if p.request {
		ch, forget := t.legacy.expect(p.id)
		defer forget()
		answered = ch
	}
	req, err := t.newRequest(bctx, http.MethodPost, t.legacy.endpoint.String(), msg, transport.MessageHeader(ctx))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return t.exchangeError(ctx, bctx, err, p, limit, key)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return t.statusError(what(p), resp.StatusCode, resp.Header.Get("WWW-Authenticate"), false, body, info)
	}
	if answered == nil {
		return nil
	}
	select {
	case <-answered:
		return nil
	case <-t.done:
		return t.err
	case <-bctx.Done():
		return t.exchangeError(ctx, bctx, bctx.Err(), p, limit, key)
	}
}
