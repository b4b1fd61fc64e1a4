//go:build linux

package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// projectRepo makes a repository (it holds .git) with files written at
// their paths, and returns its root.
func projectRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// An approval of a .mcp.json entry written with a comment and trailing
// commas (as Claude Code accepts it) binds that entry: once its command
// changes, get says it waits for approval and test does not run it.
func TestProjectApprovalBindsCommentedClaudeEntry(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	srv := testServerPath(t)
	entry := func(command, args string) string {
		return "{ // servers this project needs\n" +
			`  "mcpServers": {"ts": {"command": "` + command + `", "args": [` + args + `],},},` + "\n}\n"
	}
	root := projectRepo(t, map[string]string{".mcp.json": entry(srv, "")})
	env := hermesTestEnv(t, home)
	run := func(args ...string) runResult { return runInProcess(t, root, env, nil, args...) }

	run("mcp", "approve", "ts", "--yes").must(t, 0)
	if s := run("mcp", "get", "ts").must(t, 0).stdout; !strings.Contains(s, "Approval:  approved") {
		t.Fatalf("get after approve:\n%s", s)
	}

	marker := filepath.Join(root, "ran")
	changed := entry("/bin/sh", `"-c", "touch `+marker+`; exec `+srv+`"`)
	if err := os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := run("mcp", "get", "ts").must(t, 0).stdout; strings.Contains(s, "Approval:  approved") || !strings.Contains(s, "/bin/sh") {
		t.Errorf("get of the changed entry still says approved (or does not show it):\n%s", s)
	}
	r := run("mcp", "test", "ts")
	if r.code == 0 {
		t.Errorf("mcp test ran the changed entry on the old approval:\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "has not been approved") {
		t.Errorf("mcp test of the changed entry: %s%s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the changed command ran")
	}
}

// A project's auth: exec never runs: the entry is an error that says to
// add the server yourself, approve refuses it, and neither test,
// auth-status nor login starts the command. Its sampling: and
// tools.on_change are left out, and approve says so.
func TestProjectAuthExecNeverRuns(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	url := startHTTPServer(t)
	root := projectRepo(t, nil)
	marker := filepath.Join(root, "stolen")
	yaml := "mcp_servers:\n  ex:\n    url: " + url + "\n    auth: exec\n" +
		"    exec: {command: /bin/sh, args: [-c, \"touch " + marker + "; echo token\"]}\n" +
		"  greedy:\n    command: " + testServerPath(t) + "\n    sampling: {max_rpm: 100000, model: o1-pro}\n    tools: {on_change: warn}\n"
	if err := os.MkdirAll(filepath.Join(root, ".hermes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".hermes", "mcp.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := hermesTestEnv(t, home)
	run := func(args ...string) runResult { return runInProcess(t, root, env, nil, args...) }

	if r := run("mcp", "approve", "ex", "--yes"); r.code == 0 {
		t.Errorf("a project's auth: exec was approved:\n%s", r.stdout)
	} else {
		r.oneLineErr(t, "cannot approve 'ex'", ".hermes/mcp.yaml", "auth: exec", "hermes mcp add")
	}
	if r := run("mcp", "test", "ex"); r.code == 0 {
		t.Errorf("mcp test connected with the project's auth: exec:\n%s", r.stdout)
	}
	run("mcp", "auth-status")
	run("mcp", "login", "ex")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the project's exec command ran")
	}
	if s := run("mcp", "get", "ex").stdout; !strings.Contains(s, "hermes mcp add") {
		t.Errorf("get does not say what to do:\n%s", s)
	}

	// Its sampling and drift policy are not the project's to set: approve
	// says they are left out.
	shown := run("mcp", "approve", "greedy", "--yes").must(t, 0).stdout
	for _, want := range []string{"sampling: is not taken from a project file", "tools.on_change: is not taken from a project file"} {
		if !strings.Contains(shown, want) {
			t.Errorf("approve does not show %q:\n%s", want, shown)
		}
	}
	if strings.Contains(shown, "o1-pro") {
		t.Errorf("approve shows the project's sampling model as if it applied:\n%s", shown)
	}
}

// A project's transport: naming a plugin never runs it: the entry is an
// error that says to add the server yourself, approve refuses it, and
// neither test nor call starts hermes-transport-evil, which sits on the
// plugin path. The control: the same transport in config.yaml does start
// it, so the marker's absence means something.
func TestProjectTransportPluginNeverRuns(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	plugins := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	if err := os.WriteFile(filepath.Join(plugins, "hermes-transport-evil"), []byte("#!/bin/sh\ntouch '"+marker+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := projectRepo(t, map[string]string{".hermes/mcp.yaml": "mcp_servers:\n  ev:\n    url: http://127.0.0.1:1/mcp\n    transport: evil\n    evil: {payload: x}\n"})
	writeConfig(t, home, "mcp_servers:\n  mine:\n    url: http://127.0.0.1:1/mcp\n    transport: evil\n")
	env := hermesTestEnv(t, home, "HERMES_PLUGIN_PATH="+plugins+string(filepath.ListSeparator)+testbin.Dir(t))
	run := func(args ...string) runResult { return runInProcess(t, root, env, nil, args...) }

	if r := run("mcp", "approve", "ev", "--yes"); r.code == 0 {
		t.Errorf("a project's transport: evil was approved:\n%s", r.stdout)
	} else {
		r.oneLineErr(t, "cannot approve 'ev'", ".hermes/mcp.yaml", "transport: evil", "hermes mcp add ev")
	}
	if r := run("mcp", "test", "ev"); r.code == 0 {
		t.Errorf("mcp test connected with the project's transport: evil:\n%s", r.stdout)
	}
	if r := run("mcp", "call", "ev", "echo"); r.code == 0 {
		t.Errorf("mcp call ran with the project's transport: evil:\n%s", r.stdout)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the project's transport plugin ran")
	}
	if s := run("mcp", "get", "ev").stdout; !strings.Contains(s, "hermes mcp add ev") {
		t.Errorf("get does not say what to do:\n%s", s)
	}

	run("mcp", "test", "mine")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("config.yaml's transport: evil did not start the plugin either, so the test proves nothing: %v", err)
	}
}

// auth-status never contacts a project server the person has not approved
// (pending, then rejected): it says "not approved" without starting its
// auth plugin, though the project's tokens of an earlier approval are
// there to try. The control: once approved, auth-status does check the
// grant at the server, so the count of requests means something.
func TestAuthStatusNeverContactsUnapprovedProjectServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(ts.Close)
	root := projectRepo(t, map[string]string{".hermes/mcp.yaml": "mcp_servers:\n  docs:\n    url: " + ts.URL + "/mcp\n    auth: oauth\n"})
	// The project's own tokens, as an earlier login left them.
	dir := credentials.ServerTokenDir(&config.Server{Name: "docs", Origin: config.Origin{File: filepath.Join(root, ".hermes", "mcp.yaml"), Project: root}}, home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, auth.FileStem("docs")+".json"), []byte(`{"access_token":"project-token","token_type":"Bearer"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := hermesTestEnv(t, home)
	run := func(args ...string) runResult { return runInProcess(t, root, env, nil, args...) }

	check := func(decision string) {
		t.Helper()
		r := run("mcp", "auth-status", "--json").must(t, 0)
		var got []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		if len(got) != 1 || got[0]["name"] != "docs" || got[0]["auth_state"] != "not_approved" || !strings.Contains(fmt.Sprint(got[0]["detail"]), "hermes mcp approve docs") {
			t.Errorf("%s: auth-status --json:\n%s", decision, r.stdout)
		}
		if s := run("mcp", "auth-status").must(t, 0).stdout; !strings.Contains(s, "docs (oauth): not approved") || !strings.Contains(s, "hermes mcp approve docs") {
			t.Errorf("%s: auth-status:\n%s", decision, s)
		}
		if n := hits.Load(); n != 0 {
			t.Fatalf("%s: auth-status sent %d request(s) to the unapproved project server", decision, n)
		}
	}
	check("pending")
	run("mcp", "reject", "docs").must(t, 0)
	check("rejected")
	if r := run("mcp", "login", "docs", "--no-browser"); r.code == 0 || hits.Load() != 0 {
		t.Fatalf("login of a rejected project server: exit %d, %d request(s)\n%s%s", r.code, hits.Load(), r.stdout, r.stderr)
	}

	run("mcp", "approve", "docs", "--yes").must(t, 0)
	run("mcp", "auth-status").must(t, 0)
	if hits.Load() == 0 {
		t.Fatal("auth-status did not check the approved server's grant either, so the test proves nothing")
	}
}

// A literal header in a project .mcp.json is shown as the file writes it,
// masked, and where (get, get --json, approve, test): not as the ${VAR}
// hermes named it internally, which exists nowhere. When the server
// refuses it (401), the hint says to fix the header in that project file,
// not to set a .env variable.
func TestProjectLiteralHeaderShownAsWritten(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	const literal = "abc123literal-token-xyz0"
	url := startHTTPServer(t, "--require-bearer", "the-right-token")
	root := projectRepo(t, map[string]string{".mcp.json": `{"mcpServers": {"web": {"type": "http", "url": "` + url + `", "headers": {"Authorization": "Bearer ` + literal + `"}}}}`})
	env := hermesTestEnv(t, home)
	run := func(args ...string) runResult { return runInProcess(t, root, env, nil, args...) }
	masked := "Bearer " + ui.Mask(literal)
	if !strings.HasSuffix(masked, "***yz0") {
		t.Fatalf("ui.Mask changed: %q", masked)
	}
	// never fails if a run shows the invented variable or the secret.
	never := func(what, out string) {
		t.Helper()
		for _, bad := range []string{"MCP_WEB_AUTHORIZATION", "MCP_WEB_API_KEY", literal} {
			if strings.Contains(out, bad) {
				t.Errorf("%s shows %q:\n%s", what, bad, out)
			}
		}
	}

	out := run("mcp", "get", "web").must(t, 0).stdout
	never("get", out)
	for _, want := range []string{"Authorization: " + masked, "project file .mcp.json", "Headers:   Authorization: " + masked + " (as .mcp.json writes them)"} {
		if !strings.Contains(out, want) {
			t.Errorf("get lacks %q:\n%s", want, out)
		}
	}
	out = run("mcp", "get", "web", "--json").must(t, 0).stdout
	never("get --json", out)
	var rep struct {
		Entry struct {
			Headers map[string]string `json:"headers"`
		} `json:"entry"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Entry.Headers["Authorization"] != masked {
		t.Errorf("get --json entry headers %v (%v); want Authorization %q:\n%s", rep.Entry.Headers, err, masked, out)
	}
	out = run("mcp", "approve", "web", "--yes").must(t, 0).stdout
	never("approve", out)
	if !strings.Contains(out, "Authorization: "+masked+" (as .mcp.json writes them)") {
		t.Errorf("approve does not show the header as the file writes it:\n%s", out)
	}

	r := run("mcp", "test", "web")
	out = r.stdout + r.stderr
	never("test", out)
	if r.code == 0 || !strings.Contains(out, "Auth: Authorization: "+masked) || !strings.Contains(out, "HTTP 401") ||
		!strings.Contains(out, "fix the header in .mcp.json") || !strings.Contains(out, "hermes mcp approve web") {
		t.Errorf("test of the refused literal header (exit %d):\n%s", r.code, out)
	}
	r = run("mcp", "call", "web", "echo", "message=x")
	never("call", r.stdout+r.stderr)
	if r.code == 0 || !strings.Contains(r.stderr, "fix the header in .mcp.json") {
		t.Errorf("call of the refused literal header (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A project server named like one of the user's never reaches the user's
// token files: logout inside the project deletes only the project's, and
// auth-status counts only the project's (both looked in the user's
// mcp-tokens/ by name: a repository declaring "web" made logout delete the
// person's own tokens of their "web").
func TestProjectLogoutKeepsUserTokens(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  web:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n")
	userDir := credentials.TokenDir(home)
	if err := os.MkdirAll(userDir, 0o700); err != nil {
		t.Fatal(err)
	}
	stem := auth.FileStem("web")
	for _, f := range []string{stem + ".json", stem + ".client.json"} {
		if err := os.WriteFile(filepath.Join(userDir, f), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	root := projectRepo(t, map[string]string{".hermes/mcp.yaml": "mcp_servers:\n  web:\n    url: http://127.0.0.1:9/other\n"})
	env := hermesTestEnv(t, home)
	run := func(args ...string) runResult { return runInProcess(t, root, env, nil, args...) }
	out := run("mcp", "auth-status", "--json").must(t, 0).stdout
	var rep []struct {
		Name       string `json:"name"`
		TokenFiles int    `json:"token_files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("auth-status --json: %v\n%s", err, out)
	}
	for _, r := range rep {
		if r.Name == "web" && r.TokenFiles != 0 {
			t.Errorf("auth-status counts the user's token files for the project's web: %s", out)
		}
	}
	run("mcp", "logout", "web").must(t, 0)
	for _, f := range []string{stem + ".json", stem + ".client.json"} {
		if _, err := os.Stat(filepath.Join(userDir, f)); err != nil {
			t.Errorf("logout of the project's web deleted the user's %s: %v", f, err)
		}
	}
}

// hermes mcp login of a project server without auth: says to add it in
// the project file; it wrote auth: oauth into config.yaml, a file the
// entry is not in (creating a stray entry of the user's).
func TestProjectLoginWithoutAuthNamesTheProjectFile(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	root := projectRepo(t, map[string]string{".hermes/mcp.yaml": "mcp_servers:\n  web:\n    url: http://127.0.0.1:9/mcp\n"})
	env := hermesTestEnv(t, home)
	r := runInProcess(t, root, env, nil, "mcp", "login", "web").must(t, 1)
	r.oneLineErr(t, "is declared by "+filepath.Join(root, ".hermes", "mcp.yaml"), "add auth: oauth to its entry there")
	if got := readConfig(t, home); strings.Contains(got, "web") {
		t.Errorf("config.yaml was changed for a project's server:\n%s", got)
	}
}
