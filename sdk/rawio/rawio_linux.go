package rawio

import (
	"io"
	"net"
	"os"
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

// rawReader reads a non-blocking descriptor with raw read(2) calls.
type rawReader struct{ rc syscall.RawConn }

func (r rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	if err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, errno = sysRead(fd, p)
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait on the poller
			}
			return true
		}
	}); err != nil {
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

// rawWriter writes a non-blocking descriptor with raw write(2) calls, all
// of p or an error.
type rawWriter struct{ rc syscall.RawConn }

func (w rawWriter) Write(p []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	if err := w.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			n, e := sysWrite(fd, p[done:])
			switch e {
			case 0:
				done += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait for room on the poller
			default:
				errno = e
				return true
			}
		}
		return true
	}); err != nil {
		return done, err
	}
	if errno != 0 {
		return done, os.NewSyscallError("write", errno)
	}
	return done, nil
}

// rawReaderOf returns r, read with raw system calls when it can be.
func rawReaderOf(r io.Reader) io.Reader {
	if rc := rawConn(r); rc != nil {
		return rawReader{rc}
	}
	return r
}

// rawWriterOf returns w, written with raw system calls when it can be.
func rawWriterOf(w io.Writer) io.Writer {
	if rc := rawConn(w); rc != nil {
		return rawWriter{rc}
	}
	return w
}

// Raw reports whether v, from Reader or Writer, uses raw system calls.
func Raw(v any) bool {
	switch v.(type) {
	case rawReader, rawWriter, *rawNetConn:
		return true
	}
	return false
}

// rawNetConn is a net.Conn read and written with raw system calls.
type rawNetConn struct {
	net.Conn
	r rawReader
	w rawWriter
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
		return &rawNetConn{Conn: c, r: rawReader{rc}, w: rawWriter{rc}}
	}
	return c
}
