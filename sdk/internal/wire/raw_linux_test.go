package wire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// socketPair returns the two ends of a connected Unix stream socket as the
// runtime polls them (non-blocking), the way the host and a plugin hold
// their message stream.
func socketPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "pair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
		t.Cleanup(func() { c.Close() })
	}
	return conns[0], conns[1]
}

// Frames far larger than the socket's buffer cross whole and in order: the
// raw writer waits on the poller for room and resumes where it stopped.
func TestRawFramesOverSocket(t *testing.T) {
	a, b := socketPair(t)
	if rawConn(a) == nil || rawConn(b) == nil {
		t.Fatal("a non-blocking socket is not read and written raw")
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
	small := []byte(`{"jsonrpc":"2.0","id":1}`)
	errc := make(chan error, 1)
	go func() {
		w := NewWriter(a)
		for i := range 3 {
			if err := w.Write(1, uint64(i), small, big); err != nil {
				errc <- err
				return
			}
		}
		errc <- a.Close()
	}()
	r := NewReader(b, 0)
	for i := range 3 {
		f, err := r.Read()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if f.Seq != uint64(i) || len(f.Payload) != len(small)+len(big) || !bytes.Equal(f.Payload[:len(small)], small) || !bytes.Equal(f.Payload[len(small):], big) {
			t.Fatalf("frame %d: seq %d, %d bytes: not what was written", i, f.Seq, len(f.Payload))
		}
	}
	if _, err := r.Read(); err != io.EOF {
		t.Fatalf("after the writer closed: %v, want io.EOF", err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// A pipe from os.Pipe is polled too, and a read deadline still ends a
// read that waits (the stdio plugin bounds the drain of a server's stdout
// after its exit so).
func TestRawPipeDeadline(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	r, w := rawReaderOf(pr), rawWriterOf(pw)
	if _, ok := r.(rawReader); !ok {
		t.Fatal("a pipe from os.Pipe is not read raw")
	}
	if _, ok := w.(rawWriter); !ok {
		t.Fatal("a pipe from os.Pipe is not written raw")
	}
	if _, err := w.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "line\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if err := pr.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
}

// A write to a pipe whose reader is gone fails with EPIPE, as os.File's.
func TestRawWriteBrokenPipe(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	pr.Close()
	if _, err := rawWriterOf(pw).Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write to a pipe without reader: %v, want EPIPE", err)
	}
}

// A descriptor in blocking mode is left to os: a raw read there would
// block the thread without the scheduler knowing.
func TestRawNotForBlockingFiles(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rawConn(f) != nil {
		t.Fatal("a blocking file is read raw")
	}
	if _, ok := rawReaderOf(f).(*os.File); !ok {
		t.Fatal("rawReaderOf did not return the blocking file itself")
	}
}
