package sdk

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// Frame kinds on the message stream. Each direction has its own sequence
// space: a response frame answers a request frame that travelled the other
// way.
const (
	frameRequest      = "q" // a JSON-RPC request (host→plugin: to the server; plugin→host: from the server)
	frameResponse     = "r" // the answer to a request frame of the other side
	frameNotification = "n" // a JSON-RPC notification
	frameAck          = "a" // plugin→host: a notification was sent (or failed, with e)
	frameCancel       = "x" // host→plugin: abandon request s
	frameVersion      = "v" // host→plugin: negotiated protocol version in m (a JSON string)
	frameClosed       = "c" // plugin→host: the connection ended, reason in e
	frameWarning      = "w" // plugin→host: something the user should know, in e
)

// frame is one line on the message stream.
type frame struct {
	K string          `json:"k"`
	S uint64          `json:"s,omitempty"`
	M json.RawMessage `json:"m,omitempty"`
	H http.Header     `json:"h,omitempty"`
	E *Error          `json:"e,omitempty"`
	// Sid is the transport's session id, sent with responses.
	Sid string `json:"sid,omitempty"`
}

// frameWriter writes frames, one per line, safely from many goroutines.
type frameWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
}

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// write encodes f by hand for the common fields, so a message is copied once
// and never re-encoded.
func (fw *frameWriter) write(f *frame) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	b := fw.buf[:0]
	b = append(b, `{"k":`...)
	k, err := json.Marshal(f.K)
	if err != nil {
		return err
	}
	b = append(b, k...)
	if f.S != 0 {
		b = append(b, `,"s":`...)
		b = strconv.AppendUint(b, f.S, 10)
	}
	if len(f.M) > 0 {
		b = append(b, `,"m":`...)
		b = append(b, f.M...)
	}
	if len(f.H) > 0 {
		h, err := json.Marshal(f.H)
		if err != nil {
			return err
		}
		b = append(b, `,"h":`...)
		b = append(b, h...)
	}
	if f.E != nil {
		e, err := json.Marshal(f.E)
		if err != nil {
			return err
		}
		b = append(b, `,"e":`...)
		b = append(b, e...)
	}
	if f.Sid != "" {
		s, _ := json.Marshal(f.Sid)
		b = append(b, `,"sid":`...)
		b = append(b, s...)
	}
	b = append(b, '}', '\n')
	fw.buf = b
	if _, err := fw.w.Write(b); err != nil {
		return err
	}
	if cap(fw.buf) > 1<<20 {
		fw.buf = nil // don't keep a huge message's buffer around
	}
	return fw.w.Flush()
}

// frameReader reads frames written by a frameWriter.
type frameReader struct {
	r *bufio.Reader
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10)}
}

func (fr *frameReader) read() (*frame, error) {
	line, err := fr.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A long message: collect the rest of the line.
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			line, err = fr.r.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil {
		return nil, err
	}
	f := new(frame)
	if err := json.Unmarshal(line, f); err != nil {
		return nil, err
	}
	return f, nil
}
