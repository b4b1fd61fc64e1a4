package offered_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/offered"
)

// approvedFixture saves a record of three tools for server "a", approves
// them, and returns the store, the record as read and the baseline file.
func approvedFixture(t testing.TB) (*offered.Store, *offered.Record, []byte) {
	t.Helper()
	st := offered.Open(t.TempDir(), nil)
	srv := server("a")
	yes := true
	risky := tool("rm", "removes <files> & \"more\"\n", "path")
	risky.Annotations.Destructive = &yes
	if err := st.Save(record(srv, tool("echo", "says it back", "text"), tool("add", "adds", "a", "b"), risky)); err != nil {
		t.Fatal(err)
	}
	rec, err := st.Load(srv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Approve("a", rec.Tools, nil, "add"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(st.BaselinePath("a"))
	if err != nil {
		t.Fatal(err)
	}
	return st, rec, data
}

// The approval read by its digests alone answers "same" only where the
// whole read and comparison find no change and no error: an approval of
// other digests, of more or fewer tools, one damaged anywhere, or one
// written otherwise than hermes writes it (keys out of order, spaces)
// takes the long way, which still reads every such approval as before.
func TestApprovedSameOnlyWhenNothingChanged(t *testing.T) {
	st, rec, data := approvedFixture(t)
	same := func(tools []mcpvalue.Tool, digests map[string]string) bool {
		t.Helper()
		ok, err := st.ApprovedSame("a", tools, digests)
		if err != nil {
			t.Fatalf("ApprovedSame: %v", err)
		}
		return ok
	}
	if !same(rec.Tools, rec.Digests) {
		t.Fatalf("an approval of exactly the record's tools is not the same:\n%s", data)
	}

	// Another digest, a tool more, a tool fewer.
	other := map[string]string{}
	for k, v := range rec.Digests {
		other[k] = v
	}
	other["add"] = strings.Repeat("0", 64)
	if same(rec.Tools, other) {
		t.Error("a changed digest is the same")
	}
	extra := append(append([]mcpvalue.Tool(nil), rec.Tools...), tool("new", "new"))
	withExtra := map[string]string{"new": strings.Repeat("1", 64)}
	for k, v := range rec.Digests {
		withExtra[k] = v
	}
	if same(extra, withExtra) {
		t.Error("a tool not approved is the same")
	}
	fewer := map[string]string{}
	for _, tl := range rec.Tools[1:] {
		fewer[tl.Name] = rec.Digests[tl.Name]
	}
	if same(rec.Tools[1:], fewer) {
		t.Error("an approved tool no longer listed is the same")
	}
	if same(rec.Tools, fewer) {
		t.Error("tools without a digest each are the same")
	}

	// The file edited: each edit below either damages it (Baseline
	// refuses it) or is read the long way to no change.
	edits := map[string]func([]byte) []byte{
		"digest damaged": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"digest":"`), []byte(`"digest":"x`), 1)
		},
		"digest changed": func(b []byte) []byte {
			i := bytes.Index(b, []byte(`"digest":"`)) + len(`"digest":"`)
			out := bytes.Clone(b)
			out[i] = '0'
			if b[i] == '0' {
				out[i] = '1'
			}
			return out
		},
		"time damaged": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"approved_at":"`), []byte(`"approved_at":"x`), 1)
		},
		"how too long": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"how":"add"`), []byte(`"how":"`+strings.Repeat("h", 65)+`"`), 1)
		},
		"hints damaged": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"destructive":true`), []byte(`"destructive":"yes"`), 1)
		},
		"truncated":     func(b []byte) []byte { return b[:len(b)-1] },
		"trailing data": func(b []byte) []byte { return append(bytes.Clone(b), " {}"...) },
		"other server":  func(b []byte) []byte { return bytes.Replace(b, []byte(`"server":"a"`), []byte(`"server":"b"`), 1) },
		"other version": func(b []byte) []byte { return bytes.Replace(b, []byte(`"version":2`), []byte(`"version":3`), 1) },
		"version twice": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"version":2`), []byte(`"version":2,"version":1`), 1)
		},
		"a tool removed": func(b []byte) []byte { return removeApproved(t, b, "echo") },
		"keys reordered": func(b []byte) []byte { return reorderApproved(t, b) },
		"indented": func(b []byte) []byte {
			var out bytes.Buffer
			if err := json.Indent(&out, b, "", "  "); err != nil {
				t.Fatal(err)
			}
			return out.Bytes()
		},
	}
	for name, edit := range edits {
		bad := edit(data)
		if bytes.Equal(bad, data) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if err := os.WriteFile(st.BaselinePath("a"), bad, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := st.ApprovedSame("a", rec.Tools, rec.Digests)
		b, berr := st.Baseline("a")
		longWaySame := berr == nil && len(offered.CompareDigests(b, rec.Tools, rec.Digests)) == 0
		if got && !longWaySame {
			t.Errorf("%s: the shortcut says same, the long way finds changes or cannot read it (%v)", name, berr)
		}
		if err != nil && berr == nil {
			t.Errorf("%s: the shortcut's error %v, the long way none", name, err)
		}
		want := map[string]bool{"keys reordered": true, "indented": true}[name]
		if longWaySame != want {
			t.Errorf("%s: the long way finds no change: %v, want %v (%v)", name, longWaySame, want, berr)
		}
	}

	// Not a regular file of its own: a link (to the approval itself, or to
	// nothing), a FIFO (never waited on). Both reads refuse it alike.
	spoils := map[string]func(path string) error{
		"link": func(path string) error {
			alt := path + ".alt"
			if err := os.WriteFile(alt, data, 0o600); err != nil {
				return err
			}
			return os.Symlink(alt, path)
		},
		"dangling link": func(path string) error { return os.Symlink(path+".gone", path) },
		"fifo":          func(path string) error { return syscall.Mkfifo(path, 0o600) },
	}
	for name, spoil := range spoils {
		path := st.BaselinePath("a")
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := spoil(path); err != nil {
			t.Fatal(err)
		}
		var ue, be *offered.UnusableError
		if ok, err := st.ApprovedSame("a", rec.Tools, rec.Digests); ok || !errors.As(err, &ue) {
			t.Errorf("%s: same %v, error %v; want an UnusableError", name, ok, err)
			continue
		}
		if _, err := st.Baseline("a"); !errors.As(err, &be) || be.Reason != ue.Reason {
			t.Errorf("%s: Baseline's error %v, the shortcut's %v", name, err, ue)
		}
	}

	// None approved: the shortcut says so as Baseline does.
	if err := os.Remove(st.BaselinePath("a")); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.ApprovedSame("a", rec.Tools, rec.Digests); ok || !errors.Is(err, offered.ErrNotFound) {
		t.Errorf("no approval: same %v, error %v; want offered.ErrNotFound", ok, err)
	}
}

// A tool whose name is longer than a baseline's keys is filed under its
// hash: the shortcut leaves it to the long way, which finds no change.
func TestApprovedSameLongNames(t *testing.T) {
	st := offered.Open(t.TempDir(), nil)
	long := tool(strings.Repeat("n", offered.MaxKeyBytes+1), "long")
	if err := st.Save(record(server("a"), long, tool("echo", "e"))); err != nil {
		t.Fatal(err)
	}
	rec, err := st.Load(server("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Approve("a", rec.Tools, nil, "add")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := st.ApprovedSame("a", rec.Tools, rec.Digests); ok || err != nil {
		t.Errorf("long name: same %v, error %v; want the long way", ok, err)
	}
	if c := offered.CompareDigests(b, rec.Tools, rec.Digests); len(c) != 0 {
		t.Errorf("the long way finds %v", c)
	}
}

// removeApproved drops tool from a baseline file as json writes it.
func removeApproved(t testing.TB, data []byte, tool string) []byte {
	t.Helper()
	var f map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var tools map[string]json.RawMessage
	if err := json.Unmarshal(f["tools"], &tools); err != nil {
		t.Fatal(err)
	}
	delete(tools, tool)
	f["tools"], _ = json.Marshal(tools)
	out, _ := json.Marshal(f)
	return out
}

// reorderApproved writes a baseline's tools in descending order of their
// keys: valid JSON, the same approval, not as hermes writes it.
func reorderApproved(t testing.TB, data []byte) []byte {
	t.Helper()
	var f struct {
		Version int                        `json:"version"`
		Server  string                     `json:"server"`
		Tools   map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(f.Tools))
	var b bytes.Buffer
	b.WriteString(`{"version":2,"server":"a","tools":{`)
	for i := len(keys) - 1; i >= 0; i-- {
		kb, _ := json.Marshal(keys[i])
		b.Write(kb)
		b.WriteByte(':')
		b.Write(f.Tools[keys[i]])
		if i > 0 {
			b.WriteByte(',')
		}
	}
	b.WriteString(`}}`)
	return b.Bytes()
}

// FuzzApprovedSame: whatever baseline file the shortcut takes for the
// same approval of a record's tools, Baseline reads without an error and
// Compare finds no change in.
func FuzzApprovedSame(f *testing.F) {
	st, rec, data := approvedFixture(f)
	f.Add(data)
	f.Add(reorderApproved(f, data))
	f.Add(removeApproved(f, data, "add"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(st.BaselinePath("a"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		ok, err := st.ApprovedSame("a", rec.Tools, rec.Digests)
		if err != nil || !ok {
			return
		}
		b, err := st.Baseline("a")
		if err != nil {
			t.Fatalf("the shortcut took an approval Baseline refuses (%v):\n%q", err, data)
		}
		if c := offered.CompareDigests(b, rec.Tools, rec.Digests); len(c) != 0 {
			t.Fatalf("the shortcut took an approval in which Compare finds %v:\n%q", c, data)
		}
	})
}
