package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// StdioOptions configure ServeStdio.
type StdioOptions struct {
	// MaxRequestBytes bounds one line the client sends
	// (mcp_serve.max_request_mb, as for HTTP bodies); zero means
	// config.DefaultServeMaxRequestBytes is not applied and lines are
	// unbounded, which only tests want.
	MaxRequestBytes int64
	// Logger receives mcp-go's errors and each cut line.
	Logger hclog.Logger
	// Drain bounds how long, once the client's input has ended, requests
	// already read may still run before they are cancelled: their answers
	// are written first (a client that closes stdin after its last
	// request still gets the answer). Zero cancels them at once. Serve
	// gives it mcp_serve.call_timeout, which bounds every call anyway.
	Drain time.Duration
}

// ServeStdio serves s on in and out until in ends or ctx ends. A client
// line longer than o.MaxRequestBytes is never held: what is over the limit
// is read and dropped up to its newline, the client gets the JSON-RPC
// error the HTTP side gives for a body over the limit (id null: the id of
// a cut line is unknown), and the next line is served.
func ServeStdio(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, o StdioOptions) error {
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	st := server.NewStdioServer(s)
	st.SetErrorLogger(log.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn}))
	open := newOpenRequests()
	w := &lockedWriter{w: out, open: open}
	limit := o.MaxRequestBytes
	if limit <= 0 {
		limit = math.MaxInt64
	}
	lines := newLineLimiter(in, limit, w, log)
	lines.onLine = open.read
	in = &drainReader{r: lines, open: open, bound: o.Drain, ctx: ctx}
	err := st.Listen(ctx, in, w)
	if err == nil || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// RequestTooLargeMessage is what a client is told when its request (an
// HTTP body, a stdio line) is over mcp_serve.max_request_mb.
func RequestTooLargeMessage(limit int64) string {
	return fmt.Sprintf("Request Entity Too Large: over %d bytes (mcp_serve.max_request_mb)", limit)
}

// lockedWriter serialises whole writes to the protocol stream: mcp-go
// writes each message with one Write, and so does the line limiter's
// error, so messages never interleave.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	open *openRequests // told of each answer written; may be nil
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	if l.open != nil {
		l.open.wrote(p)
	}
	return n, err
}

// openRequests are the client's requests read and not yet answered, by
// their id as compact JSON.
type openRequests struct {
	mu      sync.Mutex
	ids     map[string]bool
	changed chan struct{} // closed and replaced at every change
}

func newOpenRequests() *openRequests {
	return &openRequests{ids: map[string]bool{}, changed: make(chan struct{})}
}

// envelope is what openRequests reads of a message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// read notes a line the client sent: a request opens its id, a
// notifications/cancelled closes the one it names (it gets no answer).
func (o *openRequests) read(line []byte) {
	var m envelope
	if json.Unmarshal(line, &m) != nil || m.Method == "" {
		return
	}
	switch {
	case m.Method == "notifications/cancelled":
		o.set(m.Params.RequestID, false)
	case len(m.ID) > 0 && string(m.ID) != "null":
		o.set(m.ID, true)
	}
}

// wrote notes a message written to the client: an answer closes its id.
func (o *openRequests) wrote(msg []byte) {
	var m envelope
	if json.Unmarshal(msg, &m) == nil && m.Method == "" && len(m.ID) > 0 {
		o.set(m.ID, false)
	}
}

func (o *openRequests) set(id json.RawMessage, open bool) {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return
	}
	key, _ := json.Marshal(v)
	o.mu.Lock()
	defer o.mu.Unlock()
	if open == o.ids[string(key)] {
		return
	}
	if open {
		o.ids[string(key)] = true
	} else {
		delete(o.ids, string(key))
	}
	close(o.changed)
	o.changed = make(chan struct{})
}

// wait returns when no request is open, or at the end of bound or ctx.
func (o *openRequests) wait(ctx context.Context, bound time.Duration) {
	if bound <= 0 {
		return
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		o.mu.Lock()
		n, changed := len(o.ids), o.changed
		o.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// drainReader is the client's input as mcp-go reads it: when the input
// ends, the end is held back until the requests already read are answered
// (within bound), since mcp-go cancels every running request the moment
// its input ends.
type drainReader struct {
	r     io.Reader
	open  *openRequests
	bound time.Duration
	ctx   context.Context
}

func (d *drainReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && n == 0 {
		d.open.wait(d.ctx, d.bound)
	}
	return n, err
}

// lineLimiter is the reader mcp-go's stdio server reads: it hands over one
// whole line at a time, held here until its newline arrives, so a line is
// never given to mcp-go in part. A line growing past limit is dropped
// (what it held is released, the rest read in small pieces and thrown
// away up to its newline) and answered with the too-large error on out.
type lineLimiter struct {
	r     *bufio.Reader
	limit int64
	out   io.Writer
	log   hclog.Logger

	line    []byte // the line being collected
	pending []byte // a whole line not yet handed over
	err     error  // the read error to return once pending is empty

	onLine func([]byte) // called with each whole line handed over; may be nil
}

// lineChunk is the read buffer's size: what is held of an oversized line
// at any moment.
const lineChunk = 64 << 10

func newLineLimiter(r io.Reader, limit int64, out io.Writer, log hclog.Logger) *lineLimiter {
	return &lineLimiter{r: bufio.NewReaderSize(r, lineChunk), limit: limit, out: out, log: log}
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		l.fill()
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	if len(l.pending) == 0 {
		l.pending = nil
		if cap(l.line) > lineChunk {
			l.line = nil // do not keep a large line's buffer between lines
		}
	}
	return n, nil
}

// fill reads until a whole line is pending, or a read error is kept.
func (l *lineLimiter) fill() {
	l.line = l.line[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		if int64(len(l.line))+int64(len(chunk)) > l.limit {
			l.line = nil
			if err == bufio.ErrBufferFull {
				err = l.discardLine()
			}
			l.refuse()
			if err != nil {
				l.err = err
			}
			return
		}
		l.line = append(l.line, chunk...)
		switch {
		case err == nil:
			l.pending = l.line
			if l.onLine != nil {
				l.onLine(l.line)
			}
			return
		case err == bufio.ErrBufferFull:
			continue
		default:
			// The input ended (or broke) inside a line: hand over what
			// there is; mcp-go sees the error after it.
			l.pending, l.err = l.line, err
			if l.onLine != nil && len(l.line) > 0 {
				l.onLine(l.line)
			}
			return
		}
	}
}

// discardLine reads and drops what is left of the current line, through
// its newline.
func (l *lineLimiter) discardLine() error {
	for {
		_, err := l.r.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}

// refuse answers a cut line.
func (l *lineLimiter) refuse() {
	msg := RequestTooLargeMessage(l.limit)
	l.log.Warn("refused a client line over the limit; raise mcp_serve.max_request_mb in config.yaml if the client really sends requests that large", "limit_bytes", l.limit)
	resp, _ := json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INVALID_REQUEST, msg, nil))
	if _, err := l.out.Write(append(resp, '\n')); err != nil {
		l.log.Warn("could not answer a cut line", "error", err)
	}
}
