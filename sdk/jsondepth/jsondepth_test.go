package jsondepth_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/sdk/jsondepth"
)

func TestDepth(t *testing.T) {
	for s, want := range map[string]int{
		`1`: 0, `"{["`: 0, `[]`: 1, `{"a":[1,{"b":2}]}`: 3, `["]\"[", [[]]]`: 3, `{"a":"\\"}`: 1,
	} {
		if got := jsondepth.Depth([]byte(s)); got != want {
			t.Errorf("Depth(%s) = %d, want %d", s, got, want)
		}
	}
}

// deep is an object schema nesting n levels of properties (2n JSON levels).
func deep(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
}

// A tools/list answer with one tool nested 9,000 levels deep cannot be read
// by encoding/json at all; pruned, it reads, every other tool is intact and
// the deep one is cut to MaxDepth.
func TestPruneMakesADeepMessageReadable(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"deep","inputSchema":` + deep(9000) +
		`},{"name":"echo","description":"brackets in text: ]]}} {[","inputSchema":{"type":"object","properties":{"m":{"type":"string"}}}}]}}`
	var v any
	if err := json.Unmarshal([]byte(msg), &v); err == nil {
		t.Fatal("encoding/json read a message 18,000 levels deep; the test is moot")
	}
	pruned, n := jsondepth.Prune([]byte(msg), jsondepth.MaxDepth)
	if n != 1 {
		t.Fatalf("pruned %d values, want 1", n)
	}
	var got struct {
		ID     int `json:"id"`
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(pruned, &got); err != nil {
		t.Fatalf("pruned message does not read: %v", err)
	}
	if got.ID != 7 || len(got.Result.Tools) != 2 {
		t.Fatalf("got %+v", got)
	}
	echo := got.Result.Tools[1]
	if echo.Name != "echo" || echo.Description != "brackets in text: ]]}} {[" || string(echo.InputSchema) != `{"type":"object","properties":{"m":{"type":"string"}}}` {
		t.Fatalf("the other tool changed: %+v", echo)
	}
	if d := jsondepth.Depth(got.Result.Tools[0].InputSchema); d != jsondepth.MaxDepth-4 {
		t.Errorf("deep schema depth after pruning = %d, want %d", d, jsondepth.MaxDepth-4)
	}
	if jsondepth.Depth(pruned) != jsondepth.MaxDepth {
		t.Errorf("pruned message depth %d", jsondepth.Depth(pruned))
	}
}

// Text no deeper than the bound is returned as is.
func TestPruneLeavesShallowTextAlone(t *testing.T) {
	s := []byte(`{"a":[[["x"]]]}`)
	out, n := jsondepth.Prune(s, 4)
	if n != 0 || &out[0] != &s[0] {
		t.Fatalf("Prune changed shallow text: %s, %d", out, n)
	}
	out, n = jsondepth.Prune(s, 2)
	if n != 1 || string(out) != `{"a":[null]}` {
		t.Fatalf("Prune(2) = %s, %d", out, n)
	}
}

func FuzzPrune(f *testing.F) {
	for _, s := range []string{`{}`, `[[[[1]]]]`, `{"a":"[\"{"}`, `[{"a":[{"b":[]}]}]`, `"x`, `]]][[[`} {
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max < 1 || max > 50 {
			return
		}
		out, _ := jsondepth.Prune(b, max)
		if json.Valid(b) {
			if !json.Valid(out) {
				t.Fatalf("Prune(%q, %d) = %q is not JSON", b, max, out)
			}
			if d := jsondepth.Depth(out); d > max {
				t.Fatalf("Prune(%q, %d) nests %d deep", b, max, d)
			}
		}
	})
}
