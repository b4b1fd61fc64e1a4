package wire

import (
	"bytes"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/hermes-agent/hermes/sdk/rawio"
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
	if !rawio.Raw(rawio.Reader(a)) || !rawio.Raw(rawio.Reader(b)) {
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
