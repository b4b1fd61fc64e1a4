package transportwire

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

var headerCases = []http.Header{
	{},
	{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}, "Mcp-Protocol-Version": {"2026-07-28"}},
	{"X-Many": {"a", "b", ""}, "X-None": {}, "X-Null": nil},
	{"X-Quote": {`say "hi"`}, "X-Unicode": {"héllo"}, "X-Html": {"<a&b>"}, "X-Ctl": {"a\tb"}},
	{"x-lower": {"v"}},
}

// What AppendHeader writes is what encoding/json writes, byte for byte,
// and ParseHeader reads it (and encoding/json's) back to the same headers.
func TestHeaderCodec(t *testing.T) {
	for _, h := range headerCases {
		want, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendHeader(nil, h)
		if err != nil || string(got) != string(want) {
			t.Fatalf("AppendHeader(%v) = %s, %v; encoding/json writes %s", h, got, err, want)
		}
		back, err := ParseHeader(got)
		if err != nil || !reflect.DeepEqual(back, h) {
			t.Fatalf("ParseHeader(%s) = %#v, %v; want %#v", got, back, err, h)
		}
	}
}

// JSON the fast path does not take (white space, escapes) is read by
// encoding/json; what neither reads is an error.
func TestParseHeaderFallsBack(t *testing.T) {
	h, err := ParseHeader([]byte(` { "A" : [ "x\u0041" ] } `))
	if err != nil || h.Get("A") != "xA" {
		t.Fatalf("got %v, %v", h, err)
	}
	for _, bad := range []string{``, `{`, `{"A":["x"]`, `{"A":"x"}`, `[]`, `{"A":["x"]}x`} {
		if _, err := ParseHeader([]byte(bad)); err == nil {
			t.Fatalf("ParseHeader(%q) succeeded", bad)
		}
	}
}
