package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestSwapLosesNoLine: writers keep writing while the log is swapped to
// another file with other options; every line is in exactly one of the two
// files, whole, the old file is closed (writes after the swap go to the
// new one only), and the new options apply to the lines after the swap.
func TestSwapLosesNoLine(t *testing.T) {
	dir := t.TempDir()
	oldPath, newPath := filepath.Join(dir, "old.jsonl"), filepath.Join(dir, "new", "audit.jsonl")
	l, err := Open(Options{File: oldPath})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 300
	started := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := Record{Subject: fmt.Sprintf("w%d", w), Tool: fmt.Sprintf("mcp_s_t%d", i), Allow: true,
					Arguments: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), Outcome: OutcomeOK}
				if err := l.Write(r); err != nil {
					t.Error(err)
					return
				}
				if i == 0 {
					started <- struct{}{}
				}
			}
		}()
	}
	// Swap once every writer has written a line: the swap happens while
	// they write.
	for range workers {
		<-started
	}
	n, err := Open(Options{File: newPath, Arguments: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Swap(n); err != nil {
		t.Fatal(err)
	}
	if err := n.Write(Record{Subject: "n"}); err == nil {
		t.Error("the log swapped from still writes")
	}
	wg.Wait()
	if err := l.Write(Record{Subject: "last", Tool: "mcp_s_last", Arguments: json.RawMessage(`{"v":1}`), Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	seen := map[string]bool{}
	before, after := readLines(t, oldPath), readLines(t, newPath)
	for _, m := range append(before, after...) {
		k := fmt.Sprint(m["subject"], "/", m["tool"])
		if seen[k] {
			t.Fatalf("line %s twice", k)
		}
		seen[k] = true
	}
	if len(seen) != workers*each+1 {
		t.Fatalf("%d lines, want %d", len(seen), workers*each+1)
	}
	if len(before) < workers || len(after) == 0 {
		t.Fatalf("%d lines before the swap, %d after", len(before), len(after))
	}
	for _, m := range before {
		if _, ok := m["arguments"]; ok {
			t.Fatalf("a line of the old file, written without the opt-in, has the arguments: %v", m)
		}
	}
	last := after[len(after)-1]
	if last["subject"] != "last" || last["arguments"] == nil {
		t.Fatalf("the last line, after the swap, is %v; want it in the new file with its arguments (the new options)", last)
	}
	fi, err := os.Stat(filepath.Dir(newPath))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the new file's folder: %v %v", fi.Mode(), err)
	}
}

// TestSwapToClosedLogRefused: swapping to a log that is closed is an error
// and leaves the log writing where it did.
func TestSwapToClosedLogRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(Options{File: path})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n, err := Open(Options{File: filepath.Join(t.TempDir(), "other.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	_ = n.Close()
	if err := l.Swap(n); err == nil {
		t.Fatal("swapped to a closed log")
	}
	if err := l.Write(Record{Subject: "still"}); err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, path); len(lines) != 1 || lines[0]["subject"] != "still" {
		t.Fatalf("lines %v", lines)
	}
}
