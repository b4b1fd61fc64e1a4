package tokenstore

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"testing"
)

// The DPoP key file is created once (0600), read back, kept when another
// key is offered later, and removed with the other files.
func TestDPoPKeyCreatedOnceAndRemoved(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if k, err := s.LoadDPoPKey(); k != nil || err != nil {
		t.Fatalf("no file: %q, %v", k, err)
	}
	first := []byte(`{"kty":"EC","d":"first"}`)
	if k, err := s.CreateDPoPKey(first); err != nil || !bytes.Equal(k, first) {
		t.Fatalf("create: %q, %v", k, err)
	}
	fi, err := os.Stat(s.DPoPKeyPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	if k, err := s.CreateDPoPKey([]byte(`{"kty":"EC","d":"second"}`)); err != nil || !bytes.Equal(k, first) {
		t.Fatalf("a second create replaced the key: %q, %v", k, err)
	}
	if k, err := s.LoadDPoPKey(); err != nil || !bytes.Equal(k, first) {
		t.Fatalf("load: %q, %v", k, err)
	}
	if err := s.Save(&Token{AccessToken: "a", TokenType: "DPoP"}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Remove(); err != nil || n != 2 {
		t.Fatalf("remove: %d, %v", n, err)
	}
	if _, err := os.Stat(s.DPoPKeyPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the key outlived the logout: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

// Processes racing to create the key all end up with one of them.
func TestDPoPKeyRaceHasOneWinner(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := New(dir, "notes") // a Store per process
			if err != nil {
				t.Error(err)
				return
			}
			if got[i], err = s.CreateDPoPKey([]byte{'k', byte('0' + i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, k := range got {
		if !bytes.Equal(k, got[0]) {
			t.Fatalf("keys differ: %q", got)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files: %v", entries)
	}
}

// In a sealed folder the key is sealed at rest, opens with the folder's
// key only, and is refused (not replaced) under another.
func TestDPoPKeySealed(t *testing.T) {
	dir := t.TempDir()
	s := sealedStore(t, dir, "notes", 1)
	key := []byte(`{"kty":"EC","d":"` + secret + `"}`)
	if _, err := s.CreateDPoPKey(key); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(s.DPoPKeyPath())
	if err != nil || bytes.Contains(raw, []byte(secret)) || !bytes.Contains(raw, []byte(sealFormat)) {
		t.Fatalf("at rest: %v, sealed %v", err, bytes.Contains(raw, []byte(sealFormat)))
	}
	if k, err := sealedStore(t, dir, "notes", 1).LoadDPoPKey(); err != nil || !bytes.Equal(k, key) {
		t.Fatalf("load: %v", err)
	}
	if _, err := sealedStore(t, dir, "notes", 2).LoadDPoPKey(); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("another folder key: %v", err)
	}
	if _, err := sealedStore(t, dir, "notes", 2).CreateDPoPKey([]byte("other")); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("create under another key: %v", err)
	}
}
