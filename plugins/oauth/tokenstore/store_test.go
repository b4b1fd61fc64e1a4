package tokenstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"golang.org/x/oauth2"
)

const secret = "SECRET-token-value-1234"

func newStore(t *testing.T, dir, server string) *Store {
	t.Helper()
	s, err := New(dir, server)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func writeRaw(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func perm(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestNewRejectsEmptyDir(t *testing.T) {
	if _, err := New("", "srv"); err == nil {
		t.Fatal("New with no folder succeeded")
	}
}

func TestFileNamesStayInFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mcp-tokens")
	s := newStore(t, dir, "../../etc/passwd")
	if got := filepath.Dir(s.TokenPath()); got != dir {
		t.Fatalf("token path %s is outside %s", s.TokenPath(), dir)
	}
	if err := s.Save(&Token{AccessToken: "a"}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 1 || !strings.HasSuffix(got[0], ".json") {
		t.Fatalf("folder holds %v", got)
	}
}

func TestSaveLoadRoundTripAndPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	dir := filepath.Join(t.TempDir(), "home", "mcp-tokens")
	s := newStore(t, dir, "srv")
	before := time.Now().Unix()
	tok := &Token{AccessToken: secret, TokenType: "Bearer", RefreshToken: "r1", Scope: "a b", ExpiresIn: 3600,
		Account: "me@example.com", Issuer: "https://as.example.com", Resource: "https://mcp.example.com/mcp"}
	if err := s.Save(tok); err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresAt < before+3600 || tok.ExpiresAt > time.Now().Unix()+3600 || tok.ObtainedAt < before {
		t.Fatalf("Save stamped expires_at=%d obtained_at=%d", tok.ExpiresAt, tok.ObtainedAt)
	}
	if p := perm(t, s.TokenPath()); p != 0o600 {
		t.Errorf("token file mode %o, want 600", p)
	}
	if p := perm(t, dir); p != 0o700 {
		t.Errorf("folder mode %o, want 700", p)
	}
	if err := s.SaveClient(&Client{ClientID: "cid", ClientSecret: "cs", Kind: KindDCR,
		RedirectURIs: []string{"http://127.0.0.1:5555/callback"}, RegisteredFor: "https://as.example.com"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveMeta(&Meta{Issuer: "https://as.example.com", AuthServer: json.RawMessage(`{"token_endpoint":"https://as.example.com/token?a=1&b=2"}`)}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.ClientPath(), s.MetaPath()} {
		if m := perm(t, p); m != 0o600 {
			t.Errorf("%s mode %o, want 600", p, m)
		}
	}

	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessToken != secret || got.RefreshToken != "r1" || got.ExpiresAt != tok.ExpiresAt ||
		got.Account != tok.Account || got.Issuer != tok.Issuer || got.Resource != tok.Resource || got.Scope != "a b" {
		t.Fatalf("loaded %+v", got)
	}
	c, err := s.LoadClient()
	if err != nil || c.ClientID != "cid" || c.ClientSecret != "cs" || c.Kind != KindDCR || len(c.RedirectURIs) != 1 {
		t.Fatalf("client %+v, %v", c, err)
	}
	m, err := s.LoadMeta()
	if err != nil || m.Issuer != "https://as.example.com" || !bytes.Contains(m.AuthServer, []byte("a=1&b=2")) {
		t.Fatalf("meta %+v (%s), %v", m, m.AuthServer, err)
	}
	raw, _ := os.ReadFile(s.TokenPath())
	var onDisk map[string]any
	if err := json.Unmarshal(raw, &onDisk); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"access_token", "token_type", "refresh_token", "scope", "expires_in", "expires_at", "obtained_at", "account", "issuer", "resource"} {
		if _, ok := onDisk[k]; !ok {
			t.Errorf("token file lacks %q", k)
		}
	}
}

func TestFolderTightened(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	dir := filepath.Join(t.TempDir(), "mcp-tokens")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := newStore(t, dir, "srv").Save(&Token{AccessToken: "a"}); err != nil {
		t.Fatal(err)
	}
	if p := perm(t, dir); p != 0o700 {
		t.Fatalf("folder mode %o, want 700", p)
	}
	// Lock tightens too.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	unlock, err := newStore(t, dir, "srv").Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if p := perm(t, dir); p != 0o700 {
		t.Fatalf("folder mode after Lock %o, want 700", p)
	}
}

func TestAtomicWritesLeaveNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, "srv")
	for i := range 5 {
		if err := s.Save(&Token{AccessToken: fmt.Sprint("a", i)}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveClient(&Client{ClientID: fmt.Sprint("c", i)}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveMeta(&Meta{Issuer: "https://as"}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"srv.client.json", "srv.json", "srv.meta.json"}
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Fatalf("folder holds %v, want %v", got, want)
	}

	// A failed write (the rename meets a folder) leaves no temp file and
	// keeps the old content.
	other := newStore(t, dir, "other")
	if err := os.Mkdir(other.TokenPath(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := other.Save(&Token{AccessToken: secret}); err == nil {
		t.Fatal("Save over a folder succeeded")
	} else if strings.Contains(err.Error(), secret) {
		t.Fatalf("error quotes the token: %v", err)
	}
	want = []string{"other.json", "srv.client.json", "srv.json", "srv.meta.json"}
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after a failed write the folder holds %v, want %v", got, want)
	}
}

func TestCorruptFiles(t *testing.T) {
	cases := map[string]string{
		"not json":       "this is " + secret,
		"array":          `["` + secret + `"]`,
		"null":           `null`,
		"wrong type":     `{"access_token": 5}`,
		"bad expires_in": `{"access_token": "` + secret + `", "expires_in": "soon"}`,
		"no token":       `{"refresh_token": "` + secret + `"}`,
		"truncated":      `{"access_token": "` + secret,
		"empty":          ``,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			s := newStore(t, t.TempDir(), "srv")
			writeRaw(t, s.TokenPath(), content)
			tok, err := s.Load()
			if tok != nil || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load = %v, %v; want nil, ErrCorrupt", tok, err)
			}
			if !strings.Contains(err.Error(), s.TokenPath()) || strings.Contains(err.Error(), secret) {
				t.Fatalf("error %q must name the file and not quote it", err)
			}
			if _, err := os.Stat(s.TokenPath()); err != nil {
				t.Fatalf("corrupt file was removed: %v", err)
			}
			if s.Changed() {
				t.Fatal("Changed after loading the corrupt file")
			}
			// RefreshLocked hands fn no token, and a token fn returns replaces the file.
			got, err := s.RefreshLocked(context.Background(), func(cur *Token) (*Token, error) {
				if cur != nil {
					t.Errorf("fn got %v", cur)
				}
				return &Token{AccessToken: "fresh"}, nil
			})
			if err != nil || got.AccessToken != "fresh" {
				t.Fatalf("RefreshLocked = %v, %v", got, err)
			}
		})
	}

	s := newStore(t, t.TempDir(), "srv")
	writeRaw(t, s.ClientPath(), `{"client_id": 7, "client_secret": "`+secret+`"}`)
	if c, err := s.LoadClient(); c != nil || !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), secret) {
		t.Fatalf("LoadClient = %v, %v", c, err)
	}
	writeRaw(t, s.MetaPath(), `{"authorization_server": "x"}`)
	if m, err := s.LoadMeta(); m != nil || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("LoadMeta = %v, %v", m, err)
	}
}

