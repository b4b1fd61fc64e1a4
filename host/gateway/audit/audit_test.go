package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
)

// readLines reads a JSON-lines file into maps, failing on a line that is
// not one JSON object.
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestLineFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "audit.jsonl")
	l, err := Open(Options{File: path, MaxBytes: 1 << 20, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 10, 0, 0, 123456000, time.FixedZone("CET", 3600))
	for _, r := range []Record{
		{Time: at, Subject: "alice", Client: "claude-code", Server: "github", Tool: "mcp_github_create_issue", Allow: true, Rule: 0,
			Reason: `rule 0 allows: group "dev" matches "dev"`, Arguments: json.RawMessage(`{ "title": "hi", "body": "secret body", "n": 1.50 }`),
			Outcome: OutcomeOK, Duration: 1500 * time.Microsecond},
		{Time: at, Subject: "bob", Server: "fs", Tool: "mcp_fs_delete_file", Rule: -1, Reason: "no rule matched: default deny",
			Arguments: json.RawMessage(`{"path":"/etc/passwd"}`), Outcome: OutcomeDenied},
		{Subject: "carol", Server: "fs", Tool: "mcp_fs_list", Allow: true, Rule: 2, Outcome: OutcomeToolError},
	} {
		if err := l.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Record{}); err == nil {
		t.Error("a write after Close succeeded")
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v, %v", fi, err)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("the folder is %v", di.Mode().Perm())
	}
	lines := readLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	first := lines[0]
	for k, want := range map[string]any{
		"time": "2026-12-07T09:00:00.123456Z", "subject": "alice", "client": "claude-code", "server": "github",
		"tool": "mcp_github_create_issue", "decision": "allow", "rule": 0.0, "outcome": "ok", "duration_ms": 1.5,
		"args_sha256": sum(`{"body":"secret body","n":1.50,"title":"hi"}`),
	} {
		if first[k] != want {
			t.Errorf("%s = %v, want %v", k, first[k], want)
		}
	}
	if lines[1]["decision"] != "deny" || lines[1]["rule"] != -1.0 || lines[1]["outcome"] != "denied" || lines[1]["reason"] != "no rule matched: default deny" {
		t.Errorf("the denial: %v", lines[1])
	}
	if lines[2]["args_sha256"] != sum("{}") || lines[2]["time"] == "" {
		t.Errorf("no arguments: %v", lines[2])
	}
	raw, _ := os.ReadFile(path)
	for _, v := range []string{"secret body", "/etc/passwd", "arguments"} {
		if bytes.Contains(raw, []byte(v)) {
			t.Errorf("the log holds %q:\n%s", v, raw)
		}
	}
}

// The same arguments in another key order or spacing hash the same.
func TestArgumentsHashIsCanonical(t *testing.T) {
	var buf bytes.Buffer
	l, _ := Open(Options{Writer: &buf})
	for _, a := range []string{`{"a":1,"b":{"d":[1,2],"c":"x"}}`, "{\n \"b\": {\"c\": \"x\", \"d\": [1, 2]},\n \"a\": 1\n}"} {
		if err := l.Write(Record{Arguments: json.RawMessage(a)}); err != nil {
			t.Fatal(err)
		}
	}
	ls := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var x, y map[string]any
	json.Unmarshal([]byte(ls[0]), &x)
	json.Unmarshal([]byte(ls[1]), &y)
	if x["args_sha256"] != y["args_sha256"] || x["args_sha256"] != sum(`{"a":1,"b":{"c":"x","d":[1,2]}}`) {
		t.Fatalf("%v / %v", x["args_sha256"], y["args_sha256"])
	}
}

// With the opt-in the values are written, canonical and bounded.
func TestArgumentsOptIn(t *testing.T) {
	var buf bytes.Buffer
	l, _ := Open(FromConfig(config.GatewayAudit{Stdout: true, Redact: false}, &buf))
	big := `{"blob":"` + strings.Repeat("x", MaxArgumentsBytes) + `"}`
	for _, a := range []string{`{ "q": "hello" }`, big, `not json`} {
		if err := l.Write(Record{Arguments: json.RawMessage(a)}); err != nil {
			t.Fatal(err)
		}
	}
	ls := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if !strings.Contains(ls[0], `"arguments":{"q":"hello"}`) {
		t.Errorf("opt-in: %s", ls[0])
	}
	if strings.Contains(ls[1], "xxxx") || !strings.Contains(ls[1], `"arguments_omitted":"larger than 65536 bytes"`) {
		t.Errorf("too large: %.200s", ls[1])
	}
	if strings.Contains(ls[2], "not json\"") || !strings.Contains(ls[2], `"arguments_omitted":"not JSON"`) || !strings.Contains(ls[2], sum("not json")) {
		t.Errorf("not JSON: %s", ls[2])
	}
	if o := FromConfig(config.GatewayAudit{File: "/x", Redact: true}, &buf); o.Arguments || o.File != "/x" || o.Writer != nil {
		t.Errorf("the default redacts: %+v", o)
	}
}

