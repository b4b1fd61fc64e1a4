package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// laughs is a "billion laughs" document: depth levels of aliases, each
// naming the previous one ten times (10^depth values once expanded).
func laughs(depth int) string {
	var b strings.Builder
	b.WriteString("x0: &a0 [lol]\n")
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	fmt.Fprintf(&b, "mcp_servers:\n  s:\n    command: x\n    args: *a%d\n", depth)
	return b.String()
}

// A few hundred bytes of nested aliases would expand to a billion values
// (gigabytes); the load is refused at once, naming the file and the limit,
// and allocates next to nothing.
func TestLoadRefusesAliasBomb(t *testing.T) {
	src := laughs(9)
	if len(src) > 600 {
		t.Fatalf("the bomb is %d bytes; it should be small", len(src))
	}
	h := home(t, []byte(src))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Load(h)
	runtime.ReadMemStats(&after)
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("Load = %v, want a *ParseError", err)
	}
	msg := err.Error()
	for _, want := range []string{filepath.Join(h, File), "aliases", fmt.Sprint(MaxAliasNodes)} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("refusing the bomb allocated %d MB", got>>20)
	}
	// Editing the file is refused the same way (it is never rewritten).
	if err := Edit(h, func(d *Document) error { return nil }); !errors.As(err, &pe) {
		t.Fatalf("Edit = %v, want a *ParseError", err)
	}
}

// Aliases used the way people use them (a shared block or list) load.
func TestLoadAllowsModestAliases(t *testing.T) {
	cfg, _ := loadString(t, "common: &env\n  A: \"1\"\n  B: \"2\"\nargs: &args [--x, --y]\nmcp_servers:\n  s:\n    command: x\n    env: *env\n    args: *args\n  t:\n    command: y\n    env:\n      <<: *env\n      C: \"3\"\n")
	s, u := cfg.Server("s"), cfg.Server("t")
	if s.Err != nil || s.Env["B"] != "2" || len(s.Args) != 2 {
		t.Fatalf("s = %+v", s)
	}
	if u.Err != nil || u.Env["A"] != "1" || u.Env["C"] != "3" {
		t.Fatalf("t = %+v", u)
	}
}

// The count is exact at the bound: aliases adding MaxAliasNodes values
// load, one more is refused.
func TestAliasCountBound(t *testing.T) {
	// A list of n scalars is n+1 values; one alias to it adds n+1.
	doc := func(n int) string {
		return "big: &big [" + strings.TrimSuffix(strings.Repeat("x, ", n), ", ") + "]\ncopy: *big\n"
	}
	if _, err := Load(home(t, []byte(doc(MaxAliasNodes-1)))); err != nil {
		t.Fatalf("an alias adding exactly %d values was refused: %v", MaxAliasNodes, err)
	}
	if _, err := Load(home(t, []byte(doc(MaxAliasNodes)))); err == nil {
		t.Fatalf("an alias adding %d values was accepted", MaxAliasNodes+1)
	}
}

// A config file over MaxConfigBytes is refused before it is parsed, with
// its size and the limit; so is one that never ends (a device).
func TestLoadRefusesHugeConfig(t *testing.T) {
	h := t.TempDir()
	path := filepath.Join(h, File)
	big := "mcp_servers:\n  s:\n    command: x\n# " + strings.Repeat("x", MaxConfigBytes) + "\n"
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	for what, run := range map[string]func() error{
		"Load": func() error { _, err := Load(h); return err },
		"Edit": func() error { return Edit(h, func(*Document) error { return nil }) },
	} {
		err := run()
		var tl *TooLargeError
		if !errors.As(err, &tl) {
			t.Fatalf("%s = %v, want a *TooLargeError", what, err)
		}
		msg := err.Error()
		for _, want := range []string{path, "4.0 MiB", "limit of 4 MiB"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q lacks %q", what, msg, want)
			}
		}
	}
	// Exactly at the limit is fine.
	ok := "mcp_servers:\n  s:\n    command: x\n# "
	ok += strings.Repeat("x", MaxConfigBytes-len(ok)-1) + "\n"
	if err := os.WriteFile(path, []byte(ok), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err := Load(h); err != nil || len(cfg.Servers) != 1 {
		t.Fatalf("a config of exactly %d bytes: %v", MaxConfigBytes, err)
	}

	// An endless file: a pipe of the user's own that is written to
	// without end. (/dev/zero would do, but any user may write to it, so
	// hermes refuses it for that first.)
	dev := t.TempDir()
	fifo := filepath.Join(dev, File)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		zeros := make([]byte, 64<<10)
		for {
			if _, err := w.Write(zeros); err != nil {
				return
			}
		}
	}()
	_, err := Load(dev)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Fatalf("Load of an endless file = %v", err)
	}
}

// log_lines_per_second and log_burst default to the rate limits hermes
// always had, take the configured values, and a bad value fails the entry
// with an error naming the key.
func TestLogLimitKeys(t *testing.T) {
	cfg, _ := loadString(t, "mcp_servers:\n  d:\n    command: x\n  s:\n    command: x\n    log_lines_per_second: 5\n    log_burst: 20\n")
	if d := cfg.Server("d"); d.Err != nil || d.LogLinesPerSecond != DefaultLogLinesPerSecond || d.LogBurst != DefaultLogBurst {
		t.Errorf("defaults: %d lines a second, bursts of %d (%v), want %d and %d", d.LogLinesPerSecond, d.LogBurst, d.Err, DefaultLogLinesPerSecond, DefaultLogBurst)
	}
	if DefaultLogLinesPerSecond != 100 || DefaultLogBurst != 1000 {
		t.Errorf("the defaults changed: %d, %d", DefaultLogLinesPerSecond, DefaultLogBurst)
	}
	if s := cfg.Server("s"); s.Err != nil || s.LogLinesPerSecond != 5 || s.LogBurst != 20 {
		t.Errorf("configured: %d lines a second, bursts of %d (%v), want 5 and 20", s.LogLinesPerSecond, s.LogBurst, s.Err)
	}
	for body, want := range map[string]string{
		"log_lines_per_second: lots": `server "a": key "log_lines_per_second": want a number of lines a second, got "lots"`,
		"log_lines_per_second: 0":    `server "a": key "log_lines_per_second": want a positive number of lines a second, got 0`,
		"log_burst: -1":              `server "a": key "log_burst": want a positive number of lines, got -1`,
		"log_burst: 99999999":        `server "a": key "log_burst": want a positive number of lines, got 99999999`,
	} {
		cfg, _ := loadString(t, "mcp_servers:\n  a:\n    command: x\n    "+body+"\n")
		if a := cfg.Server("a"); a.Err == nil || a.Err.Error() != want {
			t.Errorf("%s: got %v, want %s", body, a.Err, want)
		}
	}
}