func TestOverSizeLimit(t *testing.T) {
	s := newStore(t, t.TempDir(), "srv")
	big := `{"access_token":"` + strings.Repeat("x", MaxFileSize) + `"}`
	writeRaw(t, s.TokenPath(), big)
	tok, err := s.Load()
	if tok != nil || !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load = %v, %v; want ErrTooLarge", tok, err)
	}
	if msg := err.Error(); !strings.Contains(msg, s.TokenPath()) || !strings.Contains(msg, "limit") || len(msg) > 300 {
		t.Fatalf("error %q should name the file and the limit", msg)
	}
	writeRaw(t, s.ClientPath(), big)
	if _, err := s.LoadClient(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("LoadClient: %v", err)
	}
	// Exactly at the limit is read.
	exact := `{"access_token":"` + strings.Repeat("x", MaxFileSize-19) + `"}`
	writeRaw(t, s.TokenPath(), exact)
	if tok, err := s.Load(); err != nil || len(exact) != MaxFileSize || len(tok.AccessToken) != MaxFileSize-19 {
		t.Fatalf("file of MaxFileSize bytes: %v (len %d)", err, len(exact))
	}
}

func TestLegacyFiles(t *testing.T) {
	s := newStore(t, t.TempDir(), "srv")
	// No expires_at: the file's mtime + expires_in.
	writeRaw(t, s.TokenPath(), `{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r"}`)
	mtime := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(s.TokenPath(), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	tok, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if want := mtime.Unix() + 3600; tok.ExpiresAt != want {
		t.Fatalf("ExpiresAt = %d, want mtime+expires_in = %d", tok.ExpiresAt, want)
	}
	if !tok.Expired(time.Now(), 0) {
		t.Fatal("a token that expired in 2024 is not expired")
	}

	// The original wrote expires_at as a float and the issuer as hermes_issuer.
	writeRaw(t, s.TokenPath(), "\uFEFF"+`{"access_token":"a","expires_in":3600,"expires_at":1712345678.912,
		"hermes_issuer":"https://as.example.com","id_token":"eyJ","x_custom":{"k":[1,2]}}`)
	tok, err = s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresAt != 1712345678 || tok.Issuer != "https://as.example.com" {
		t.Fatalf("loaded %+v", tok)
	}
	// Unknown fields survive a rewrite.
	tok.AccessToken = "b"
	if err := s.Save(tok); err != nil {
		t.Fatal(err)
	}
	var onDisk map[string]json.RawMessage
	raw, _ := os.ReadFile(s.TokenPath())
	if err := json.Unmarshal(raw, &onDisk); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"hermes_issuer": `"https://as.example.com"`, "id_token": `"eyJ"`, "access_token": `"b"`, "expires_at": "1712345678"} {
		var got bytes.Buffer
		_ = json.Compact(&got, onDisk[k])
		if got.String() != want {
			t.Errorf("%s = %s, want %s", k, got.String(), want)
		}
	}
	if !bytes.Contains(raw, []byte(`"k": [`)) {
		t.Errorf("nested unknown field lost: %s", raw)
	}

	// The original's meta file is the AS metadata itself.
	writeRaw(t, s.MetaPath(), `{"issuer":"https://as.example.com","authorization_endpoint":"https://as.example.com/authorize","token_endpoint":"https://as.example.com/token"}`)
	m, err := s.LoadMeta()
	if err != nil || m.Issuer != "https://as.example.com" || !bytes.Contains(m.AuthServer, []byte(`"token_endpoint":"https://as.example.com/token"`)) {
		t.Fatalf("legacy meta = %+v (%s), %v", m, m.AuthServer, err)
	}
	// The original's client file has no kind.
	writeRaw(t, s.ClientPath(), `{"client_id":"c","redirect_uris":["http://127.0.0.1:1/callback"],"grant_types":["authorization_code","refresh_token"],"client_id_issued_at":1700000000}`)
	c, err := s.LoadClient()
	if err != nil || c.Kind != "" || c.ClientIDIssuedAt != 1700000000 || c.Extra["grant_types"] == nil {
		t.Fatalf("legacy client = %+v, %v", c, err)
	}
}

func TestSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, "srv")
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	writeRaw(t, target, `{"access_token":"planted"}`)
	if err := os.Symlink(target, s.TokenPath()); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	tok, err := s.Load()
	if tok != nil || !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), s.TokenPath()) {
		t.Fatalf("Load = %v, %v; want ErrSymlink", tok, err)
	}
	if err := s.Save(&Token{AccessToken: secret}); !errors.Is(err, ErrSymlink) {
		t.Fatalf("Save through a symlink: %v", err)
	}
	if b, _ := os.ReadFile(target); !bytes.Contains(b, []byte("planted")) {
		t.Fatalf("the link's target was written: %s", b)
	}
	if fi, err := os.Lstat(s.TokenPath()); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	if _, err := s.RefreshLocked(context.Background(), func(*Token) (*Token, error) {
		t.Error("fn called with a symlinked token file")
		return nil, nil
	}); !errors.Is(err, ErrSymlink) {
		t.Fatalf("RefreshLocked: %v", err)
	}

	// The lock file is not followed either.
	lockTarget := filepath.Join(t.TempDir(), "lock")
	writeRaw(t, lockTarget, "")
	if err := os.Remove(s.LockPath()); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(lockTarget, s.LockPath()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(context.Background()); !errors.Is(err, ErrSymlink) {
		t.Fatalf("Lock through a symlink: %v", err)
	}
}

