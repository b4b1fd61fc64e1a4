package sdk

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := newFrameWriter(&buf)
	big := `{"text":"` + strings.Repeat("x", 300<<10) + `"}`
	in := []*frame{
		{K: frameRequest, S: 1, M: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), H: http.Header{"Mcp-Method": {"tools/list"}}},
		{K: frameResponse, S: 1, M: json.RawMessage(big), Sid: "abc\"def"},
		{K: frameClosed, E: &Error{Code: CodeAuth, Message: "needs credentials", Status: 401, WWWAuthenticate: `Bearer resource_metadata="x"`}},
		{K: frameCancel, S: 18446744073709551615},
	}
	for _, f := range in {
		if err := w.write(f); err != nil {
			t.Fatal(err)
		}
	}
	r := newFrameReader(&buf)
	for i, want := range in {
		got, err := r.read()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if got.K != want.K || got.S != want.S || !bytes.Equal(got.M, want.M) || got.Sid != want.Sid {
			t.Fatalf("frame %d: got %+v want %+v", i, got, want)
		}
		if (want.E == nil) != (got.E == nil) || (want.E != nil && *want.E != *got.E) {
			t.Fatalf("frame %d error: got %+v want %+v", i, got.E, want.E)
		}
		if want.H != nil && got.H.Get("Mcp-Method") != "tools/list" {
			t.Fatalf("frame %d header lost: %v", i, got.H)
		}
	}
}

func TestErrorKinds(t *testing.T) {
	if AsError(nil) != nil {
		t.Fatal("nil error became non-nil")
	}
	e := NewError(CodeAuth, "needs %s", "token")
	if ErrorCode(e) != CodeAuth || e.Error() != "needs token" {
		t.Fatalf("got %v", e)
	}
}

// FuzzFrameReader: arbitrary bytes on the stream never panic the reader, and
// every frame it accepts survives a write/read round trip.
func FuzzFrameReader(f *testing.F) {
	f.Add([]byte(`{"k":"q","s":1,"m":{"id":1}}` + "\n"))
	f.Add([]byte(`{"k":"c","e":{"code":"closed","message":"x"}}` + "\n"))
	f.Add([]byte("garbage\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newFrameReader(bytes.NewReader(data))
		for {
			fr, err := r.read()
			if err != nil {
				return
			}
			if len(fr.M) > 0 && !json.Valid(fr.M) {
				t.Fatalf("accepted invalid message %q", fr.M)
			}
			var buf bytes.Buffer
			if err := newFrameWriter(&buf).write(fr); err != nil {
				continue
			}
			back, err := newFrameReader(&buf).read()
			if err != nil {
				t.Fatalf("re-read of %q: %v", buf.Bytes(), err)
			}
			if back.K != fr.K || back.S != fr.S {
				t.Fatalf("round trip changed frame: %+v vs %+v", back, fr)
			}
		}
	})
}
