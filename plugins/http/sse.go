package main

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// maxRetry bounds the reconnection time a server may ask for.
const maxRetry = 30 * time.Second

// errTooLarge is what eventReader.next and readBody return for a message
// over the limit; the caller turns it into the error naming max_message_mb.
var errTooLarge = errors.New("message over the limit")

// event is one server-sent event.
type event struct {
	// name is the event's type ("" when it had no event field).
	name string
	// id is the event's id field, "" when it had none.
	id string
	// data is the event's data, its lines joined with LF. It is the
	// event's own slice: the reader never touches it again.
	data []byte
}

// eventReader reads server-sent events from an HTTP body, bounded where
// the bytes arrive: an event (all its lines, with their ends) longer than
// max fails with errTooLarge before more of it is read, so an endless event
// costs at most max bytes. Lines end with CR, LF or CRLF.
type eventReader struct {
	r   io.Reader
	max int64

	buf  []byte // the last chunk read
	rest []byte // of buf, not scanned yet
	err  error  // the body's error after rest

	line   []byte   // the current line, without its end (its first lineInline bytes)
	long   chunkBuf // the rest of a line longer than lineInline
	prevCR bool     // the last byte was a CR: an LF right after it ends nothing
	size   int64    // bytes of the current event so far

	data    []byte
	hasData bool
	name    string
	id      string

	// retry is the reconnection time the stream asked for (its last
	// retry field), 0 when it named none.
	retry time.Duration
}

func newEventReader(r io.Reader, max int64) *eventReader {
	return &eventReader{r: r, max: max}
}

// next returns the next event that carries data (events without data, such
// as a priming event with only an id, update the last event id the caller
// sees through the returned event's id when they come with data; an event
// without data is returned too, with nil data, so that its id counts). At
// the end of the body it returns the body's error (io.EOF for a clean end).
func (e *eventReader) next() (event, error) {
	for {
		if len(e.rest) == 0 {
			if e.err != nil {
				// A last event without its blank line still counts.
				if line := e.takeLine(); len(line) > 0 {
					e.field(line)
					e.line = nil
				}
				if e.hasData || e.id != "" {
					return e.dispatch(), nil
				}
				return event{}, e.err
			}
			if e.buf == nil {
				e.buf = make([]byte, 32<<10)
			}
			n, err := e.r.Read(e.buf)
			e.rest, e.err = e.buf[:n], err
			continue
		}
		i := bytes.IndexAny(e.rest, "\r\n")
		if i < 0 {
			if e.size += int64(len(e.rest)); e.size > e.max {
				return event{}, errTooLarge
			}
			e.appendLine(e.rest)
			e.rest = nil
			e.prevCR = false
			continue
		}
		c := e.rest[i]
		if e.size += int64(i + 1); e.size > e.max {
			return event{}, errTooLarge
		}
		if i == 0 && c == '\n' && e.prevCR {
			// The LF of a CRLF whose CR ended the line already.
			e.prevCR = false
			e.rest = e.rest[1:]
			continue
		}
		e.appendLine(e.rest[:i])
		e.rest = e.rest[i+1:]
		e.prevCR = c == '\r'
		if line := e.takeLine(); len(line) > 0 {
			e.field(line)
			if e.line != nil {
				e.line = e.line[:0]
			}
			continue
		}
		// A blank line ends the event.
		if e.hasData || e.id != "" {
			return e.dispatch(), nil
		}
		e.reset()
	}
}

// lineInline is how much of a line is kept in one growing slice; the rest
// of a longer line goes to parts that never move (chunkBuf), so an endless
// line costs the plugin the bytes read, not their copies.
const lineInline = 64 << 10

// appendLine adds p to the current line.
func (e *eventReader) appendLine(p []byte) {
	if e.long.n == 0 && len(e.line)+len(p) <= lineInline {
		e.line = append(e.line, p...)
		return
	}
	e.long.write(p)
}

// takeLine returns the current line whole. A long line comes back as a
// slice of its own (e.line is then reusable).
func (e *eventReader) takeLine() []byte {
	if e.long.n == 0 {
		return e.line
	}
	line := e.long.bytes(e.line)
	e.line = e.line[:0]
	return line
}

// field processes one line of an event.
func (e *eventReader) field(line []byte) {
	if line[0] == ':' {
		return // a comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if e.hasData {
			e.data = append(e.data, '\n')
			e.data = append(e.data, value...)
		} else {
			// The line's own buffer becomes the data: a large
			// message is not copied again.
			e.data = value
			e.line = nil
			e.hasData = true
		}
	case "event":
		e.name = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			e.id = string(value)
		}
	case "retry":
		if ms, err := strconv.ParseUint(string(value), 10, 32); err == nil {
			e.retry = min(time.Duration(ms)*time.Millisecond, maxRetry)
		}
	}
}

// dispatch returns the collected event and starts the next one.
func (e *eventReader) dispatch() event {
	ev := event{name: e.name, id: e.id, data: e.data}
	e.reset()
	return ev
}

func (e *eventReader) reset() {
	e.data, e.hasData, e.name, e.id, e.size = nil, false, "", "", 0
}

// isMessage reports whether an event carries a JSON-RPC message: it has
// data and its type is "message" or none.
func (ev event) isMessage() bool {
	return len(ev.data) > 0 && (ev.name == "" || ev.name == "message")
}

// readBody reads a whole response body of at most max bytes; a body that
// announces or reaches more fails with errTooLarge, unread past the limit.
func readBody(r io.Reader, announced, max int64) ([]byte, error) {
	if announced > max {
		return nil, errTooLarge
	}
	if announced >= 0 {
		b := make([]byte, announced)
		n, err := io.ReadFull(r, b)
		if err != nil {
			return b[:n], err
		}
		// A body longer than it said is the server's error; what it
		// announced is the message.
		return b, nil
	}
	var buf chunkBuf
	err := buf.readFrom(io.LimitReader(r, max+1))
	if buf.n > max {
		return nil, errTooLarge
	}
	return buf.bytes(nil), err
}
