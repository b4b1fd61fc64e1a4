package tokenstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sealedStore(t *testing.T, dir, server string, key byte) *Store {
	t.Helper()
	s, err := NewSealed(dir, server, bytes.Repeat([]byte{key}, SealKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A sealed store round-trips its three files, none of which holds a
// token or secret byte on disk; the folder's key is needed to read them.
func TestSealedRoundTripHoldsNoSecretAtRest(t *testing.T) {
	dir := t.TempDir()
	s := sealedStore(t, dir, "notes", 1)
	tok := &Token{AccessToken: secret + "-access", RefreshToken: secret + "-refresh", TokenType: "Bearer", ExpiresIn: 3600, Scope: "mcp:read"}
	if err := s.Save(tok); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveClient(&Client{ClientID: "cid-visible-nowhere", ClientSecret: secret + "-client", Kind: KindDCR}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveMeta(&Meta{Issuer: "https://as.example", AuthServer: []byte(`{"issuer":"https://as.example"}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := sealedStore(t, dir, "notes", 1).Load()
	if err != nil || got.AccessToken != tok.AccessToken || got.RefreshToken != tok.RefreshToken || got.Scope != "mcp:read" {
		t.Fatalf("load: %+v %v", got, err)
	}
	if c, err := s.LoadClient(); err != nil || c.ClientSecret != secret+"-client" {
		t.Fatalf("client: %+v %v", c, err)
	}
	if m, err := s.LoadMeta(); err != nil || m.Issuer != "https://as.example" {
		t.Fatalf("meta: %+v %v", m, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Fatalf("files: %v", entries)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, leak := range []string{secret, "cid-visible-nowhere", "as.example", "mcp:read"} {
			if bytes.Contains(b, []byte(leak)) {
				t.Errorf("%s holds %q at rest", e.Name(), leak)
			}
		}
		if !bytes.Contains(b, []byte(sealFormat)) {
			t.Errorf("%s does not say how it is sealed", e.Name())
		}
	}
}

// Another key opens nothing and changes nothing; a file moved under
// another server's name does not open either; sealed and plain stores
// read each other's files as corrupt.
func TestSealedFilesOpenWithTheirKeyAndNameOnly(t *testing.T) {
	dir := t.TempDir()
	s := sealedStore(t, dir, "notes", 1)
	if err := s.Save(&Token{AccessToken: secret, ExpiresIn: 60}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.TokenPath())
	if _, err := sealedStore(t, dir, "notes", 2).Load(); !errors.Is(err, ErrWrongKey) || errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), secret) {
		t.Fatalf("another key: %v", err)
	}
	if after, _ := os.ReadFile(s.TokenPath()); !bytes.Equal(before, after) {
		t.Fatal("a failed open changed the file")
	}
	other := sealedStore(t, dir, "other", 1)
	if err := os.WriteFile(other.TokenPath(), before, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Load(); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("a token renamed to another server's: %v", err)
	}
	if _, err := newStore(t, dir, "notes").Load(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a plain store reading a sealed file: %v", err)
	}
	plainDir := t.TempDir()
	if err := newStore(t, plainDir, "notes").Save(&Token{AccessToken: secret}); err != nil {
		t.Fatal(err)
	}
	if _, err := sealedStore(t, plainDir, "notes", 1).Load(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not sealed") {
		t.Fatalf("a sealed store reading a plain file: %v", err)
	}
	if _, err := NewSealed(dir, "notes", []byte("short")); err == nil {
		t.Fatal("a short key was taken")
	}
}
