package rawio

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

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
