package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/store"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
)

func TestMain(m *testing.M) {
	// Text timestamps without a zone are local time, as the agent writes
	// them; fix the zone so the expected values hold on every machine.
	time.Local = time.UTC
	os.Exit(m.Run())
}

var ctx = context.Background()

// home returns a fresh HERMES_HOME with a state.db of kind (current,
// march, minimal, or "" for none) written by Python's sqlite3, and the
// sessions.json and channel_directory.json fixtures when asked.
func home(t testing.TB, kind string, withIndex, withDirectory bool) string {
	t.Helper()
	return fixture.Home(t, kind, withIndex, withDirectory)
}

// execPython returns the command running a Python script with args.
func execPython(t testing.TB, script string, args ...string) *exec.Cmd {
	t.Helper()
	return exec.Command(fixture.Python(t), append([]string{"-c", script}, args...)...)
}

func openStore(t testing.TB, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// call runs a tool and checks the invariants of every result: the text is
// JSON, structured content is present exactly when it is not an error and
// equals the text's JSON.
func call(t *testing.T, tl *Tools, name, args string) *Result {
	t.Helper()
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	res, err := tl.Call(ctx, name, raw)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	if !json.Valid([]byte(res.Text)) {
		t.Fatalf("%s %s: text is not JSON: %s", name, args, res.Text)
	}
	if res.IsError {
		if res.Structured != nil {
			t.Errorf("%s %s: an error result has structured content", name, args)
		}
		return res
	}
	var a, b any
	if err := json.Unmarshal([]byte(res.Text), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res.Structured, &b); err != nil {
		t.Fatalf("%s %s: structured content: %v", name, args, err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("%s %s: structured content %s differs from text %s", name, args, jb, ja)
	}
	checkSchema(t, name, outputSchema(t, name), b, "$")
	return res
}

func outputSchema(t *testing.T, name string) map[string]any {
	t.Helper()
	for _, d := range Definitions() {
		if d.Name == name {
			var s map[string]any
			if err := json.Unmarshal(d.OutputSchema, &s); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// checkSchema validates v against the subset of JSON Schema the output
// schemas use: type (one or a list), properties, required, items, enum,
// anyOf, maxLength.
func checkSchema(t *testing.T, tool string, s map[string]any, v any, path string) {
	t.Helper()
	if alts, ok := s["anyOf"].([]any); ok {
		for _, alt := range alts {
			if schemaOK(alt.(map[string]any), v) {
				return
			}
		}
		t.Errorf("%s: %s = %v matches no alternative of anyOf", tool, path, v)
		return
	}
	if !schemaOK(s, v) {
		t.Errorf("%s: %s = %v does not match %v", tool, path, v, s)
	}
}

// schemaOK reports whether v matches s (the subset of checkSchema).
func schemaOK(s map[string]any, v any) bool {
	if alts, ok := s["anyOf"].([]any); ok {
		for _, alt := range alts {
			if schemaOK(alt.(map[string]any), v) {
				return true
			}
		}
		return false
	}
	if ty, ok := s["type"]; ok {
		types := []any{ty}
		if list, ok := ty.([]any); ok {
			types = list
		}
		match := false
		for _, ty := range types {
			if typeOK(ty.(string), v) {
				match = true
			}
		}
		if !match {
			return false
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if e == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	if ml, ok := s["maxLength"].(float64); ok {
		if str, ok := v.(string); ok && float64(len([]rune(str))) > ml {
			return false
		}
	}
	if m, ok := v.(map[string]any); ok {
		for _, r := range asList(s["required"]) {
			if _, ok := m[r.(string)]; !ok {
				return false
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, pv := range m {
			if ps, ok := props[k].(map[string]any); ok && !schemaOK(ps, pv) {
				return false
			}
		}
	}
	if l, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for _, e := range l {
				if !schemaOK(items, e) {
					return false
				}
			}
		}
	}
	return true
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func typeOK(ty string, v any) bool {
	switch ty {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}
