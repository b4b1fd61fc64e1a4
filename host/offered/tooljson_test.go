package offered

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/mark3labs/mcp-go/mcp"
)

// A tool whose schema has keywords mcp.ToolInputSchema does not name (as
// server-everything's have: $schema, additionalProperties) is read back
// from a record as it was saved: same digest, same schema.
func TestRecordKeepsSchemasAsWritten(t *testing.T) {
	schema := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"message":{"type":"string","minLength":1}},"required":["message"],"additionalProperties":false}`
	out := `{"type":"object","properties":{"echo":{"type":"string"}},"$defs":{"x":{"type":"number"}}}`
	// old is the tool as the engine decoded it, tool as hermes keeps it.
	old := mcp.Tool{Name: "echo", Description: "Echoes", RawInputSchema: json.RawMessage(schema), RawOutputSchema: json.RawMessage(out)}
	tool := session.ToolValue(old)
	r := &Record{Server: "ev", SettingsDigest: "0123", Tools: []mcpvalue.Tool{tool}}
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
	if s := string(got.Tools[0].InputSchema); !strings.Contains(s, `"additionalProperties":false`) || !strings.Contains(s, `"$schema"`) {
		t.Errorf("input schema read back as %s", s)
	}
	if s := string(got.Tools[0].OutputSchema); !strings.Contains(s, `"$defs"`) {
		t.Errorf("output schema read back as %s", s)
	}
	// A baseline of format version 1 held the whole definition: it is
	// still read, with its schema as written, so the tool is unchanged.
	v1 := map[string]any{"version": 1, "server": "ev", "tools": map[string]any{
		"echo": map[string]any{"digest": r.Digests["echo"], "how": "add", "tool": old}}}
	bd, err := json.Marshal(v1)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeBaseline(bd)
	if err != nil {
		t.Fatalf("a version 1 baseline was refused: %v\n%s", err, bd)
	}
	if back.Version != BaselineVersion || back.Tools["echo"].Digest != r.Digests["echo"] {
		t.Errorf("version 1 baseline read as %+v", back)
	}
	if ch := Compare(back, []mcpvalue.Tool{tool}); len(ch) != 0 {
		t.Errorf("the tool approved in a version 1 baseline drifted: %v", ch)
	}
}
