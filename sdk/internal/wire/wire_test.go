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
