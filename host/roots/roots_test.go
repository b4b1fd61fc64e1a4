package roots_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/roots"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// TestLoadResolves: the working folder comes first, then roots: in
// order: ~ expanded, relative paths taken from the working folder, file://
// URIs, names (else the base name), duplicates once, characters a URI
// cannot hold escaped.
func TestLoadResolves(t *testing.T) {
	home := t.TempDir()
	cfg := "roots:\n" +
		"  - ~/src\n" +
		"  - ../shared\n" +
		"  - {path: /srv/my data, name: Data}\n" +
		"  - {uri: \"file:///opt/x\", name: X}\n" +
		"  - /srv/project/\n" +
		"  - ${ROOTS_TEST_DIR}\n" +
		"mcp_servers: {}\n"
	if err := os.WriteFile(filepath.Join(home, config.File), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROOTS_TEST_DIR", "/var/lib/thing")
	got, err := roots.Load(home, "/srv/project", "/home/me", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []mcpvalue.Root{
		{URI: "file:///srv/project", Name: "project"},
		{URI: "file:///home/me/src", Name: "src"},
		{URI: "file:///srv/shared", Name: "shared"},
		{URI: "file:///srv/my%20data", Name: "Data"},
		{URI: "file:///opt/x", Name: "X"},
		{URI: "file:///var/lib/thing", Name: "thing"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("root %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestLoadReadsTheRunsEnvironment: a ${VAR} of roots: is looked up in the
// environment Load is given (the run's, cli.Options.Env), before .env, and
// never in the process's; nil is the process's.
func TestLoadReadsTheRunsEnvironment(t *testing.T) {
	home := t.TempDir()
	cfg := "roots:\n  - ${ROOTS_TEST_RUN_DIR}\n  - ${ROOTS_TEST_DOTENV_DIR}\n"
	if err := os.WriteFile(filepath.Join(home, config.File), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, config.DotEnvFile), []byte("ROOTS_TEST_RUN_DIR=/from/dotenv\nROOTS_TEST_DOTENV_DIR=/dotenv/only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROOTS_TEST_RUN_DIR", "/from/process")
	t.Setenv("ROOTS_TEST_DOTENV_DIR", "/from/process/too")
	run := func(k string) (string, bool) {
		if k == "ROOTS_TEST_RUN_DIR" {
			return "/from/run", true
		}
		return "", false
	}
	for _, c := range []struct {
		name string
		env  func(string) (string, bool)
		want []string
	}{
		{"the run's environment", run, []string{"file:///w", "file:///from/run", "file:///dotenv/only"}},
		{"the process's environment", nil, []string{"file:///w", "file:///from/process", "file:///from/process/too"}},
	} {
		got, err := roots.Load(home, "/w", "/h", c.env)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var uris []string
		for _, r := range got {
			uris = append(uris, r.URI)
		}
		if strings.Join(uris, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: roots %v, want %v", c.name, uris, c.want)
		}
	}
}

// TestLoadErrors: a wrong roots: is one line naming the entry and what to
// do; no file or no key is the working folder alone.
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ cfg, want string }{
		{"roots: /a\n", "roots must be a list of folders, got a string; fix the file"},
		{"roots:\n  - {path: /a, uri: \"file:///b\"}\n", "roots[0]: give exactly one of path or uri"},
		{"roots:\n  - {path: /a, label: x}\n", `roots[0]: unknown key "label" (path, uri, name)`},
		{"roots:\n  - [a]\n", "roots[0]: want a folder or a mapping of path and name, got a list"},
		{"roots:\n  - {uri: \"https://example.com/x\"}\n", `roots[0]: "https://example.com/x" is not a file:// URI of an absolute path`},
		{"roots:\n  - ${ROOTS_TEST_UNSET_VAR}\n", "roots[0] needs ${ROOTS_TEST_UNSET_VAR}"},
		{"roots:\n" + strings.Repeat("  - /a\n", config.MaxRoots+1), "roots lists 101 folders, more than the 100 hermes accepts"},
	} {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, config.File), []byte(c.cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := roots.Load(home, "/w", "/h", nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line with %q", c.cfg, err, c.want)
		}
	}
	got, err := roots.Load(t.TempDir(), "/w", "/h", nil)
	if err != nil || len(got) != 1 || got[0].URI != "file:///w" {
		t.Fatalf("no config: %v, %v", got, err)
	}
}

// TestListChangedReachesServers: when the roots change, a connected server
// of 2025-11-25 gets notifications/roots/list_changed and reads the new
// list; a 2026-07-28 server, which asks with each request, is sent
// nothing and reads the new list all the same.
func TestListChangedReachesServers(t *testing.T) {
	dir := testbin.Dir(t)
	testbin.Path(t, "hermes-transport-stdio")
	testbin.Path(t, "hermes-testserver")
	t.Setenv("HERMES_PLUGIN_PATH", dir)
	home := t.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home, Logger: hclog.NewNullLogger()})
	t.Cleanup(sup.KillAll)
	server := func(name, rev string) *config.Server {
		return &config.Server{
			Name: name, Transport: "stdio", Command: filepath.Join(dir, "hermes-testserver"),
			Enabled: true, ConnectTimeout: 60 * time.Second, Timeout: 60 * time.Second,
			KeepaliveInterval: config.DefaultKeepaliveInterval, Protocol: rev,
		}
	}
	set := roots.NewSet([]mcpvalue.Root{{URI: "file:///one", Name: "one"}})
	m := registry.New(registry.Options{
		Servers:  []*config.Server{server("legacy", "2025-11-25"), server("modern", "2026-07-28")},
		Deps:     session.Deps{Home: home, Supervisor: sup, Logger: hclog.NewNullLogger()},
		Requests: func(*config.Server) registry.Requests { return registry.Requests{Roots: set} },
	})
	t.Cleanup(func() { m.Close() })
	var told []string
	set.OnChange(func(ctx context.Context) { told = m.NotifyRootsChanged(ctx) })
	ctx := context.Background()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	call := func(srv string, args map[string]any) string {
		t.Helper()
		res, err := m.CallTool(ctx, srv, "roots", argsJSON(t, args))
		if err != nil || res.IsError {
			t.Fatalf("%s roots: %v %+v", srv, err, res)
		}
		return res.Content[0].Text
	}
	for _, srv := range []string{"legacy", "modern"} {
		if got := call(srv, nil); !strings.Contains(got, "file:///one") {
			t.Fatalf("%s reads %s", srv, got)
		}
	}
	if set.Update(ctx, set.Roots()) {
		t.Fatal("an unchanged list counts as a change")
	}
	if !set.Update(ctx, []mcpvalue.Root{{URI: "file:///two", Name: "two"}}) {
		t.Fatal("a new list does not count as a change")
	}
	if len(told) != 1 || told[0] != "legacy" {
		t.Fatalf("told %v, want [legacy]", told)
	}
	testwait.For(t, 60*time.Second, "the legacy server to get roots/list_changed", func() bool {
		return call("legacy", map[string]any{"changes": true}) == "1"
	})
	if got := call("modern", map[string]any{"changes": true}); got != "0" {
		t.Errorf("the 2026-07-28 server got %s roots/list_changed", got)
	}
	for _, srv := range []string{"legacy", "modern"} {
		if got := call(srv, nil); !strings.Contains(got, "file:///two") || strings.Contains(got, "file:///one") {
			t.Errorf("%s reads %s after the change", srv, got)
		}
	}
}

// TestReload: a changed roots: or working folder replaces the list and
// runs OnChange once; an unchanged one does nothing; a broken one keeps
// the list.
func TestReload(t *testing.T) {
	home := t.TempDir()
	write := func(cfg string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, config.File), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("roots: [/a]\n")
	list, err := roots.Load(home, "/w", "/h", nil)
	if err != nil {
		t.Fatal(err)
	}
	set := roots.NewSet(list)
	changes := 0
	set.OnChange(func(context.Context) { changes++ })
	ctx := context.Background()
	if changed, err := set.Reload(ctx, home, "/w", "/h", nil); changed || err != nil || changes != 0 {
		t.Fatalf("unchanged: %v %v, %d changes", changed, err, changes)
	}
	write("roots: [/a, /b]\n")
	if changed, err := set.Reload(ctx, home, "/w", "/h", nil); !changed || err != nil || changes != 1 || len(set.Roots()) != 3 {
		t.Fatalf("a root added: %v %v, %d changes, %v", changed, err, changes, set.Roots())
	}
	if changed, _ := set.Reload(ctx, home, "/elsewhere", "/h", nil); !changed || set.Roots()[0].URI != "file:///elsewhere" || changes != 2 {
		t.Fatalf("a new working folder: %v, %v", changed, set.Roots())
	}
	write("roots: 3\n")
	if changed, err := set.Reload(ctx, home, "/w", "/h", nil); changed || err == nil || len(set.Roots()) != 3 || changes != 2 {
		t.Fatalf("a broken roots: %v %v, %v", changed, err, set.Roots())
	}
}

// argsJSON is a call's arguments as the registry takes them.
func argsJSON(t *testing.T, args map[string]any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
