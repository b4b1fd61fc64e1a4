package pluginhost

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/rpc"
	"sync/atomic"
)

// Tool results travel on a connection of their own (a go-plugin broker
// stream the host accepts at Open), whose net/rpc replies the host reads
// through gobFrames: each gob message's length is read before the message,
// and one over the bound is refused before any of it is read or held. The
// control connection go-plugin gives every plugin decodes replies whole,
// whatever their size, so calls never use it.

// resultSlack is what a call's reply may hold beyond its result's bytes:
// the reply's gob envelope, field names and error.
const resultSlack = 1 << 20

// ResultTooLargeError is the error of a call whose reply the plugin began
// to send over the bound; the results connection cannot be read past it,
// so the plugin is done with (the next call starts a new one).
type ResultTooLargeError struct {
	Size, Limit uint64
}

func (e *ResultTooLargeError) Error() string {
	return fmt.Sprintf("the bridge plugin sent a reply of %d bytes, over the limit of %d bytes", e.Size, e.Limit)
}

// gobFrames passes a gob stream through, reading each message's length
// itself and refusing a message over limit before any of its bytes are
// read. It sits under gob's own buffering, so it sees every byte in order.
type gobFrames struct {
	r     *bufio.Reader
	limit *atomic.Int64

	left    uint64  // bytes of the current message not passed yet
	hdr     [9]byte // the current message's length, as sent
	pending []byte  // the part of hdr not passed yet
	err     error
	// refused is the message refused, once one was (net/rpc hands the
	// caller only the error's text).
	refused atomic.Pointer[ResultTooLargeError]
}

func newGobFrames(r io.Reader, limit *atomic.Int64) *gobFrames {
	return &gobFrames{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

func (g *gobFrames) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if len(g.pending) == 0 && g.left == 0 {
		if err := g.header(); err != nil {
			g.err = err
			return 0, err
		}
	}
	if len(g.pending) > 0 {
		n := copy(p, g.pending)
		g.pending = g.pending[n:]
		return n, nil
	}
	if uint64(len(p)) > g.left {
		p = p[:g.left]
	}
	n, err := g.r.Read(p)
	g.left -= uint64(n)
	if err != nil {
		g.err = err
	}
	return n, err
}

// header reads the length of the next message: a byte under 128 is the
// length; otherwise it is the negated count of the big-endian bytes that
// follow (gob's encoding of an unsigned integer).
func (g *gobFrames) header() error {
	b, err := g.r.ReadByte()
	if err != nil {
		return err
	}
	g.hdr[0] = b
	n, k := uint64(b), 1
	if b >= 0x80 {
		size := int(-int8(b))
		if size < 1 || size > 8 {
			return errors.New("the bridge plugin sent a malformed reply (gob message length)")
		}
		if _, err := io.ReadFull(g.r, g.hdr[1:1+size]); err != nil {
			return err
		}
		n = 0
		for _, c := range g.hdr[1 : 1+size] {
			n = n<<8 | uint64(c)
		}
		k = 1 + size
	}
	if lim := uint64(g.limit.Load()); n > lim {
		e := &ResultTooLargeError{Size: n, Limit: lim}
		g.refused.Store(e)
		return e
	}
	g.pending, g.left = g.hdr[:k], n
	return nil
}

// boundedConn is the host's end of the results connection, read through
// gobFrames.
type boundedConn struct {
	io.ReadWriteCloser
	frames *gobFrames
}

func (c *boundedConn) Read(p []byte) (int, error) { return c.frames.Read(p) }

// newResultsClient returns the net/rpc client of the results connection
// conn, whose replies may not exceed limit bytes, and its reader.
func newResultsClient(conn io.ReadWriteCloser, limit *atomic.Int64) (*rpc.Client, *gobFrames) {
	frames := newGobFrames(conn, limit)
	return rpc.NewClient(&boundedConn{ReadWriteCloser: conn, frames: frames}), frames
}
