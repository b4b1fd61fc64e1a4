package offered

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/mark3labs/mcp-go/mcp"
)

// engineDigest is ToolDigest as the versions of hermes that kept mcp-go's
// mcp.Tool computed it: over the raw input schema when the listing kept
// it, else the typed schema encoded, and the typed annotations encoded. An
// approval written by them holds these digests.
func engineDigest(t *testing.T, tool mcp.Tool) string {
	t.Helper()
	schema := []byte(tool.RawInputSchema)
	if len(schema) == 0 {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		schema = b
	}
	cs, err := Canonical(schema)
	if err != nil {
		t.Fatal(err)
	}
	ab, _ := json.Marshal(tool.Annotations)
	ca, err := Canonical(ab)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(definition{Name: tool.Name, Description: tool.Description, InputSchema: cs, Annotations: ca})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// engineTools are tools as mcp-go decoded them, of every shape a listing
// gives: a raw schema with keywords mcp-go's struct drops, a typed one, no
// schema at all, hints, a title, an output schema, icons and _meta (which
// the current format drops), HTML characters.
func engineTools() []mcp.Tool {
	yes, no := true, false
	return []mcp.Tool{
		{Name: "raw", Description: "Reads <files> & more", RawInputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"],"additionalProperties":false}`),
			RawOutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
			Annotations:     mcp.ToolAnnotation{Title: "Raw", ReadOnlyHint: &yes, DestructiveHint: &no, OpenWorldHint: &yes}},
		{Name: "typed", Title: "Typed", Description: "typed schema", InputSchema: mcp.ToolInputSchema{Type: "object",
			Properties: map[string]any{"n": map[string]any{"type": "number"}}, Required: []string{"n"}},
			Annotations: mcp.ToolAnnotation{DestructiveHint: &yes, IdempotentHint: &no}},
		{Name: "bare"},
		{Name: "decorated", Description: "with icons", RawInputSchema: json.RawMessage(`{"type":"object"}`),
			Icons: []mcp.Icon{{Src: "https://example.com/i.png"}}, Meta: &mcp.Meta{AdditionalFields: map[string]any{"x": 1}}},
	}
}

// A cache record and an approval written in the formats of the versions
// that kept mcp-go's mcp.Tool (record version 2, baseline version 1) are
// read once and rewritten in the current formats, and no tool drifts: the
// digests of the same definitions are the same.
func TestUpgradeKeepsApprovals(t *testing.T) {
	home := t.TempDir()
	st := Open(home, nil)
	srv := &config.Server{Name: "up", Command: "srv", Transport: "stdio", Enabled: true}
	tools := engineTools()

	// The files as the earlier versions wrote them.
	digests := map[string]string{}
	approved := map[string]any{}
	for _, tl := range tools {
		d := engineDigest(t, tl)
		digests[tl.Name] = d
		approved[tl.Name] = map[string]any{"digest": d, "approved_at": "2026-01-02T03:04:05Z", "how": "add", "tool": tl}
	}
	toolsJSON, err := encodeCompact(tools)
	if err != nil {
		t.Fatal(err)
	}
	head, err := encodeCompact(map[string]any{
		"version": 2, "server": "up", "settings_digest": SettingsDigest(srv), "fetched_at": "2026-01-02T03:04:05Z",
		"protocol": "2025-11-25", "server_info": mcp.Implementation{Name: "t", Version: "1"},
		"capabilities": mcp.ServerCapabilities{Tools: &struct {
			ListChanged bool `json:"listChanged,omitempty"`
		}{ListChanged: true}},
		"digests": digests, "tools_sum": toolsSum(toolsJSON),
	})
	if err != nil {
		t.Fatal(err)
	}
	oldRecord := append(bytes.TrimSuffix(head, []byte("}")), []byte(`,"tools":`+string(toolsJSON)+`}`)...)
	oldBaseline, err := json.Marshal(map[string]any{"version": 1, "server": "up", "tools": approved})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, Dir), 0o700); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{st.RecordPath("up"): oldRecord, st.BaselinePath("up"): oldBaseline} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// Read once: both are rewritten.
	rec, err := st.Load(srv)
	if err != nil {
		t.Fatalf("the version 2 record: %v", err)
	}
	b, err := st.Baseline("up")
	if err != nil {
		t.Fatalf("the version 1 baseline: %v", err)
	}
	for name, d := range digests {
		if rec.Digests[name] != d || b.Tools[name].Digest != d {
			t.Errorf("tool %s: record digest %s, approved %s; was %s", name, rec.Digests[name], b.Tools[name].Digest, d)
		}
	}
	data, _ := os.ReadFile(st.RecordPath("up"))
	if !bytes.Contains(data, []byte(`"version":3,`)) || bytes.Contains(data, []byte(`"icons"`)) {
		t.Fatalf("the record was not rewritten in version 3:\n%s", data)
	}
	if data, _ := os.ReadFile(st.BaselinePath("up")); !bytes.Contains(data, []byte(`"version":2,`)) || bytes.Contains(data, []byte(`"tool":`)) {
		t.Fatalf("the baseline was not rewritten in version 2:\n%s", data)
	}

	// No drift: against the record's stored digests, against its tools,
	// and against the tools as the session hands them over now.
	rec, err = st.Load(srv)
	if err != nil || rec.Version != FormatVersion {
		t.Fatalf("the rewritten record: %+v, %v", rec, err)
	}
	b, err = st.Baseline("up")
	if err != nil || b.upgraded {
		t.Fatalf("the rewritten baseline: %v", err)
	}
	if ch := CompareDigests(b, rec.Tools, rec.Digests); len(ch) != 0 {
		t.Errorf("drift against the stored digests: %+v", ch)
	}
	if ch := Compare(b, rec.Tools); len(ch) != 0 {
		t.Errorf("drift against the record's tools: %+v", ch)
	}
	live := session.ToolValues(tools)
	if ch := Compare(b, live); len(ch) != 0 {
		t.Errorf("drift against the listing: %+v", ch)
	}
	for i, tl := range rec.Tools {
		if tl.Name != live[i].Name || !bytes.Equal(tl.InputSchema, live[i].InputSchema) || !bytes.Equal(tl.OutputSchema, live[i].OutputSchema) {
			t.Errorf("tool %s read back as %+v, listed as %+v", tl.Name, tl, live[i])
		}
	}
	if a := rec.Tools[0].Annotations; a.ReadOnly == nil || !*a.ReadOnly || a.Destructive == nil || *a.Destructive || a.Title != "Raw" {
		t.Errorf("annotations of %s read back as %+v", rec.Tools[0].Name, rec.Tools[0].Annotations)
	}

	// A Save of the same listing keeps the digests; a changed tool drifts.
	if err := st.Save(&Record{Server: "up", SettingsDigest: SettingsDigest(srv), FetchedAt: time.Now(), Tools: live}); err != nil {
		t.Fatal(err)
	}
	again, err := st.Load(srv)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range digests {
		if again.Digests[name] != d {
			t.Errorf("tool %s: digest %s after Save, was %s", name, again.Digests[name], d)
		}
	}
	changed := append([]mcpvalue.Tool(nil), live...)
	changed[1].Description = "now deletes"
	if ch := Compare(b, changed); len(ch) != 1 || ch[0].Tool != "typed" || !ch[0].Description {
		t.Errorf("a changed tool: %+v", ch)
	}
}
