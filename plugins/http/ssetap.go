package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// sseTap gives mcp-go's legacy SSE transport what it lacks: requests from
// the server (sampling, elicitation, roots). mcp-go reads every message on
// the event stream as a response or a notification, so the tap takes the
// server's requests out of the stream before mcp-go sees them, answers them
// with the host's handler, and POSTs the answers to the session's endpoint.
type sseTap struct {
	base http.RoundTripper
	t    *httpTransport
	// sse is the transport whose stream this tap reads; it knows the
	// endpoint the answers go to.
	sse atomic.Pointer[transport.SSE]
}

// RoundTrip implements http.RoundTripper: a GET that opens an event stream
// gets a filtered body.
func (p *sseTap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return resp, err
	}
	pr, pw := io.Pipe()
	go p.filter(req.Context(), resp.Body, pw)
	resp.Body = pr
	return resp, nil
}

// filter copies the event stream from src to dst, except the server's
// requests, which it answers.
func (p *sseTap) filter(ctx context.Context, src io.ReadCloser, dst *io.PipeWriter) {
	defer src.Close()
	br := bufio.NewReader(src)
	var event, data bytes.Buffer
	var kind string
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			trimmed := strings.TrimRight(line, "\r\n")
			if trimmed == "" {
				if (kind == "" || kind == "message") && isServerRequest(data.Bytes()) {
					go p.answer(ctx, data.String())
				} else if event.Len() > 0 {
					event.WriteString(line)
					if _, werr := dst.Write(event.Bytes()); werr != nil {
						return
					}
				}
				event.Reset()
				data.Reset()
				kind = ""
				continue
			}
			event.WriteString(line)
			if v, ok := strings.CutPrefix(trimmed, "event:"); ok {
				kind = strings.TrimSpace(v)
			} else if v, ok := strings.CutPrefix(trimmed, "data:"); ok {
				v = strings.TrimPrefix(v, " ")
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(v)
			}
		}
		if err != nil {
			if event.Len() > 0 {
				_, _ = dst.Write(event.Bytes())
			}
			_ = dst.CloseWithError(err)
			return
		}
	}
}

// isServerRequest reports whether an SSE message is a JSON-RPC request.
func isServerRequest(data []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null"
}

// answer runs the host's handler for one server request and POSTs the
// answer to the session's endpoint.
func (p *sseTap) answer(ctx context.Context, data string) {
	var raw struct {
		ID     mcp.RequestId   `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(data), &raw); err != nil {
		return
	}
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: raw.ID, Method: raw.Method}
	if len(raw.Params) > 0 {
		req.Params = raw.Params
	}
	resp, err := p.t.dispatchRequest(ctx, req)
	if err != nil {
		resp = transport.NewJSONRPCErrorResponse(raw.ID, mcp.INTERNAL_ERROR, err.Error(), nil)
	}
	if resp == nil {
		return
	}
	s := p.sse.Load()
	if s == nil || s.GetEndpoint() == nil {
		p.t.warn(sdk.NewError(sdk.CodeOther, "MCP server '%s' sent a %s request before its SSE endpoint; it was not answered", p.t.cfg.Server, raw.Method))
		return
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, s.GetEndpoint().String(), bytes.NewReader(body))
	if err != nil {
		return
	}
	for k, v := range p.t.cfg.Headers {
		hreq.Header.Set(k, v)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if version := p.t.protocolVersion(); version != "" {
		hreq.Header.Set(transport.HeaderKeyProtocolVersion, version)
	}
	hresp, err := p.t.client.Do(hreq)
	if err != nil {
		p.t.warn(sdk.NewError(sdk.CodeOther, "the answer to the %s request of MCP server '%s' could not be sent: %s", raw.Method, p.t.cfg.Server, p.t.scrub(err.Error())))
		return
	}
	_ = hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		w := sdk.NewError(sdk.CodeHTTP, "MCP server '%s' refused the answer to its %s request with HTTP %d", p.t.cfg.Server, raw.Method, hresp.StatusCode)
		w.Status = hresp.StatusCode
		p.t.warn(w)
	}
}
