package vault

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func lookup(v string, ok bool) func(string) (string, bool) {
	return func(string) (string, bool) { return v, ok }
}

// The key reads as base64 or hex of 32 bytes; anything else is one line
// naming the variable and never the value.
func TestKeyFrom(t *testing.T) {
	for _, v := range []string{base64.StdEncoding.EncodeToString(key(7)), base64.RawURLEncoding.EncodeToString(key(7)), hex.EncodeToString(key(7))} {
		if k, err := KeyFrom("K", lookup(v, true)); err != nil || !bytes.Equal(k, key(7)) {
			t.Fatalf("%q: %v", v, err)
		}
	}
	for v, want := range map[string]string{
		"":                         "$K is not set",
		"c2hvcnQ=":                 "$K holds 5 bytes, want 32",
		"not a key, not even ***!": "$K is neither base64 nor hex",
	} {
		_, err := KeyFrom("K", lookup(v, v != ""))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") || (v != "" && strings.Contains(err.Error(), v)) {
			t.Errorf("%q: %v", v, err)
		}
	}
}

// The first open writes the check file; the same key opens again; another
// key is ErrWrongKey and changes nothing.
func TestOpenChecksTheKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), DirName)
	if _, err := Open(dir, key(1)); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, checkFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v", fi.Mode())
	}
	if _, err := Open(dir, key(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, key(2)); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("another key: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, checkFile)); !bytes.Equal(before, after) {
		t.Fatal("a wrong key changed the check file")
	}
}

// Each person has a folder and a key of their own, named by nothing a
// reader of the folder could match to the subject.
func TestPeopleAreApart(t *testing.T) {
	v, err := Open(t.TempDir(), key(1))
	if err != nil {
		t.Fatal(err)
	}
	a, b := v.PersonDir("alice@example.com"), v.PersonDir("bob@example.com")
	if a == b || strings.Contains(a, "alice") || filepath.Dir(a) != filepath.Dir(b) {
		t.Fatalf("folders %s %s", a, b)
	}
	if bytes.Equal(v.Seal("alice").Key, v.Seal("bob").Key) || !bytes.Equal(v.Seal("alice").Key, v.Seal("alice").Key) {
		t.Fatal("keys are not one per person")
	}
	w, _ := Open(t.TempDir(), key(2))
	if bytes.Equal(v.Seal("alice").Key, w.Seal("alice").Key) {
		t.Fatal("two vault keys give one person's key")
	}
	if err := os.MkdirAll(a, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a, "notes.json"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !v.HasToken("alice@example.com", "notes") || v.HasToken("bob@example.com", "notes") || v.HasToken("alice@example.com", "other") {
		t.Fatal("HasToken")
	}
	if gone, err := v.RemovePerson("alice@example.com"); !gone || err != nil || v.HasToken("alice@example.com", "notes") {
		t.Fatalf("remove: %v %v", gone, err)
	}
}

// A binding opens for its purpose, with its key, before it expires, and
// not otherwise; it names nothing in the clear.
func TestBindings(t *testing.T) {
	v, _ := Open(t.TempDir(), key(1))
	w, _ := Open(t.TempDir(), key(2))
	now := time.Unix(1_800_000_000, 0)
	link := v.Bind(PurposeStart, "alice@example.com", "notes", 10*time.Minute, now)
	if strings.Contains(link, "alice") || strings.Contains(link, "notes") {
		t.Fatalf("link names its person or server: %s", link)
	}
	b, err := v.Check(PurposeStart, link, now.Add(time.Minute))
	if err != nil || b.Subject != "alice@example.com" || b.Server != "notes" {
		t.Fatalf("check: %+v %v", b, err)
	}
	if _, err := v.Check(PurposeState, link, now); !errors.Is(err, ErrBinding) {
		t.Fatalf("a link taken as a state: %v", err)
	}
	if _, err := w.Check(PurposeStart, link, now); !errors.Is(err, ErrBinding) {
		t.Fatalf("another key: %v", err)
	}
	if _, err := v.Check(PurposeStart, link, now.Add(10*time.Minute)); !errors.Is(err, ErrExpired) {
		t.Fatalf("expired: %v", err)
	}
	tampered := []byte(link)
	tampered[len(tampered)/2] ^= 1
	if _, err := v.Check(PurposeStart, string(tampered), now); !errors.Is(err, ErrBinding) {
		t.Fatalf("tampered: %v", err)
	}
	s1, s2 := v.Bind(PurposeState, "a", "notes", time.Minute, now), v.Bind(PurposeState, "a", "notes", time.Minute, now)
	b1, _ := v.Check(PurposeState, s1, now)
	b2, _ := v.Check(PurposeState, s2, now)
	if b1.Nonce == "" || b1.Nonce == b2.Nonce {
		t.Fatal("states share a nonce")
	}
}

// Check takes any text without panicking, and accepts only what Bind
// made.
func FuzzCheck(f *testing.F) {
	v, _ := Open(f.TempDir(), key(1))
	now := time.Unix(1_800_000_000, 0)
	f.Add(v.Bind(PurposeStart, "a", "s", time.Minute, now))
	f.Add("")
	f.Add(strings.Repeat("A", 100))
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := v.Check(PurposeStart, s, now); err == nil && (b.Subject != "a" || b.Server != "s") {
			t.Fatalf("accepted %q as %+v", s, b)
		}
	})
}
