package tools

import (
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
)

func TestDefinitions(t *testing.T) {
	t.Parallel()
	defs := Definitions()
	want := []string{"conversations_list", "conversation_get", "messages_read", "attachments_fetch", "events_poll",
		"events_wait", "messages_send", "channels_list", "permissions_list_open", "permissions_respond"}
	if len(defs) != len(want) {
		t.Fatalf("%d tools, want %d", len(defs), len(want))
	}
	for i, d := range defs {
		if d.Name != want[i] || Names()[i] != want[i] {
			t.Errorf("tool %d is %s, want %s", i, d.Name, want[i])
		}
		if strings.TrimSpace(d.Description) == "" || strings.HasPrefix(d.Description, " ") {
			t.Errorf("%s: description %q", d.Name, d.Description)
		}
		for kind, raw := range map[string]json.RawMessage{"input": d.InputSchema, "output": d.OutputSchema} {
			var s map[string]any
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("%s %s schema: %v", d.Name, kind, err)
			}
			if s["type"] != "object" {
				t.Errorf("%s %s schema type %v", d.Name, kind, s["type"])
			}
			props, ok := s["properties"].(map[string]any)
			if !ok {
				t.Fatalf("%s %s schema has no properties", d.Name, kind)
			}
			for _, r := range asList(s["required"]) {
				if _, ok := props[r.(string)]; !ok {
					t.Errorf("%s %s schema requires unknown %v", d.Name, kind, r)
				}
			}
			// A round trip keeps the schema.
			back, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var again map[string]any
			if err := json.Unmarshal(back, &again); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Defaults and clamps as the original.
	checks := map[string]map[string][3]float64{
		ConversationsList: {"limit": {50, 1, 200}},
		MessagesRead:      {"limit": {50, 1, 200}},
		EventsPoll:        {"after_cursor": {0, 0, 1e18}, "limit": {20, 1, 200}},
		EventsWait:        {"after_cursor": {0, 0, 1e18}, "timeout_ms": {30000, 0, 300000}},
	}
	for _, d := range defs {
		var s struct {
			Properties map[string]map[string]any
		}
		if err := json.Unmarshal(d.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		for p, c := range checks[d.Name] {
			got := s.Properties[p]
			if got["type"] != "integer" || got["default"] != c[0] || got["minimum"] != c[1] || got["maximum"] != c[2] {
				t.Errorf("%s.%s: %v, want default %v in [%v, %v]", d.Name, p, got, c[0], c[1], c[2])
			}
		}
	}
	if !strings.HasPrefix(Instructions, "Hermes Agent messaging bridge. Use these tools") || !strings.HasSuffix(Instructions, "Matrix, and other connected platforms.") {
		t.Errorf("Instructions = %q", Instructions)
	}
}

func TestCoerceInt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw  string
		want int64
	}{
		{``, 50}, {`null`, 50}, {`7`, 7}, {`0`, 1}, {`-3`, 1}, {`999`, 200}, {`200`, 200},
		{`"abc"`, 50}, {`"12"`, 12}, {`" 12\n"`, 12}, {`"+12"`, 12}, {`"1_2"`, 12}, {`"1__2"`, 50}, {`"_12"`, 50},
		{`"12_"`, 50}, {`"3.5"`, 50}, {`""`, 50}, {`"-"`, 50}, {`3.99`, 3}, {`-0.5`, 1}, {`1e3`, 200},
		{`true`, 1}, {`false`, 1}, {`[]`, 50}, {`{}`, 50}, {`"٣"`, 50},
		{`123456789012345678901234567890`, 200}, {`"-123456789012345678901234567890"`, 1},
	} {
		a := args{}
		if c.raw != "" {
			a["limit"] = json.RawMessage(c.raw)
		}
		if got := a.coerceInt("limit", 50, 1, 200); got != c.want {
			t.Errorf("coerce %s = %d, want %d", c.raw, got, c.want)
		}
	}
	a := args{"c": json.RawMessage(`1e300`)}
	if got := a.coerceInt("c", 0, 0, MaxCursor); got != MaxCursor {
		t.Errorf("1e300 = %d", got)
	}
	a = args{"c": json.RawMessage(`1000000000000000001`)}
	if got := a.coerceInt("c", 0, 0, math.MaxInt64); got != 1000000000000000001 {
		t.Errorf("big = %d", got)
	}
}

// TestDumpsMatchesPython checks the encoder against Python's json.dumps
// itself, on the characters, numbers and nesting the tools meet.
func TestDumpsMatchesPython(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"z": 1, "a": [1.0, 1.5, 1e16, 1.5e-05, 0.0001, -0.0, 123456789012345678901234567890, -0, {}], ` +
		`"s": "quote \" back \\ nl \n tab \t cr \r bs \b ff \f nul \u0000 del \u007f é € 😀 <&> \u2028", ` +
		`"n": null, "t": true, "f": false, "e": [], "o": {"k": {"deep": [[]]}}, "z2": "last"}`)
	v, err := decodeOrdered(raw)
	if err != nil {
		t.Fatal(err)
	}
	script := `import json, sys
v = json.loads(sys.stdin.read())
sys.stdout.write(json.dumps(v) + "\n=====\n" + json.dumps(v, indent=2))`
	cmd := exec.Command(fixture.Python(t), "-c", script)
	cmd.Stdin = strings.NewReader(string(raw))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	wantFlat, wantIndent, _ := strings.Cut(string(out), "\n=====\n")
	for indent, want := range map[int]string{0: wantFlat, 2: wantIndent} {
		got, err := dumps(v, indent)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("indent %d:\n got %s\nwant %s", indent, got, want)
		}
	}
	// Invalid UTF-8, which a Python str cannot hold, is U+FFFD.
	if got, _ := dumps("a\xffb", 0); got != `"a\ufffdb"` {
		t.Errorf("invalid UTF-8: %s", got)
	}
	if _, err := dumps(struct{}{}, 0); err == nil {
		t.Error("an unsupported type encoded")
	}
}
