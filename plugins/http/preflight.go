package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"
)

// preflightTimeout bounds the whole content-type preflight.
const preflightTimeout = 5 * time.Second

// preflightProbe is the initialize request POSTed when a GET or HEAD answer
// looks like a web page: an MCP endpoint answers it with an MCP content type.
const preflightProbe = `{"jsonrpc":"2.0","id":"_probe","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"hermes-probe","version":"0.1"}}}`

// preflightWanted reports whether the opener runs the preflight: for Streamable
// HTTP only, unless skip_preflight is set or an auth plugin supplies headers
// (its own discovery talks to the server first).
func (t *httpTransport) preflightWanted() bool {
	if t.sse || t.cfg.DynamicHeaders {
		return false
	}
	if v, ok := t.cfg.Extra["skip_preflight"]; ok {
		switch b := v.(type) {
		case bool:
			return !b
		case string:
			return !(b == "true" || b == "yes" || b == "1" || b == "on")
		}
	}
	return true
}

// preflight tells a web page from an MCP endpoint before the handshake, so
// the user gets "this URL is a web page" instead of a protocol error. HEAD
// (GET when HEAD is not allowed); a 2xx whose content type is neither JSON
// nor an event stream gets an initialize probe; when that is not MCP either
// the endpoint is refused. Network errors, other statuses and a missing
// content type let it pass: the handshake reports those better.
func (t *httpTransport) preflight(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	status, ct, ok := t.probe(ctx, http.MethodHead, nil)
	if ok && (status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented) {
		status, ct, ok = t.probe(ctx, http.MethodGet, nil)
	}
	if !ok || status < 200 || status > 299 || ct == "" || isMCPContentType(ct) {
		return nil
	}
	if pstatus, pct, pok := t.probe(ctx, http.MethodPost, []byte(preflightProbe)); pok && pstatus >= 200 && pstatus <= 299 && isMCPContentType(pct) {
		return nil
	}
	t.log.Warn("endpoint is not MCP", "url", t.shownURL, "content_type", mediaType(ct))
	return t.notMCPError(ct)
}

// probe sends one request and returns its status and content type; ok is
// false when no response arrived.
func (t *httpTransport) probe(ctx context.Context, method string, body []byte) (status int, contentType string, ok bool) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.cfg.URL, rd)
	if err != nil {
		return 0, "", false
	}
	for k, v := range t.cfg.Headers {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := t.client.Do(req)
	if err != nil {
		t.log.Debug("preflight request failed", "method", method, "error", t.scrub(err.Error()))
		return 0, "", false
	}
	// Never read a body: an event stream would not end.
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Content-Type"), true
}
