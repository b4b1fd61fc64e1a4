package rawio

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// Raw I/O. A read or write through os or net enters the scheduler's
// system-call state, and the first one after the process was idle wakes
// the runtime's monitor thread (sysmon) with a futex: in a plugin that
// waits between messages, that is every message, two extra thread
// switches per hop on a busy machine. A non-blocking socket or pipe never
// blocks in read or write, so the stream is read and written with raw
// system calls instead, still parked on the runtime's poller while there
// is nothing to read or no room to write.

// rawConn returns the poller handle of rw when rw is a non-blocking file
// descriptor the runtime polls (a socket, a pipe from os.Pipe), or nil.
func rawConn(rw any) syscall.RawConn {
	sc, ok := rw.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	nonblocking := false
	if err := rc.Control(func(fd uintptr) {
		flags, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = e == 0 && flags&syscall.O_NONBLOCK != 0
	}); err != nil || !nonblocking {
		return nil
	}
	return rc
}

// rawReader reads a non-blocking descriptor with raw read(2) calls. The
// function the poller calls and what it works on are the reader's own,
// made once: a closure per call, with the variables it shares with Read,
// was three allocations per read. mu keeps concurrent Reads (which a
// net.Conn allows) from sharing them.
type rawReader struct {
	rc syscall.RawConn
	fn func(fd uintptr) bool // r.readFD

	mu    sync.Mutex
	p     []byte
	n     uintptr
	errno syscall.Errno
}

func newRawReader(rc syscall.RawConn) *rawReader {
	r := &rawReader{rc: rc}
	r.fn = r.readFD
	return r
}

func (r *rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.mu.Lock()
	r.p = p
	err := r.rc.Read(r.fn)
	n, errno := r.n, r.errno
	r.p, r.n, r.errno = nil, 0, 0
	r.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, os.NewSyscallError("read", errno)
	}
	if n == 0 {
		return 0, io.EOF
	}
	return int(n), nil
}

// readFD is one attempt of Read on fd: false to wait on the poller.
func (r *rawReader) readFD(fd uintptr) bool {
	for {
		r.n, r.errno = sysRead(fd, r.p)
		switch r.errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			r.n, r.errno = 0, 0
			return false // wait on the poller
		}
		return true
	}
}

// rawWriter writes a non-blocking descriptor with raw write(2) calls, all
// of p or an error. Like rawReader, it allocates nothing per call.
type rawWriter struct {
	rc syscall.RawConn
	fn func(fd uintptr) bool // w.writeFD

	mu    sync.Mutex
	p     []byte
	done  int
	errno syscall.Errno
}

func newRawWriter(rc syscall.RawConn) *rawWriter {
	w := &rawWriter{rc: rc}
	w.fn = w.writeFD
	return w
}

func (w *rawWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.p = p
	err := w.rc.Write(w.fn)
	done, errno := w.done, w.errno
	w.p, w.done, w.errno = nil, 0, 0
	w.mu.Unlock()
	if err != nil {
		return done, err
	}
	if errno != 0 {
		return done, os.NewSyscallError("write", errno)
	}
	return done, nil
}

// writeFD writes what is left of w.p to fd: false to wait for room on the
// poller.
func (w *rawWriter) writeFD(fd uintptr) bool {
	for w.done < len(w.p) {
		n, e := sysWrite(fd, w.p[w.done:])
		switch e {
		case 0:
			w.done += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false // wait for room on the poller
		default:
			w.errno = e
			return true
		}
	}
	return true
}

// rawReaderOf returns r, read with raw system calls when it can be.
func rawReaderOf(r io.Reader) io.Reader {
	if rc := rawConn(r); rc != nil {
		return newRawReader(rc)
	}
	return r
}

// rawWriterOf returns w, written with raw system calls when it can be.
func rawWriterOf(w io.Writer) io.Writer {
	if rc := rawConn(w); rc != nil {
		return newRawWriter(rc)
	}
	return w
}

// Raw reports whether v, from Reader or Writer, uses raw system calls.
func Raw(v any) bool {
	switch v.(type) {
	case *rawReader, *rawWriter, *rawNetConn:
		return true
	}
	return false
}

// rawNetConn is a net.Conn read and written with raw system calls.
type rawNetConn struct {
	net.Conn
	r *rawReader
	w *rawWriter
}

func (c *rawNetConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		err = c.opError("read", err)
	}
	return n, err
}

func (c *rawNetConn) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		err = c.opError("write", err)
	}
	return n, err
}

// opError wraps err as package net does, so that callers that look for a
// *net.OpError (or a timeout through net.Error) find one.
func (c *rawNetConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// connOf returns c read and written raw when it can be.
func connOf(c net.Conn) net.Conn {
	if rc := rawConn(c); rc != nil {
		return &rawNetConn{Conn: c, r: newRawReader(rc), w: newRawWriter(rc)}
	}
	return c
}
