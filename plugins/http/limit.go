package main

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// bodyLimit bounds what one HTTP response can make the plugin hold, where
// the bytes arrive: a JSON body (or any body that is not an event stream) as
// a whole, an SSE stream per event, at the server's message limit
// (max_message_mb). mcp-go reads whole bodies and whole events into memory,
// so without it an endless body or event grows the plugin until it dies.
type bodyLimit struct {
	max    int64
	server string
	// onStream is called when a GET stream (the Streamable HTTP listening
	// stream, the legacy SSE stream) goes over the limit: the connection
	// then ends with the error, since those streams carry the server's
	// requests and notifications and would be opened again and again.
	onStream func(*sdk.Error)
}

// newBodyLimit returns the limit of cfg.
func newBodyLimit(cfg transport.Config) *bodyLimit {
	max := int64(cfg.MaxMessageBytes)
	if max <= 0 {
		max = transport.DefaultMaxMessageBytes
	}
	return &bodyLimit{max: max, server: cfg.Server}
}

// wrap bounds the body of resp, the answer to req.
func (l *bodyLimit) wrap(req *http.Request, resp *http.Response) {
	if l == nil || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	sse := mt == "text/event-stream"
	info := infoFrom(req.Context())
	stream := req.Method == http.MethodGet
	resp.Body = &limitedBody{body: resp.Body, max: l.max, sse: sse, trip: func() *sdk.Error {
		e := l.error(sse)
		if info != nil {
			info.overLimit(e)
		}
		if stream && l.onStream != nil {
			l.onStream(e)
		}
		return e
	}}
}

// error is the error of a response over the limit.
func (l *bodyLimit) error(sse bool) *sdk.Error {
	what := "a response"
	if sse {
		what = "an SSE event"
	}
	return sdk.NewError(sdk.CodeTooLarge, "MCP server '%s' sent %s over the limit of %d MB (max_message_mb); raise max_message_mb in its entry in config.yaml if it really sends messages that large",
		l.server, what, l.max>>20)
}

// limitedBody is a response body that fails once it passes its limit: the
// whole body, or with sse each event (the bytes from one blank line to the
// next, CR, LF and CRLF all ending lines). Past the limit it closes the
// body, so the rest is never downloaded.
type limitedBody struct {
	body io.ReadCloser
	max  int64
	sse  bool
	trip func() *sdk.Error

	mu     sync.Mutex
	n      int64 // bytes of the body, or of the current event
	line   int64 // bytes of the current line, without its end (sse)
	prevCR bool  // the last byte was a CR (sse: an LF after it ends nothing)
	err    error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	err := b.err
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, rerr := b.body.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	if b.count(p[:n]) {
		b.err = b.trip()
		_ = b.body.Close()
		return 0, b.err
	}
	return n, rerr
}

// count adds p to the body or the current event and reports whether it is
// over the limit.
func (b *limitedBody) count(p []byte) bool {
	if !b.sse {
		b.n += int64(len(p))
		return b.n > b.max
	}
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			i = len(p)
		}
		if i > 0 {
			b.line += int64(i)
			b.n += int64(i)
			b.prevCR = false
		}
		if b.n > b.max {
			return true
		}
		if i == len(p) {
			return false
		}
		c := p[i]
		p = p[i+1:]
		if c == '\n' && b.prevCR {
			b.prevCR = false
			continue
		}
		b.prevCR = c == '\r'
		if b.line == 0 {
			b.n = 0 // a blank line: the event is over
		} else {
			b.line = 0
			b.n++
		}
	}
	return false
}

func (b *limitedBody) Close() error { return b.body.Close() }
