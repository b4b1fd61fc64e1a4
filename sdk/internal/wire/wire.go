// Package wire holds the framing of the message stream between the host and
// a plugin: length-prefixed binary frames, so that a JSON-RPC message crosses
// the process boundary as the bytes it is, copied once and never re-encoded.
// It knows nothing about what a frame means; the kind packages do.
package wire

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"github.com/hermes-agent/hermes/sdk/rawio"
	"io"
	"sync"
)

// HeaderSize is the size of a frame header: kind (1 byte), sequence number
// (8 bytes, big endian), payload length (4 bytes, big endian).
const HeaderSize = 13

// MaxPayload is the largest payload the format can carry (4 GiB - 1); a
// reader's own limit is usually far lower.
const MaxPayload = 1<<32 - 1

// Frame is one unit on the stream.
type Frame struct {
	Kind    byte
	Seq     uint64
	Payload []byte
}

// TooLargeError is returned by Reader.Read when a frame announces a payload
// over the reader's limit. The stream cannot be resynchronised after it.
type TooLargeError struct {
	Size, Limit uint64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("frame of %d bytes is over the limit of %d bytes", e.Size, e.Limit)
}

// Writer writes frames, safely from many goroutines, each flushed at once.
type Writer struct {
	mu  sync.Mutex
	w   *bufio.Writer
	hdr [HeaderSize]byte
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(rawio.Writer(w), 64<<10)}
}

// Write writes one frame whose payload is the concatenation of parts (so a
// caller can prepend a small header to a message without copying it).
func (fw *Writer) Write(kind byte, seq uint64, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if uint64(n) > MaxPayload {
		return &TooLargeError{Size: uint64(n), Limit: MaxPayload}
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.hdr[0] = kind
	binary.BigEndian.PutUint64(fw.hdr[1:9], seq)
	binary.BigEndian.PutUint32(fw.hdr[9:13], uint32(n))
	if _, err := fw.w.Write(fw.hdr[:]); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := fw.w.Write(p); err != nil {
			return err
		}
	}
	return fw.w.Flush()
}

// Reader reads frames written by a Writer.
type Reader struct {
	r     *bufio.Reader
	limit uint64
	hdr   [HeaderSize]byte
	// shared is the length of the payload ReadShared returned last,
	// still at the head of r's buffer (Peek), or 0.
	shared int
}

// NewReader returns a Reader on r that refuses payloads over limit bytes
// (0 means MaxPayload).
func NewReader(r io.Reader, limit uint64) *Reader {
	if limit == 0 || limit > MaxPayload {
		limit = MaxPayload
	}
	return &Reader{r: bufio.NewReaderSize(rawio.Reader(r), readBufSize), limit: limit}
}

// Read returns the next frame. Its payload is a new slice the caller owns.
// It returns io.EOF at a clean end of stream, io.ErrUnexpectedEOF inside a
// frame, and a *TooLargeError for a payload over the limit (the payload is
// not read).
func (fr *Reader) Read() (Frame, error) { return fr.read(false) }

// ReadShared is Read, except that a payload that fits the Reader's buffer
// (SharedMax bytes) is not copied out of it: it is valid only until the
// next Read or ReadShared. A larger payload is a new slice, as Read's. A
// reader whose caller is done with each frame before it asks for the next
// (a serving loop that hands the message on and forgets it) allocates
// nothing per frame this way; the buffer is the one every Reader has.
func (fr *Reader) ReadShared() (Frame, error) { return fr.read(true) }

// SharedMax is the largest payload ReadShared returns without a copy.
const SharedMax = readBufSize

// readBufSize is the size of a Reader's buffer.
const readBufSize = 64 << 10

func (fr *Reader) read(shared bool) (Frame, error) {
	if fr.shared > 0 {
		// The last payload ReadShared returned, buffered in full.
		_, _ = fr.r.Discard(fr.shared)
		fr.shared = 0
	}
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return Frame{}, err
	}
	f := Frame{Kind: fr.hdr[0], Seq: binary.BigEndian.Uint64(fr.hdr[1:9])}
	n := uint64(binary.BigEndian.Uint32(fr.hdr[9:13]))
	if n > fr.limit {
		return f, &TooLargeError{Size: n, Limit: fr.limit}
	}
	if n == 0 {
		return f, nil
	}
	if shared && n <= SharedMax {
		p, err := fr.r.Peek(int(n))
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return f, err
		}
		// Still in the buffer until the next read, which skips it.
		fr.shared = len(p)
		f.Payload = p
		return f, nil
	}
	f.Payload = make([]byte, n)
	if _, err := io.ReadFull(fr.r, f.Payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return f, err
	}
	return f, nil
}
