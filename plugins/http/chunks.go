package main

import "io"

// maxChunk bounds one part of a chunkBuf.
const maxChunk = 4 << 20

// chunkBuf collects a message of unknown length in parts that never move,
// so that reading up to the limit holds the bytes read and nothing more: a
// slice grown by append leaves its old copies behind, and with the garbage
// collector's pacing a 64 MB message over the limit cost the plugin about
// 270 MB before it was refused (make hostile). The parts are joined once,
// into a slice of the exact size, when the message is whole.
type chunkBuf struct {
	parts [][]byte
	n     int64
}

// spare returns the free room of the last part, adding a part (twice the
// last one's size, from 32 KiB up to maxChunk) when it is full.
func (c *chunkBuf) spare() []byte {
	if k := len(c.parts); k > 0 {
		last := c.parts[k-1]
		if len(last) < cap(last) {
			return last[len(last):cap(last)]
		}
	}
	size := 32 << 10
	if k := len(c.parts); k > 0 {
		size = min(2*cap(c.parts[k-1]), maxChunk)
	}
	c.parts = append(c.parts, make([]byte, 0, size))
	last := c.parts[len(c.parts)-1]
	return last[:cap(last)]
}

// grew records that n bytes were written into the room spare returned.
func (c *chunkBuf) grew(n int) {
	k := len(c.parts) - 1
	c.parts[k] = c.parts[k][:len(c.parts[k])+n]
	c.n += int64(n)
}

// write appends p.
func (c *chunkBuf) write(p []byte) {
	for len(p) > 0 {
		n := copy(c.spare(), p)
		c.grew(n)
		p = p[n:]
	}
}

// readFrom reads r to its end (or error) into c.
func (c *chunkBuf) readFrom(r io.Reader) error {
	for {
		n, err := r.Read(c.spare())
		c.grew(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// bytes returns prefix followed by what c holds, as one slice of the exact
// size, and empties c.
func (c *chunkBuf) bytes(prefix []byte) []byte {
	if len(prefix) == 0 && len(c.parts) == 1 {
		b := c.parts[0]
		c.reset()
		return b
	}
	out := make([]byte, 0, int64(len(prefix))+c.n)
	out = append(out, prefix...)
	for _, p := range c.parts {
		out = append(out, p...)
	}
	c.reset()
	return out
}

func (c *chunkBuf) reset() { c.parts, c.n = nil, 0 }
