package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/host/atomicfile"
)

// Write replaces the file whole, with the mode asked for, from a temporary
// file in the same folder; a symlinked target is updated through its link.
func TestWriteReplacesThroughTempInSameFolder(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.yaml")
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	var tmpDir string
	err := atomicfile.Write(link, []byte("new"), 0o600, func(f *os.File, target string) error {
		tmpDir = filepath.Dir(f.Name())
		if target != real {
			t.Errorf("target %s, want the link's file %s", target, real)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tmpDir != dir {
		t.Fatalf("temporary file in %s, want the target's folder %s", tmpDir, dir)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
}

// A write the check refuses leaves the old file and no temporary file.
func TestWriteRefusedLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	if err := os.WriteFile(path, []byte("A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	refuse := errors.New("refused")
	if err := atomicfile.Write(path, []byte("A=2\n"), 0o600, func(*os.File, string) error { return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("Write = %v, want the check's error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "A=1\n" {
		t.Fatalf("content %q", b)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

// Changes made under the lock from many writers at once are all kept:
// each Update reads what the one before wrote.
func TestUpdateUnderLockLosesNoChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "count")
	const writers, each = 8, 20
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := atomicfile.Update(path, 64, func(old []byte) ([]byte, error) {
					n, _ := strconv.Atoi(string(old))
					return []byte(strconv.Itoa(n + 1)), nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b, err := atomicfile.ReadSmall(path, 64)
	if err != nil || string(b) != strconv.Itoa(writers*each) {
		t.Fatalf("count %q (%v), want %d: a change was lost", b, err, writers*each)
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v, want 0700", fi.Mode().Perm())
	}
}

// ReadSmall refuses a file over its bound, naming it.
func TestReadSmallBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, make([]byte, 65), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := atomicfile.ReadSmall(path, 64); err == nil || !strings.Contains(err.Error(), "64 bytes") {
		t.Fatalf("ReadSmall = %v", err)
	}
}
