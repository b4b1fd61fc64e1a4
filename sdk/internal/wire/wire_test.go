package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	if err := w.Write('m', 7, msg); err != nil {
		t.Fatal(err)
	}
	if err := w.Write('x', 1<<40); err != nil {
		t.Fatal(err)
	}
	if err := w.Write('h', 3, []byte("ab"), []byte("cd")); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&buf, 0)
	f, err := r.Read()
	if err != nil || f.Kind != 'm' || f.Seq != 7 || !bytes.Equal(f.Payload, msg) {
		t.Fatalf("first frame = %+v, %v", f, err)
	}
	f, err = r.Read()
	if err != nil || f.Kind != 'x' || f.Seq != 1<<40 || len(f.Payload) != 0 {
		t.Fatalf("second frame = %+v, %v", f, err)
	}
	f, err = r.Read()
	if err != nil || string(f.Payload) != "abcd" {
		t.Fatalf("third frame = %+v, %v", f, err)
	}
	if _, err := r.Read(); err != io.EOF {
		t.Fatalf("end of stream: got %v, want io.EOF", err)
	}
}

func TestLimit(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write('m', 1, bytes.Repeat([]byte("a"), 100)); err != nil {
		t.Fatal(err)
	}
	_, err := NewReader(&buf, 99).Read()
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 100 || tl.Limit != 99 {
		t.Fatalf("got %v, want a TooLargeError of 100 over 99", err)
	}
	if !strings.Contains(err.Error(), "100 bytes") {
		t.Fatalf("error %q does not give the size", err)
	}
}

func TestTruncated(t *testing.T) {
	var buf bytes.Buffer
	_ = NewWriter(&buf).Write('m', 1, []byte("hello"))
	b := buf.Bytes()[:buf.Len()-2]
	if _, err := NewReader(bytes.NewReader(b), 0).Read(); err != io.ErrUnexpectedEOF {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := NewReader(bytes.NewReader(b[:5]), 0).Read(); err != io.ErrUnexpectedEOF {
		t.Fatalf("cut header: got %v, want io.ErrUnexpectedEOF", err)
	}
}

// FuzzReader feeds arbitrary bytes to the reader: it must never panic, never
// allocate past its limit, and every frame it returns must round-trip.
func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	_ = NewWriter(&buf).Write('m', 1, []byte(`{"a":1}`))
	f.Add(buf.Bytes())
	f.Add([]byte{'m', 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), 1<<16)
		for {
			fr, err := r.Read()
			if err != nil {
				return
			}
			if len(fr.Payload) > 1<<16 {
				t.Fatalf("payload of %d bytes over the limit", len(fr.Payload))
			}
			var out bytes.Buffer
			if err := NewWriter(&out).Write(fr.Kind, fr.Seq, fr.Payload); err != nil {
				t.Fatal(err)
			}
			back, err := NewReader(&out, 0).Read()
			if err != nil || back.Kind != fr.Kind || back.Seq != fr.Seq || !bytes.Equal(back.Payload, fr.Payload) {
				t.Fatalf("frame did not round-trip: %+v vs %+v (%v)", fr, back, err)
			}
		}
	})
}

// frames is a stream of frames of every size class ReadShared treats
// differently: empty, small, exactly SharedMax, one past it, and several
// small ones back to back (which share the buffer).
func frames(t testing.TB) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i, n := range []int{0, 7, 300, SharedMax, SharedMax + 1, 1, 2 * SharedMax, 5, SharedMax - 1} {
		p := bytes.Repeat([]byte{byte('a' + i)}, n)
		if err := w.Write(byte('m'+i), uint64(i), p); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// ReadShared returns the frames Read returns, each valid until the next
// call, whatever their size, with the same errors at the end.
func TestReadSharedSameAsRead(t *testing.T) {
	stream := frames(t)
	for _, cut := range []int{len(stream), len(stream) - 3, len(stream) - SharedMax/2, HeaderSize + 3} {
		assertSameFrames(t, stream[:cut], 0)
	}
	assertSameFrames(t, stream, SharedMax) // the limit refuses the larger ones
}

// assertSameFrames reads data with Read and with ReadShared and fails
// unless both give the same frames, then the same error.
func assertSameFrames(t testing.TB, data []byte, limit uint64) {
	t.Helper()
	// A reader that returns a few bytes at a time, so that ReadShared
	// meets payloads split across reads.
	plain, shared := NewReader(bytes.NewReader(data), limit), NewReader(&trickle{data: data}, limit)
	for i := 0; ; i++ {
		want, werr := plain.Read()
		got, gerr := shared.ReadShared()
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("frame %d: Read failed with %v, ReadShared with %v", i, werr, gerr)
		}
		if werr != nil {
			return // the end, or a frame over the limit: nothing can follow
		}
		if got.Kind != want.Kind || got.Seq != want.Seq || !bytes.Equal(got.Payload, want.Payload) {
			t.Fatalf("frame %d: ReadShared gave %c/%d/%d bytes, Read %c/%d/%d bytes", i, got.Kind, got.Seq, len(got.Payload), want.Kind, want.Seq, len(want.Payload))
		}
		if len(want.Payload) == 0 && got.Payload != nil && len(got.Payload) != 0 {
			t.Fatalf("frame %d: empty payload came back as %d bytes", i, len(got.Payload))
		}
	}
}

// trickle reads its data 1000 bytes at a time at most.
type trickle struct {
	data []byte
}

func (r *trickle) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1000)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// A shared payload stays as it was until the next call, even when the
// next frame is already buffered behind it; frames read with ReadShared
// and Read can be mixed.
func TestReadSharedValidUntilNextCall(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	_ = w.Write('m', 1, []byte("first"))
	_ = w.Write('m', 2, []byte("second"))
	_ = w.Write('m', 3, []byte("third"))
	r := NewReader(&buf, 0)
	f1, err := r.ReadShared()
	if err != nil || string(f1.Payload) != "first" {
		t.Fatalf("first: %q %v", f1.Payload, err)
	}
	f2, err := r.Read()
	if err != nil || string(f2.Payload) != "second" {
		t.Fatalf("second: %q %v", f2.Payload, err)
	}
	f3, err := r.ReadShared()
	if err != nil || string(f3.Payload) != "third" || string(f2.Payload) != "second" {
		t.Fatalf("third: %q %v (second now %q)", f3.Payload, err, f2.Payload)
	}
	if _, err := r.ReadShared(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

// A frame read with ReadShared costs no allocation once the reader is
// made.
func TestReadSharedAllocatesNothing(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	for range 200 {
		_ = w.Write('m', 1, msg)
	}
	r := NewReader(&buf, 0)
	if n := testing.AllocsPerRun(100, func() {
		if f, err := r.ReadShared(); err != nil || !bytes.Equal(f.Payload, msg) {
			t.Fatalf("%q %v", f.Payload, err)
		}
	}); n != 0 {
		t.Fatalf("ReadShared allocated %.1f times per frame, want 0", n)
	}
}

// FuzzReadShared: on any input, ReadShared gives what Read gives. The
// limit is 1 to 4×65535+1 bytes (past SharedMax), never the format's 4 GiB,
// which Read would allocate for a header that announces it.
func FuzzReadShared(f *testing.F) {
	f.Add(frames(f), uint16(0xffff))
	var buf bytes.Buffer
	_ = NewWriter(&buf).Write('m', 1, []byte(`{"a":1}`))
	f.Add(buf.Bytes(), uint16(3))
	f.Add([]byte{'m', 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		assertSameFrames(t, data, 4*uint64(limit)+1)
	})
}
