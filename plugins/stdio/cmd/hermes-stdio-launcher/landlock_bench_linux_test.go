package main

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// BenchmarkLandlockRules measures the launcher's part of a ruleset of
// 1000 rules (as many as a never-readable path below a crowded folder
// such as /tmp gives): one rule per entry of a folder, as the plugin's
// plan lists them.
func BenchmarkLandlockRules(b *testing.B) {
	abi, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		b.Skipf("no Landlock: %v", e)
	}
	dir := b.TempDir()
	var rules []launcher.Rule
	for i := range 1000 {
		p := filepath.Join(dir, "e"+itoa(i))
		if i%2 == 0 {
			if err := os.Mkdir(p, 0o755); err != nil {
				b.Fatal(err)
			}
		} else if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
		rules = append(rules, launcher.Rule{Path: p, Access: launcher.ReadOnly, NoFollow: true})
	}
	handled := launcher.HandledFS(int(abi))
	for b.Loop() {
		attr := rulesetAttr{handledFS: handled}
		fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
		if e != 0 {
			b.Fatal(e)
		}
		for _, r := range rules {
			if err := addPathRule(int(fd), r, handled); err != nil {
				b.Fatal(err)
			}
		}
		unix.Close(int(fd))
	}
}
