package offered

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A tool whose schema has keywords mcp.ToolInputSchema does not name (as
// server-everything's have: $schema, additionalProperties) is read back
// from a record as it was saved: same digest, same schema.
func TestRecordKeepsSchemasAsWritten(t *testing.T) {
	schema := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"message":{"type":"string","minLength":1}},"required":["message"],"additionalProperties":false}`
	out := `{"type":"object","properties":{"echo":{"type":"string"}},"$defs":{"x":{"type":"number"}}}`
	tool := mcp.Tool{Name: "echo", Description: "Echoes", RawInputSchema: json.RawMessage(schema), RawOutputSchema: json.RawMessage(out)}
	r := &Record{Server: "ev", SettingsDigest: "0123", Tools: []mcp.Tool{tool}}
	if err := r.fill(); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecord(data)
	if err != nil {
		t.Fatalf("the record was refused when read back: %v", err)
	}
	if s := string(got.Tools[0].RawInputSchema); !strings.Contains(s, `"additionalProperties":false`) || !strings.Contains(s, `"$schema"`) {
		t.Errorf("input schema read back as %s", s)
	}
	if s := string(got.Tools[0].RawOutputSchema); !strings.Contains(s, `"$defs"`) {
		t.Errorf("output schema read back as %s", s)
	}
	b := &Baseline{Server: "ev", Tools: map[string]ApprovedTool{"echo": {Digest: r.Digests["echo"], How: "add", Tool: tool}}}
	bd, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var back Baseline
	if err := json.Unmarshal(bd, &back); err != nil {
		t.Fatal(err)
	}
	if d, err := ToolDigest(back.Tools["echo"].Tool); err != nil || d != r.Digests["echo"] {
		t.Errorf("approved tool's digest after a round trip = %s, %v; want %s", d, err, r.Digests["echo"])
	}
}
