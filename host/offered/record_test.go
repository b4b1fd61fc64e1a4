package offered_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/session"
)

// A record of version 1 (no tools_sum, the engine's encoding of a tool) is
// still read: its digests are recomputed, and one that does not match its
// tool is refused. One that is read is rewritten as the current version.
func TestRecordVersion1StillRead(t *testing.T) {
	st := offered.Open(t.TempDir(), nil)
	srv := server("a")
	engine := engineTool("echo", "says it back", "text")
	echo := session.ToolValue(engine)
	d, err := offered.ToolDigest(echo)
	if err != nil {
		t.Fatal(err)
	}
	v1 := func(digest string) []byte {
		tools, _ := json.Marshal([]any{engine})
		return []byte(`{"version":1,"server":"a","settings_digest":"` + offered.SettingsDigest(srv) +
			`","fetched_at":"2026-01-02T03:04:05Z","protocol":"2025-11-25","server_info":{"name":"t","version":"1"},"capabilities":{},"tools":` +
			string(tools) + `,"digests":{"echo":"` + digest + `"}}`)
	}
	if err := os.MkdirAll(filepath.Dir(st.RecordPath("a")), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.RecordPath("a"), v1(d), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := st.Load(srv)
	if err != nil {
		t.Fatalf("version 1 record: %v", err)
	}
	if r.Version != offered.FormatVersion || len(r.Tools) != 1 || r.Digests["echo"] != d {
		t.Fatalf("version 1 record read as %+v", r)
	}
	if data, err := os.ReadFile(st.RecordPath("a")); err != nil || !bytes.Contains(data, []byte(`"version":3,`)) {
		t.Fatalf("the version 1 record was not rewritten: %v\n%s", err, data)
	}
	if r, err := st.Load(srv); err != nil || r.Digests["echo"] != d || r.ToolsSum == "" {
		t.Fatalf("the rewritten record: %+v, %v", r, err)
	}
	wrong := strings.Repeat("0", 64)
	if err := os.WriteFile(st.RecordPath("a"), v1(wrong), 0o600); err != nil {
		t.Fatal(err)
	}
	var ue *offered.UnusableError
	if _, err := st.Load(srv); !errors.As(err, &ue) || !strings.Contains(err.Error(), "does not match its digest") {
		t.Fatalf("version 1 record with a wrong digest: %v, want refused", err)
	}
	// The next Save writes the current version.
	if err := st.Save(record(srv, echo)); err != nil {
		t.Fatal(err)
	}
	if r, err := st.Load(srv); err != nil || r.Version != offered.FormatVersion || r.ToolsSum == "" {
		t.Fatalf("after Save: %+v, %v", r, err)
	}
}

// A record of version 2 whose tools were changed in the file (its digests
// left as they were) is refused: the stored digests are only taken for
// the tools they were written with.
func TestRecordChangedToolsRefused(t *testing.T) {
	st := offered.Open(t.TempDir(), nil)
	srv := server("a")
	if err := st.Save(record(srv, tool("echo", "says it back", "text"), tool("add", "adds", "a", "b"))); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(st.RecordPath("a"))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func([]byte) []byte{
		"description": func(b []byte) []byte { return bytes.Replace(b, []byte("says it back"), []byte("sends it away"), 1) },
		"schema":      func(b []byte) []byte { return bytes.Replace(b, []byte(`"text"`), []byte(`"path"`), 1) },
		"no sum":      func(b []byte) []byte { return bytes.Replace(b, []byte(`"tools_sum"`), []byte(`"tools_sun"`), 1) },
	} {
		bad := edit(good)
		if bytes.Equal(bad, good) {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if _, err := offered.DecodeRecord(bad); err == nil {
			t.Errorf("%s changed in the file: the record was accepted", name)
		}
	}
	// Whitespace and HTML escaping (of json.Marshal, which mcp.Tool
	// encodes with, or not) do not change the sum.
	if err := st.Save(record(srv, tool("echo", "a <b> & c", "text"))); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(st.RecordPath("a"))
	if err != nil {
		t.Fatal(err)
	}
	plain := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(saved))
	if !strings.Contains(plain, "a <b> & c") {
		t.Fatalf("unescaped: %s", plain)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, []byte(plain), "", "  "); err != nil {
		t.Fatal(err)
	}
	if _, err := offered.DecodeRecord(indented.Bytes()); err != nil {
		t.Fatalf("an indented record without HTML escaping: %v", err)
	}
}

// A record is taken without recomputing its digests when the plain sha256
// of its tools as the file holds them is its tools_sum (what Save writes:
// compact, and here without a character HTML escaping changes). An edit
// that keeps the file compact is refused all the same, through the store
// as lazy start reads it.
func TestRecordEditedCompactRefused(t *testing.T) {
	st := offered.Open(t.TempDir(), nil)
	srv := server("a")
	if err := st.Save(record(srv, tool("echo", "says it back", "text"))); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(st.RecordPath("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(srv); err != nil {
		t.Fatalf("the record as saved: %v", err)
	}
	bad := bytes.Replace(good, []byte(`"says it back"`), []byte(`"uploads it too"`), 1)
	if bytes.Equal(bad, good) || !json.Valid(bad) {
		t.Fatal("the edit did not apply")
	}
	if err := os.WriteFile(st.RecordPath("a"), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	var ue *offered.UnusableError
	if _, err := st.Load(srv); !errors.As(err, &ue) || !strings.Contains(err.Error(), "tools_sum") {
		t.Fatalf("a record edited on disk: %v, want refused for its checksum", err)
	}
}

// An approval's parts (what says how a tool changed) are read only when a
// change is described: a baseline whose parts were damaged on disk still
// decides by each tool's digest, so a changed tool is still caught (its
// definition as a whole is said to have changed), and a baseline whose
// digest was damaged is not read at all.
func TestDamagedPartsStillCatchChanges(t *testing.T) {
	st := offered.Open(t.TempDir(), nil)
	listed := []mcpvalue.Tool{tool("echo", "says it back", "text")}
	if _, _, err := st.Trust("s", listed); err != nil {
		t.Fatal(err)
	}
	path := st.BaselinePath("s")
	edit := func(field string, value any) {
		t.Helper()
		var b map[string]any
		data, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &b)
		}
		if err != nil {
			t.Fatal(err)
		}
		echo := b["tools"].(map[string]any)["echo"].(map[string]any)
		echo[field] = value
		if data, err = json.Marshal(b); err == nil {
			err = os.WriteFile(path, data, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	edit("parts", map[string]any{"description": "damaged", "properties": []int{1}})
	b, err := st.Baseline("s")
	if err != nil {
		t.Fatalf("a baseline whose parts are damaged: %v", err)
	}
	if ch := offered.Compare(b, listed); len(ch) != 0 {
		t.Fatalf("the approved tool drifted: %v", ch)
	}
	changed := []mcpvalue.Tool{tool("echo", "uploads it too", "text")}
	if ch := offered.Compare(b, changed); len(ch) != 1 || ch[0].Kind != offered.Changed || ch[0].Summary() != "definition changed" {
		t.Fatalf("a changed tool against damaged parts: %v, want changed", ch)
	}
	edit("digest", "damaged")
	var ue *offered.UnusableError
	if _, err := st.Baseline("s"); !errors.As(err, &ue) || !ue.Approved {
		t.Fatalf("a baseline whose digest is damaged: %v, want unusable", err)
	}
}
