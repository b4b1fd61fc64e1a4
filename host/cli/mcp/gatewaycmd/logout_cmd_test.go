package gatewaycmd_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/cli/mcp/gatewaycmd"
	"github.com/hermes-agent/hermes/host/gateway/vault"
	"github.com/hermes-agent/hermes/internal/testbin"
)

// The command line of 'logout': --subject is required, --server optional.
func TestNewCmdLogoutParsesFlags(t *testing.T) {
	var got *gatewaycmd.LogoutOptions
	cmd := gatewaycmd.NewCmdLogout(&cmdkit.Env{}, func(_ context.Context, o *gatewaycmd.LogoutOptions) error { got = o; return nil })
	if err := cmd.Run(context.Background(), []string{"logout", "--subject", "ann@example.com", "--server", "notes"}); err != nil {
		t.Fatal(err)
	}
	if got.Subject != "ann@example.com" || got.Server != "notes" {
		t.Fatalf("parsed %+v", got)
	}
	cmd = gatewaycmd.NewCmdLogout(&cmdkit.Env{}, func(context.Context, *gatewaycmd.LogoutOptions) error { t.Fatal("ran without --subject"); return nil })
	if err := cmd.Run(context.Background(), []string{"logout", "--server", "notes"}); err == nil || !strings.Contains(err.Error(), "--subject SUBJECT") {
		t.Fatalf("without --subject: %v", err)
	}
}

// 'hermes-gateway logout' removes one person's files, of one server
// through the real auth plugin (which deletes them) or all of them with
// their folder, and leaves the other person's; a wrong vault key is one
// line and removes nothing.
func TestLogoutRemovesOnePersonsTokens(t *testing.T) {
	t.Parallel()
	bin := testbin.Path(t, "hermes-gateway")
	testbin.Path(t, "hermes-auth-oauth")
	home := t.TempDir()
	sum := sha256.Sum256([]byte("ann-static-token-0123456789"))
	cfg := "mcp_servers:\n  notes:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n  wiki:\n    url: http://127.0.0.1:9/wiki\n    auth: oauth\n" +
		"gateway:\n  resource: http://127.0.0.1:8080/mcp\n  tokens:\n    - {subject: ann@example.com, sha256: \"" + hex.EncodeToString(sum[:]) + "\"}\n" +
		"  policy:\n    - {allow: {tools: [\"*\"]}}\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte{9}, vault.KeySize)
	v, err := vault.Open(filepath.Join(home, vault.DirName), key)
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"ann@example.com", "ben@example.com"} {
		dir := v.PersonDir(who)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"notes.json", "notes.client.json", "wiki.json"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("sealed elsewhere"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(keyValue string, args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"HERMES_HOME=" + home, "HOME=" + t.TempDir(), "HERMES_PLUGIN_PATH=" + testbin.Dir(t), "PATH=" + os.Getenv("PATH"),
			"HERMES_GATEWAY_VAULT_KEY=" + keyValue}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	good := base64.StdEncoding.EncodeToString(key)
	exists := func(who, f string) bool {
		_, err := os.Stat(filepath.Join(v.PersonDir(who), f))
		return err == nil
	}

	out, errOut, code := run(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, vault.KeySize)), "logout", "--subject", "ann@example.com")
	if code != 1 || !strings.Contains(errOut, "$HERMES_GATEWAY_VAULT_KEY does not open the vault") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !exists("ann@example.com", "notes.json") {
		t.Fatalf("wrong key: %d %q %q", code, out, errOut)
	}

	out, errOut, code = run(good, "logout", "--subject", "ann@example.com", "--server", "notes")
	if code != 0 || !strings.Contains(out, "notes: ann@example.com's tokens deleted (2 files)") {
		t.Fatalf("logout of notes: %d %q %q", code, out, errOut)
	}
	if exists("ann@example.com", "notes.json") || exists("ann@example.com", "notes.client.json") || !exists("ann@example.com", "wiki.json") || !exists("ben@example.com", "notes.json") {
		t.Fatal("logout of ann's notes removed the wrong files")
	}

	out, errOut, code = run(good, "logout", "--subject", "ann@example.com")
	if code != 0 || !strings.Contains(out, "wiki: ann@example.com's tokens deleted") {
		t.Fatalf("logout of ann: %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(v.PersonDir("ann@example.com")); !errors.Is(err, os.ErrNotExist) || !exists("ben@example.com", "notes.json") || !exists("ben@example.com", "wiki.json") {
		t.Fatal("logout of ann removed the wrong files")
	}

	if _, errOut, code = run(good, "logout", "--subject", "ben@example.com", "--server", "nope"); code != 1 || !strings.Contains(errOut, "no server 'nope' with auth: oauth") {
		t.Fatalf("unknown server: %d %q", code, errOut)
	}
}