func TestRemove(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, "srv")
	keep := newStore(t, dir, "srv-other")
	if err := keep.Save(&Token{AccessToken: "other"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(&Token{AccessToken: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveClient(&Client{ClientID: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveMeta(&Meta{Issuer: "i"}); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, s.ClientBackupPath(), `{}`)
	writeRaw(t, s.TokenPath()+".tmp.1.deadbeef", `{}`) // left by a crash
	unlock, err := s.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Remove()
	unlock()
	if err != nil || n != 5 {
		t.Fatalf("Remove = %d, %v; want 5", n, err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"srv-other.json"}) {
		t.Fatalf("folder holds %v", got)
	}
	if n, err := s.Remove(); n != 0 || err != nil {
		t.Fatalf("second Remove = %d, %v", n, err)
	}
	gone := newStore(t, filepath.Join(dir, "missing"), "srv")
	if n, err := gone.Remove(); n != 0 || err != nil {
		t.Fatalf("Remove in a missing folder = %d, %v", n, err)
	}
}

func TestPoisonClient(t *testing.T) {
	s := newStore(t, t.TempDir(), "srv")
	if ok, err := s.PoisonClient(); ok || err != nil {
		t.Fatalf("PoisonClient without a client = %v, %v", ok, err)
	}
	if err := s.Save(&Token{AccessToken: "a", RefreshToken: "r"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveMeta(&Meta{Issuer: "https://as"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveClient(&Client{ClientID: "dead", Kind: KindDCR}); err != nil {
		t.Fatal(err)
	}
	ok, err := s.PoisonClient()
	if !ok || err != nil {
		t.Fatalf("PoisonClient = %v, %v", ok, err)
	}
	if c, err := s.LoadClient(); c != nil || err != nil {
		t.Fatalf("client after poisoning: %v, %v", c, err)
	}
	if m, err := s.LoadMeta(); m != nil || err != nil {
		t.Fatalf("meta after poisoning: %v, %v", m, err)
	}
	if b, err := os.ReadFile(s.ClientBackupPath()); err != nil || !bytes.Contains(b, []byte(`"dead"`)) {
		t.Fatalf("backup: %s, %v", b, err)
	}
	if tok, err := s.Load(); err != nil || tok.RefreshToken != "r" {
		t.Fatalf("tokens not kept: %v, %v", tok, err)
	}

	// A preregistered client is never poisoned.
	if err := s.SaveClient(&Client{ClientID: "from-config", Kind: KindPreregistered}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveMeta(&Meta{Issuer: "https://as"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.PoisonClient(); ok || err != nil {
		t.Fatalf("PoisonClient of a preregistered client = %v, %v", ok, err)
	}
	if c, _ := s.LoadClient(); c == nil || c.ClientID != "from-config" {
		t.Fatal("preregistered client removed")
	}
	if m, _ := s.LoadMeta(); m == nil {
		t.Fatal("meta removed with a preregistered client")
	}
}

func TestMerge(t *testing.T) {
	old := &Token{AccessToken: "a1", TokenType: "Bearer", RefreshToken: "r1", Scope: "read", ExpiresIn: 60, ExpiresAt: 100,
		ObtainedAt: 10, Account: "me", Issuer: "https://as", Resource: "https://rs",
		Extra: map[string]json.RawMessage{"id_token": json.RawMessage(`"x"`)}}
	fresh := &Token{AccessToken: "a2", ExpiresIn: 3600}
	m := Merge(old, fresh)
	if m.RefreshToken != "r1" || m.AccessToken != "a2" || m.Scope != "read" || m.TokenType != "Bearer" ||
		m.ObtainedAt != 10 || m.Account != "me" || m.Issuer != "https://as" || m.Resource != "https://rs" ||
		m.ExpiresAt != 0 || m.ExpiresIn != 3600 || string(m.Extra["id_token"]) != `"x"` {
		t.Fatalf("Merge = %+v", m)
	}
	if fresh.RefreshToken != "" || old.AccessToken != "a1" {
		t.Fatal("Merge modified its arguments")
	}
	m.Extra["id_token"] = json.RawMessage(`"y"`)
	if string(old.Extra["id_token"]) != `"x"` {
		t.Fatal("Merge shares Extra with old")
	}
	if m := Merge(old, &Token{AccessToken: "a2", RefreshToken: "r2"}); m.RefreshToken != "r2" {
		t.Fatalf("a rotated refresh token was not kept: %q", m.RefreshToken)
	}
	if m := Merge(old, &Token{AccessToken: "a2", Issuer: "https://other-as"}); m.RefreshToken != "" || m.Account != "" {
		t.Fatalf("another issuer's grant took old fields: %+v", m)
	}
	if m := Merge(nil, fresh); m.AccessToken != "a2" || m == fresh {
		t.Fatalf("Merge(nil, fresh) = %+v", m)
	}
	if m := Merge(old, nil); m.AccessToken != "a1" || m == old {
		t.Fatalf("Merge(old, nil) = %+v", m)
	}
}

func TestExpiry(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tok := &Token{AccessToken: "a", ExpiresAt: now.Unix() + 60}
	for _, c := range []struct {
		tok           *Token
		skew          time.Duration
		expired, soon bool
	}{
		{tok, 0, false, false},
		{tok, 59 * time.Second, false, false},
		{tok, time.Hour, true, true},
		{tok, 60 * time.Second, true, true},
		{&Token{AccessToken: "a", ExpiresAt: now.Unix()}, 0, true, false},
		{&Token{AccessToken: "a"}, time.Hour, false, false},  // unknown expiry
		{&Token{ExpiresAt: now.Unix() + 60}, 0, true, false}, // no access token
		{nil, 0, true, false},
	} {
		if got := c.tok.Expired(now, c.skew); got != c.expired {
			t.Errorf("%v.Expired(skew %v) = %v", c.tok, c.skew, got)
		}
		if got := c.tok.ExpiresSoon(now, c.skew); got != c.soon {
			t.Errorf("%v.ExpiresSoon(%v) = %v", c.tok, c.skew, got)
		}
	}
}

func TestOAuth2Conversion(t *testing.T) {
	exp := time.Unix(2_000_000_000, 0)
	o := (&oauth2.Token{AccessToken: "a", TokenType: "Bearer", RefreshToken: "r", Expiry: exp, ExpiresIn: 3600}).
		WithExtra(map[string]any{"scope": "read write"})
	tok := FromOAuth2(o)
	if tok.AccessToken != "a" || tok.RefreshToken != "r" || tok.ExpiresAt != exp.Unix() || tok.ExpiresIn != 3600 || tok.Scope != "read write" {
		t.Fatalf("FromOAuth2 = %+v", tok)
	}
	back := tok.OAuth2()
	if back.AccessToken != "a" || back.RefreshToken != "r" || !back.Expiry.Equal(exp) || back.Extra("scope") != "read write" {
		t.Fatalf("OAuth2 = %+v", back)
	}
	if FromOAuth2(nil) != nil || (*Token)(nil).OAuth2() != nil {
		t.Fatal("nil conversions")
	}
	if got := (&Token{AccessToken: "a"}).OAuth2(); !got.Expiry.IsZero() {
		t.Fatal("unknown expiry became a time")
	}
}

func TestPrintingHidesSecrets(t *testing.T) {
	tok := &Token{AccessToken: secret, RefreshToken: secret + "r", Account: "me"}
	c := &Client{ClientID: "cid", ClientSecret: secret}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "token", tok, "client", c)
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%+v %#v %v %s", tok, tok, *tok, c), fmt.Sprintf("%#v %+v", c, *c), logged.String()} {
		if strings.Contains(s, secret) {
			t.Fatalf("printed a secret: %s", s)
		}
	}
	if !strings.Contains(logged.String(), "me") || !strings.Contains(fmt.Sprint(c), "cid") {
		t.Fatalf("printing lost the non-secret fields: %s", logged.String())
	}
}

func TestChangedDetectsAnotherWriter(t *testing.T) {
	dir := t.TempDir()
	a, b := newStore(t, dir, "srv"), newStore(t, dir, "srv")
	if a.Changed() {
		t.Fatal("no file, nothing read: changed")
	}
	if err := b.Save(&Token{AccessToken: "from-b"}); err != nil {
		t.Fatal(err)
	}
	if !a.Changed() {
		t.Fatal("a write by another store not detected")
	}
	if b.Changed() {
		t.Fatal("a store's own write counts as a change")
	}
	if tok, err := a.Load(); err != nil || tok.AccessToken != "from-b" || a.Changed() {
		t.Fatalf("Load = %v, %v; changed after Load: %v", tok, err, a.Changed())
	}
	if err := a.Save(&Token{AccessToken: "from-a"}); err != nil {
		t.Fatal(err)
	}
	if a.Changed() || !b.Changed() {
		t.Fatalf("after a's write: a changed %v, b changed %v", a.Changed(), b.Changed())
	}
	// Same size, same content length: the inode (a new file per write) tells.
	if err := a.Save(&Token{AccessToken: "from-A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Load(); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(&Token{AccessToken: "from-a"}); err != nil {
		t.Fatal(err)
	}
	if !b.Changed() {
		t.Fatal("a same-size rewrite not detected")
	}
	if _, err := b.Remove(); err != nil {
		t.Fatal(err)
	}
	if !a.Changed() || b.Changed() {
		t.Fatal("removal not detected")
	}
}

func TestRefreshLockedKeepsRefreshTokenAndSkipsUnchanged(t *testing.T) {
	s := newStore(t, t.TempDir(), "srv")
	if err := s.Save(&Token{AccessToken: "a1", RefreshToken: "r1", ExpiresAt: 1, Account: "me"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.RefreshLocked(context.Background(), func(cur *Token) (*Token, error) {
		return &Token{AccessToken: "a2", ExpiresIn: 3600}, nil // no refresh_token in the response
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.RefreshToken != "r1" || got.Account != "me" || got.LastRefresh == 0 || got.ExpiresAt < time.Now().Unix() {
		t.Fatalf("RefreshLocked = %+v", got)
	}
	if disk, _ := s.Load(); disk.AccessToken != "a2" || disk.RefreshToken != "r1" {
		t.Fatalf("on disk: %+v", disk)
	}

	// Returning the current token (even a modified-then-restored copy) writes nothing.
	other := newStore(t, s.Dir(), "srv")
	if _, err := other.Load(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshLocked(context.Background(), func(cur *Token) (*Token, error) { return cur, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshLocked(context.Background(), func(*Token) (*Token, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if other.Changed() {
		t.Fatal("an unchanged token was rewritten")
	}

	// fn's error comes back as is, and nothing is written.
	boom := errors.New("boom")
	if _, err := s.RefreshLocked(context.Background(), func(*Token) (*Token, error) { return nil, boom }); err != boom {
		t.Fatalf("error = %v", err)
	}
	if other.Changed() {
		t.Fatal("written after fn failed")
	}
}

// TestLockExcludesWithinProcess runs read-modify-write increments from
// goroutines sharing one Store and from a second Store of the same files:
// none is lost.
func TestLockExcludesWithinProcess(t *testing.T) {
	dir := t.TempDir()
	a, b := newStore(t, dir, "srv"), newStore(t, dir, "srv")
	if err := a.Save(&Token{AccessToken: "0"}); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			_, err := s.RefreshLocked(context.Background(), func(cur *Token) (*Token, error) {
				v, err := strconv.Atoi(cur.AccessToken)
				if err != nil {
					return nil, err
				}
				next := cur.Clone()
				next.AccessToken = strconv.Itoa(v + 1)
				return next, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if tok, err := a.Load(); err != nil || tok.AccessToken != strconv.Itoa(n) {
		t.Fatalf("after %d increments: %v, %v", n, tok, err)
	}
}

func TestLockBoundedByContext(t *testing.T) {
	dir := t.TempDir()
	holder := newStore(t, dir, "srv")
	unlock, err := holder.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, s := range []*Store{holder, newStore(t, dir, "srv")} {
		if _, err := s.Lock(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock with a canceled context: %v", err)
		}
		if _, err := s.RefreshLocked(ctx, func(*Token) (*Token, error) {
			t.Error("fn ran without the lock")
			return nil, nil
		}); !errors.Is(err, context.Canceled) {
			t.Fatalf("RefreshLocked with a canceled context: %v", err)
		}
	}
	unlock()
	unlock() // twice is harmless
	again, err := holder.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	again()
}

// TestLockSurvivesRemovedLockFile: a waiter that locked a lock file a
// Remove deleted locks the new file at the path instead, so a newcomer
// cannot hold the lock at the same time.
func TestLockSurvivesRemovedLockFile(t *testing.T) {
	dir := t.TempDir()
	a, b := newStore(t, dir, "srv"), newStore(t, dir, "srv")
	unlock, err := a.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		u, err := b.Lock(context.Background())
		if err != nil {
			t.Error(err)
			u = func() {}
		}
		got <- u
	}()
	if _, err := a.Remove(); err != nil {
		t.Fatal(err)
	}
	unlock()
	unlockB := <-got
	defer unlockB()
	probe := flock.New(a.LockPath())
	ok, err := probe.TryLock()
	if err != nil || ok {
		_ = probe.Unlock()
		t.Fatalf("the file at the lock path is not locked by b: TryLock = %v, %v", ok, err)
	}
}
