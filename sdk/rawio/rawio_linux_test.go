package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk/internal/socktest"
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
	if _, ok := r.(*rawReader); !ok {
		t.Fatal("a pipe from os.Pipe is not read raw")
	}
	if _, ok := w.(*rawWriter); !ok {
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

// A TCP connection is read and written raw, and fails as package net's
// does: EOF bare, a deadline as a net.Error that times out, a closed
// connection as net.ErrClosed, all inside a *net.OpError.
func TestRawConnTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	c := Conn(dialed)
	if !Raw(c) {
		t.Fatal("a TCP connection is not read raw")
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := io.ReadFull(peer, buf[:4]); err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("peer read %q, %v", buf[:n], err)
	}
	if _, err := peer.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if n, err := io.ReadFull(c, buf[:4]); err != nil || string(buf[:n]) != "pong" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	if err := c.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err = c.Read(buf)
	var ne net.Error
	var oe *net.OpError
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("read past the deadline: %#v, want a *net.OpError that times out", err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}

	peer.Close()
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
	c.Close()
	if _, err := c.Read(buf); !errors.Is(err, net.ErrClosed) || !errors.As(err, &oe) {
		t.Fatalf("read of a closed connection: %v, want net.ErrClosed in a *net.OpError", err)
	}
}

// A connection package net does not poll is returned as it is.
func TestRawConnNotForPipes(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Conn(a) != a {
		t.Fatal("net.Pipe's connection was wrapped")
	}
}

// A raw read or write allocates nothing: the function the poller calls is
// made once per reader and writer, not once per call.
func TestRawNoAllocations(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	r, w := rawReaderOf(pr), rawWriterOf(pw)
	msg, buf := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), make([]byte, 64)
	if n := testing.AllocsPerRun(200, func() {
		if _, err := w.Write(msg); err != nil {
			t.Fatal(err)
		}
		if n, err := r.Read(buf); err != nil || n != len(msg) {
			t.Fatalf("read %d, %v", n, err)
		}
	}); n != 0 {
		t.Fatalf("a raw write and read allocated %.1f times, want 0", n)
	}
}

// Reads and writes of one connection from several goroutines at once (a
// net.Conn allows them) each get their own bytes: every byte written
// arrives, once.
func TestRawConcurrentCalls(t *testing.T) {
	a, b := socketPair(t)
	ra, rb := Conn(a), Conn(b)
	const writers, each, size = 4, 200, 100
	errs := make(chan error, writers+2)
	for i := range writers {
		go func() {
			p := bytes.Repeat([]byte{byte('a' + i)}, size)
			for range each {
				if _, err := ra.Write(p); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var mu sync.Mutex
	counts := map[byte]int{}
	total := writers * each * size
	got := 0
	done := make(chan struct{})
	for range 2 {
		go func() {
			buf := make([]byte, 37)
			for {
				n, err := rb.Read(buf)
				mu.Lock()
				for _, c := range buf[:n] {
					counts[c]++
				}
				got += n
				finished := n > 0 && got == total
				mu.Unlock()
				if finished {
					close(done)
				}
				if err != nil || finished {
					errs <- nil
					return
				}
			}
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	<-done
	_ = rb.SetReadDeadline(time.Now()) // the other reader
	for range 2 {
		<-errs
	}
	for i := range writers {
		if counts[byte('a'+i)] != each*size {
			t.Fatalf("writer %c: %d bytes arrived, want %d", 'a'+i, counts[byte('a'+i)], each*size)
		}
	}
}

// socketPair is a connected pair of Unix stream sockets from package net.
func socketPair(t *testing.T) (net.Conn, net.Conn) { return socktest.Pair(t) }
