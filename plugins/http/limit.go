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
	// gate holds event streams back while many requests of the server's
	// own are in flight.
	gate *requestGate
}

// newBodyLimit returns the limit of cfg.
func newBodyLimit(cfg transport.Config) *bodyLimit {
	max := int64(cfg.MaxMessageBytes)
	if max <= 0 {
		max = transport.DefaultMaxMessageBytes
	}
	return &bodyLimit{max: max, server: cfg.Server, gate: newRequestGate(cfg)}
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
	var gate *requestGate
	if sse {
		gate = l.gate
	}
	resp.Body = &limitedBody{body: resp.Body, max: l.max, sse: sse, size: resp.ContentLength, gate: gate, closed: make(chan struct{}), trip: func() *sdk.Error {
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
// whole body, or with sse each event (the bytes up to a blank line; CR, LF
// and CRLF all end lines). It hands its reader only whole bodies and whole
// events, collected as they arrive: mcp-go's readers grow their buffers by
// doubling, so a body they read while it grows past the limit would cost
// them three times the limit; a body over it never reaches them. Past the
// limit the body is closed, so the rest is never downloaded, and Read fails
// (after the whole events before it).
type limitedBody struct {
	body io.ReadCloser
	max  int64
	sse  bool
	trip func() *sdk.Error
	// size is the announced Content-Length, or -1.
	size int64
	// gate, for an event stream, admits each request of the server's own
	// before it is read; held are the ids it admitted.
	gate      *requestGate
	heldMu    sync.Mutex
	held      []string
	gone      bool // closed: held was let go
	closed    chan struct{}
	closeOnce sync.Once

	scratch []byte
	rest    []byte   // of scratch, not scanned yet
	readErr error    // the body's error after rest
	ready   [][]byte // whole events (or the whole body) not read yet
	pend    [][]byte // the event (or body) being collected
	waiting [][]byte // a request of the server's own, waiting for the gate
	n       int64    // bytes of pend
	line    int64    // bytes of the current line, without its end (sse)
	prevCR  bool     // the last byte was a CR (sse: an LF after it ends nothing)
	err     error    // why the body ended: io.EOF, a read error, or the limit
}

// Read is called from one goroutine; Close may be called from another.
func (b *limitedBody) Read(p []byte) (int, error) {
	for len(b.ready) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.fill()
	}
	n := copy(p, b.ready[0])
	if b.ready[0] = b.ready[0][n:]; len(b.ready[0]) == 0 {
		b.ready[0] = nil
		b.ready = b.ready[1:]
	}
	return n, nil
}

// fill reads what the body has next and moves what it completes to ready.
// A request of the server's own waits for the gate, and only once what is
// ready before it has been read (the reader may need it to answer).
func (b *limitedBody) fill() {
	if b.waiting != nil {
		if b.admit(b.waiting) {
			b.ready = append(b.ready, b.waiting...)
		}
		b.waiting = nil
		return
	}
	if len(b.rest) == 0 {
		if b.readErr != nil {
			b.complete()
			b.err = b.readErr
			return
		}
		if b.size > b.max {
			b.fail()
			return
		}
		if b.scratch == nil {
			b.scratch = make([]byte, 32<<10)
		}
		n, err := b.body.Read(b.scratch)
		b.rest, b.readErr = b.scratch[:n], err
	}
	for len(b.rest) > 0 {
		end, ended := len(b.rest), false
		if b.sse {
			end, ended = b.scan(b.rest)
		}
		b.pend = append(b.pend, bytes.Clone(b.rest[:end]))
		b.n += int64(end)
		b.rest = b.rest[end:]
		if b.n > b.max {
			b.fail()
			return
		}
		if !ended {
			continue
		}
		if b.gate != nil {
			if _, ok := requestID(bytes.Join(b.pend, nil)); ok {
				b.waiting = b.pend
				b.pend, b.n = nil, 0
				return
			}
		}
		b.complete()
	}
}

// scan moves the event scanner over p and returns how much of p belongs to
// the current event, and whether the event ends there (after its blank
// line, with the LF of a CRLF when p holds it).
func (b *limitedBody) scan(p []byte) (int, bool) {
	n := 0
	for n < len(p) {
		i := bytes.IndexAny(p[n:], "\r\n")
		if i < 0 {
			b.line += int64(len(p) - n)
			b.prevCR = false
			return len(p), false
		}
		if i > 0 {
			b.line += int64(i)
			b.prevCR = false
		}
		c := p[n+i]
		n += i + 1
		if c == '\n' && b.prevCR {
			b.prevCR = false
			continue
		}
		b.prevCR = c == '\r'
		if b.line > 0 {
			b.line = 0
			continue
		}
		// A blank line: the event is over.
		if b.prevCR && n < len(p) && p[n] == '\n' {
			n++
			b.prevCR = false
		}
		return n, true
	}
	return n, false
}

// admit waits until the gate has room for event, a request of the
// server's own; it reports false when the body was closed meanwhile.
func (b *limitedBody) admit(event [][]byte) bool {
	id, _ := requestID(bytes.Join(event, nil))
	if !b.gate.acquire(id, b.closed) {
		b.err = io.ErrClosedPipe
		return false
	}
	b.heldMu.Lock()
	gone := b.gone
	if !gone {
		b.held = append(b.held, id)
	}
	b.heldMu.Unlock()
	if gone {
		b.gate.release(id)
	}
	return true
}

// complete moves the collected event (or body) to ready.
func (b *limitedBody) complete() {
	b.ready = append(b.ready, b.pend...)
	b.pend, b.n = nil, 0
}

// fail ends the body at its limit.
func (b *limitedBody) fail() {
	b.pend, b.n = nil, 0
	b.err = b.trip()
	_ = b.body.Close()
}

// Close closes the body; the requests it admitted that are still
// unanswered no longer count (their answers may never go out).
func (b *limitedBody) Close() error {
	b.closeOnce.Do(func() {
		close(b.closed)
		b.heldMu.Lock()
		held := b.held
		b.held, b.gone = nil, true
		b.heldMu.Unlock()
		for _, id := range held {
			b.gate.release(id)
		}
	})
	return b.body.Close()
}
