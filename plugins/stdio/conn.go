package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// The server's messages are written before Write returns.
var _ transport.Borrower = (*conn)(nil)

// Read returns the next JSON message the server wrote on stdout, without its
// newline and surrounding blanks, never decoded: the host does that once.
// Lines that cannot be JSON-RPC are reported to the host once and skipped.
func (c *conn) Read(context.Context) ([]byte, error) {
	for {
		line, err := c.readLine()
		if err != nil {
			if sdk.ErrorCode(err) == sdk.CodeTooLarge {
				return nil, err
			}
			// stdout is closed: the process is exiting; say why.
			<-c.exited
			if c.stdout != nil {
				_ = c.stdout.Close()
			}
			// Said again now that stdout is read to its end: the
			// process often exits before its last lines are read, and
			// the non-JSON it wrote there is the likeliest reason.
			return nil, c.exitError(c.werr)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' {
			c.noteGarbage(line)
			continue
		}
		return line, nil
	}
}

// readLine returns the next line; the slice is valid until the next call.
// A line over the size limit ends the connection with a too_large error:
// the plugin never decodes messages, so it cannot fail just the request
// the line answers, and skipping it would leave that request hanging.
func (c *conn) readLine() ([]byte, error) {
	for {
		line, err := c.out.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A part of a long line: add it, within the limit.
			if len(c.long)+len(line) > c.max {
				return nil, c.tooLarge()
			}
			c.long = c.grow(c.long, len(line))
			c.long = append(c.long, line...)
			continue
		}
		if c.long != nil {
			// The end of a long line (or its unterminated last part): the
			// buffer is the message, handed over whole; the next long
			// line gets a buffer of its own.
			if len(c.long)+len(line) > c.max {
				return nil, c.tooLarge()
			}
			whole := append(c.grow(c.long, len(line)), line...)
			c.long = nil
			line = whole
		}
		if err == nil {
			return line, nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			// A last line without a newline; the error comes next time.
			return line, nil
		}
		return nil, err
	}
}

// longStart is the first capacity of a long line's buffer.
const longStart = 1 << 20

// grow returns b with room for n more bytes: growing fourfold, never past
// the size limit, so a long line is copied a few times in all (each byte
// about a third of a time on average) and its last growth holds the
// buffer before it, a quarter of the new one, beside it. append's own
// growth (a quarter at a time at this size) would copy each byte four
// times and hold the old buffer, four fifths of the new one, beside it.
func (c *conn) grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	size := max(cap(b), longStart/4)
	for size-len(b) < n {
		size *= 4
	}
	// The limit was checked by the caller: the line fits within it.
	size = max(min(size, c.max), len(b)+n)
	nb := make([]byte, len(b), size)
	copy(nb, b)
	return nb
}

// tooLarge drops the long line being collected and returns the error that
// ends the connection.
func (c *conn) tooLarge() error {
	c.long = nil
	return sdk.NewError(sdk.CodeTooLarge, "MCP server %q wrote a message over the limit of %d MB (max_message_mb); raise max_message_mb in its entry in config.yaml if it really sends messages that large", c.cfg.Server, c.max>>20)
}

// exitSettle is how long a failed write waits for the server's exit.
const exitSettle = time.Second

// Write writes one message and a newline to the server's stdin.
func (c *conn) Write(_ context.Context, msg []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	var err error
	if len(msg) < 64<<10 {
		c.wbuf = append(append(c.wbuf[:0], msg...), '\n')
		_, err = c.stdinW.Write(c.wbuf)
	} else {
		if _, err = c.stdinW.Write(msg); err == nil {
			_, err = c.stdinW.Write([]byte{'\n'})
		}
	}
	if err != nil {
		// A broken pipe almost always means the server is exiting: its
		// exit status and last stderr line say why far better than EPIPE.
		select {
		case <-c.exited:
			return c.exitErr
		case <-time.After(exitSettle):
		}
		return sdk.NewError(sdk.CodeClosed, "write to MCP server %q: %v", c.cfg.Server, err)
	}
	return nil
}

// BorrowsMessages is true: Write is done with msg when it returns (a small
// one is copied into the line buffer, a large one written out before it
// returns), so the sdk hands over the host's messages without a copy each.
func (c *conn) BorrowsMessages() bool { return true }

// SessionID is "": stdio has no sessions.
func (c *conn) SessionID() string { return "" }

// noteGarbage reports the first line that is not JSON-RPC to the host.
func (c *conn) noteGarbage(line []byte) {
	text := string(line)
	if len(text) > 120 {
		text = text[:120] + "..."
	}
	if !c.garbage.CompareAndSwap(nil, &text) {
		return
	}
	c.host.Warn(sdk.NewError(sdk.CodeGarbage, "MCP server %q wrote non-JSON to stdout: %q; a stdio server must write only JSON-RPC there and log to stderr", c.cfg.Server, text))
}
