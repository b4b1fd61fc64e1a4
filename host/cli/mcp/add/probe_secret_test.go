package add

import (
	"bytes"
	"context"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/mark3labs/mcp-go/server"
)

// A token typed for an HTTP server during 'mcp add' reaches the server as
// its bearer header through the config layer alone: while the probe runs,
// the hermes process environment does not hold it, and no file holds it
// until the entry is saved, when only .env does.
func TestAddProbeKeepsTypedTokenOutOfEnvironmentAndFiles(t *testing.T) {
	// Not in parallel: sets variables hermes reads from the process.
	const key, token = "MCP_SPY_API_KEY", "tok-typed-only-7f3a9c"
	if _, set := os.LookupEnv(key); set {
		t.Fatalf("%s is set in the test's environment", key)
	}
	var requests, authorized, leaked atomic.Int64
	mcp := server.NewStreamableHTTPServer(testserver.New(testserver.Options{Name: "spy"}))
	spy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if _, set := os.LookupEnv(key); set {
			leaked.Add(1)
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		mcp.ServeHTTP(w, r)
	}))
	defer spy.Close()

	home := t.TempDir()
	// A short TMPDIR: the plugins put their sockets there, and a socket's
	// path has a small length limit.
	tmp, err := os.MkdirTemp("", "hp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("HERMES_HOME", home)
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	t.Setenv("TMPDIR", tmp)
	testbin.Path(t, "hermes-transport-http")
	var out bytes.Buffer
	e := &cmdkit.Env{In: strings.NewReader(""), Out: &out, Err: &out, P: ui.New(&out, &out, strings.NewReader("")),
		Opts: cmdkit.RunOptions{Env: append(os.Environ(), "HERMES_HOME="+home, "HERMES_PLUGIN_PATH="+testbin.Dir(t))}}
	cmdkit.Setup(e)
	defer func() {
		cmdkit.CloseRun(e)
		log.SetOutput(os.Stderr)
	}()

	entry := config.NewServerEntry().URL(spy.URL+"/mcp").Header("Authorization", "Bearer ${"+key+"}")
	plan := &AddPlan{Entry: entry, Secrets: []DotEnvValue{{key, token}}}
	tools, err := AddProbe(e, context.Background(), &AddOptions{Name: "spy"}, plan)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out.String())
	}
	if len(tools) == 0 || authorized.Load() == 0 {
		t.Fatalf("the probe did not list the tools with the typed token: %d tools, %d of %d requests authorized", len(tools), authorized.Load(), requests.Load())
	}
	if n := leaked.Load(); n > 0 {
		t.Fatalf("%s was in the hermes process environment during %d of %d requests of the probe", key, n, requests.Load())
	}
	if _, set := os.LookupEnv(key); set {
		t.Fatalf("%s is in the hermes process environment after the probe", key)
	}
	if held := filesHolding(t, token, home, tmp); len(held) > 0 {
		t.Fatalf("files hold the token before anything was saved: %q", held)
	}
	if _, err := os.Stat(filepath.Join(home, config.File)); err == nil {
		t.Fatal("the probe wrote config.yaml")
	}

	if err := SaveAdd(e, "spy", plan); err != nil {
		t.Fatal(err)
	}
	if held := filesHolding(t, token, home, tmp); len(held) != 1 || held[0] != filepath.Join(home, config.DotEnvFile) {
		t.Fatalf("after saving, the token is in %q; want only .env", held)
	}
	if strings.Contains(out.String(), token) {
		t.Fatalf("the token was printed:\n%s", out.String())
	}
}

// filesHolding lists the regular files under roots whose content holds s.
func filesHolding(t *testing.T, s string, roots ...string) []string {
	t.Helper()
	var held []string
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil // plugin sockets and folders come and go
			}
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(s)) {
				held = append(held, path)
			}
			return nil
		})
	}
	return held
}