// A hostile name can neither forge a line nor grow one without bound.
func TestStringsEscapedAndBounded(t *testing.T) {
	var buf bytes.Buffer
	l, _ := Open(Options{Writer: &buf})
	forged := "alice\"}\n{\"subject\":\"root\",\"decision\":\"allow\"\u2028\x1b[31m\xff"
	if err := l.Write(Record{Subject: forged, Client: strings.Repeat("é", 1000), Tool: strings.Repeat("t", 10000), Reason: strings.Repeat("r", 5000), Outcome: OutcomeError}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Count(out, "\n") != 1 || strings.Contains(out, "\x1b") {
		t.Fatalf("not one escaped line: %q", out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if s := m["subject"].(string); !strings.HasPrefix(s, "alice\"}\n{") || !strings.HasSuffix(s, "\ufffd") {
		t.Errorf("subject %q", s)
	}
	for k, n := range map[string]int{"client": MaxFieldBytes, "tool": MaxFieldBytes, "reason": MaxReasonBytes} {
		s := m[k].(string)
		if len(s) > n || !strings.HasSuffix(s, "…") || !json.Valid([]byte(fmt.Sprintf("%q", s))) {
			t.Errorf("%s: %d bytes, %q...", k, len(s), s[:20])
		}
	}
	if len(out) > 4096 {
		t.Errorf("a line of %d bytes", len(out))
	}
}

// The file rotates at its size and keeps the newest files, the oldest
// lines dropped; every line lands whole in exactly one file.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(Options{File: path, MaxBytes: 2048, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := range n {
		if err := l.Write(Record{Subject: fmt.Sprintf("user%03d", i), Server: "s", Tool: "mcp_s_t", Allow: true, Outcome: OutcomeOK}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "audit.jsonl,audit.jsonl.1,audit.jsonl.2" {
		t.Fatalf("files %v", names)
	}
	var subjects []string
	for _, f := range []string{path + ".2", path + ".1", path} {
		fi, _ := os.Stat(f)
		if fi.Size() > 2048 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %d bytes, mode %v", f, fi.Size(), fi.Mode().Perm())
		}
		for _, m := range readLines(t, f) {
			subjects = append(subjects, m["subject"].(string))
		}
	}
	// The kept lines are the newest, in order, without a gap.
	last := len(subjects) - 1
	if subjects[last] != fmt.Sprintf("user%03d", n-1) || len(subjects) < 3 {
		t.Fatalf("kept %v", subjects)
	}
	for i, s := range subjects {
		if want := fmt.Sprintf("user%03d", n-len(subjects)+i); s != want {
			t.Fatalf("line %d is %s, want %s", i, s, want)
		}
	}

	// Reopening appends to the current file and goes on rotating.
	before := len(readLines(t, path))
	l, err = Open(Options{File: path, MaxBytes: 2048, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Record{Subject: "again"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if got := readLines(t, path); len(got) != before+1 && !(len(got) == 1 && got[0]["subject"] == "again") {
		t.Errorf("after reopening: %d lines, had %d", len(got), before)
	}

	// keep: 0 keeps no old file.
	zero := filepath.Join(t.TempDir(), "a.jsonl")
	l, _ = Open(Options{File: zero, MaxBytes: 300, Keep: 0})
	for range 10 {
		l.Write(Record{Subject: "x"})
	}
	l.Close()
	if _, err := os.Stat(zero + ".1"); err == nil {
		t.Error("keep 0 kept a file")
	}
	if len(readLines(t, zero)) == 0 {
		t.Error("keep 0 lost the current file")
	}
}

// Many goroutines write at once, through rotation: every line is whole
// and none is lost (with a Keep large enough to hold them all).
func TestConcurrentWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(Options{File: path, MaxBytes: 16 << 10, Keep: 1000})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := Record{Subject: fmt.Sprintf("w%d", w), Tool: fmt.Sprintf("mcp_s_t%d", i), Allow: i%2 == 0,
					Arguments: json.RawMessage(fmt.Sprintf(`{"i":%d,"pad":%q}`, i, strings.Repeat("p", i))), Outcome: OutcomeOK}
				if err := l.Write(r); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(path + "*")
	if len(files) < 3 {
		t.Fatalf("expected rotations, got files %v", files)
	}
	seen := map[string]bool{}
	for _, f := range files {
		for _, m := range readLines(t, f) {
			k := fmt.Sprint(m["subject"], "/", m["tool"])
			if seen[k] {
				t.Fatalf("line %s twice", k)
			}
			seen[k] = true
		}
	}
	if len(seen) != workers*each {
		t.Fatalf("%d lines, want %d", len(seen), workers*each)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(Options{}); err == nil {
		t.Error("no file and no writer opened")
	}
	dir := t.TempDir()
	if _, err := Open(Options{File: dir}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("a folder as the file: %v", err)
	}
}
