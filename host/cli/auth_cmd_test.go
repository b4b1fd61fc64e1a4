package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
)

// The token the test servers want. No output of hermes may contain it.
const authTestToken = "tok-Zq81vN4pW7cX2"

// authFixture is a Hermes home with a test server that wants
// authTestToken, reached through the fake auth plugin (hermes-auth-fake).
type authFixture struct {
	t      *testing.T
	home   string
	url    string
	record string // the fake plugin's record of calls
	seen   strings.Builder
}

// newAuthFixture writes config.yaml with the server "fk" (auth: fake), its
// fake: block ending in fakeSettings, and the entries in extra ("{URL}"
// there is the test server's).
func newAuthFixture(t *testing.T, fakeSettings string, extra string) *authFixture {
	t.Helper()
	f := &authFixture{t: t, home: newHome(t), url: startHTTPServer(t, "--require-bearer", authTestToken)}
	f.record = filepath.Join(t.TempDir(), "record.log")
	writeConfig(t, f.home, "# servers\nmcp_servers:\n"+
		"  fk:   # the fake plugin\n    url: "+f.url+"\n    auth: fake\n    fake:\n      token: "+authTestToken+"\n      record: "+f.record+"\n"+fakeSettings+strings.ReplaceAll(extra, "{URL}", f.url))
	return f
}

// run runs hermes with stdin from in ("" for /dev/null), keeping the output
// to check for the token at the end.
func (f *authFixture) run(extra []string, in string, args ...string) runResult {
	f.t.Helper()
	var r runResult
	if in == "" {
		r = runHermesEnv(f.t, f.home, extra, args...)
	} else {
		r = runHermesInput(f.t, f.home, extra, strings.NewReader(in), args...)
	}
	f.seen.WriteString(r.stdout + r.stderr)
	return r
}

// calls returns the fake plugin's record.
func (f *authFixture) calls() string {
	b, _ := os.ReadFile(f.record)
	return string(b)
}

// noTokenShown fails if any output held the token.
func (f *authFixture) noTokenShown() {
	f.t.Helper()
	if strings.Contains(f.seen.String(), authTestToken) {
		f.t.Fatalf("the token was printed:\n%s", f.seen.String())
	}
}

// fakeBrowser returns the BROWSER value of the stand-in browser, which logs
// the URLs it is given to the returned file (and fetches them unless
// noFetch).
func fakeBrowser(t *testing.T, noFetch bool) (env, log string) {
	t.Helper()
	log = filepath.Join(t.TempDir(), "browser.log")
	env = "BROWSER=" + testbin.Path(t, "fakebrowser") + " --log " + log
	if noFetch {
		env += " --no-fetch"
	}
	return env, log
}

// Background commands never log in: a server whose plugin has no token
// says which command to run. 'hermes mcp login' opens the page through
// $BROWSER, whose visit completes the login; the connection then works,
// and logout deletes the plugin's files.
func TestLoginThroughBrowserThenLogout(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, "", "")
	testbin.Path(t, "hermes-auth-fake")

	r := f.run(nil, "", "mcp", "test", "fk").must(t, 1)
	if !strings.Contains(r.stdout, "Auth: fake (plugin hermes-auth-fake)") ||
		!strings.Contains(r.stdout, "MCP server 'fk' needs a login: no token is stored; run: hermes mcp login fk") {
		t.Errorf("mcp test before login:\n%s", r.stdout)
	}
	r = f.run(nil, "", "tools", "--json").must(t, 0)
	var tools struct {
		Servers []struct {
			Name  string `json:"name"`
			State string `json:"state"`
			Error struct{ Code, Message string }
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools.Servers) != 1 || tools.Servers[0].State != "needs_auth" ||
		tools.Servers[0].Error.Code != "login_needed" || !strings.Contains(tools.Servers[0].Error.Message, "run: hermes mcp login fk") {
		t.Errorf("tools --json before login (%v):\n%s", err, r.stdout)
	}
	f.run(nil, "", "mcp", "call", "fk", "echo", "--arg", "message=hi").must(t, 1).oneLineErr(t, "needs a login", "hermes mcp login fk")
	if c := f.calls(); strings.Contains(c, "login") || !strings.Contains(c, "challenge status=401 interactive=false") ||
		strings.Contains(c, "interactive=true") {
		t.Fatalf("background commands asked the plugin:\n%s", c)
	}

	browser, visited := fakeBrowser(t, false)
	r = f.run([]string{browser}, "", "mcp", "login", "fk").must(t, 0)
	for _, want := range []string{
		"✓ Logged in to 'fk' as tester@example.com (scopes: mcp:read; expires in 1h)",
		"✓ Connected: 21 tools",
		"Opened your browser. If it did not open, visit:",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("login stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	urls, _ := os.ReadFile(visited)
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/callback\?code=fake-code-123\n$`).Match(urls) {
		t.Errorf("the browser was given %q", urls)
	}
	if c := f.calls(); !strings.Contains(c, "login no_browser=false device=false scope=\"\" interactive=true") || !strings.Contains(c, "open_url error=<nil>") {
		t.Errorf("plugin calls:\n%s", c)
	}

	r = f.run(nil, "", "mcp", "call", "fk", "last_auth_header").must(t, 0)
	if strings.TrimSpace(r.stdout) != "Bearer "+authTestToken {
		t.Errorf("the server saw %q", r.stdout)
	}
	f.seen.Reset() // that output is the token, on purpose
	f.run(nil, "", "mcp", "test", "fk").must(t, 0)

	r = f.run(nil, "", "mcp", "logout", "fk").must(t, 0)
	if r.stdout != "  ✓ Deleted 2 credential files\n" {
		t.Errorf("logout: %q", r.stdout)
	}
	r = f.run(nil, "", "mcp", "logout", "fk").must(t, 0)
	if r.stdout != "  No stored credentials for 'fk'\n" {
		t.Errorf("second logout: %q", r.stdout)
	}
	f.run(nil, "", "mcp", "test", "fk").must(t, 1)
	f.noTokenShown()
}

// Without a browser (--no-browser, or none can open: over SSH) the URL is
// shown and the code pasted on stdin completes the login; a wrong code
// fails in one line and keeps nothing.
func TestLoginPasteBack(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, "", "")
	r := f.run(nil, "fake-code-123\n", "mcp", "login", "fk", "--no-browser", "--scope", "mcp:read mcp:write").must(t, 0)
	if !regexp.MustCompile(`(?m)^  Open this URL in a browser,\n  then paste the code it shows here\.\n\n    http://127\.0\.0\.1:\d+/callback\?code=fake-code-123\n\n  Paste the code \(or 'skip'\): \n`).MatchString(r.stdout) {
		t.Errorf("notice and prompt:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "✓ Logged in to 'fk' as tester@example.com (scopes: mcp:read mcp:write; expires in 1h)") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if c := f.calls(); !strings.Contains(c, `login no_browser=true device=false scope="mcp:read mcp:write"`) || strings.Contains(c, "open_url") {
		t.Errorf("plugin calls:\n%s", c)
	}

	// No browser can open over SSH: the plugin is told so and asks.
	runHermes(t, f.home, "mcp", "logout", "fk").must(t, 0)
	r = f.run([]string{"SSH_CONNECTION=10.0.0.1 22 10.0.0.2 22"}, "fake-code-123\n", "mcp", "login", "fk").must(t, 0)
	if !strings.Contains(r.stdout, "✓ Logged in to 'fk'") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if c := f.calls(); !strings.Contains(c, "open_url error=no browser can be opened here") {
		t.Errorf("plugin calls:\n%s", c)
	}

	// A wrong code: one line, exit 1, the stored token kept.
	r = f.run(nil, "wrong\n", "mcp", "login", "fk", "--no-browser").must(t, 1)
	r.oneLineErr(t, "login to 'fk': wrong code", "run 'hermes mcp login fk' to try again")
	f.run(nil, "", "mcp", "test", "fk").must(t, 0)
	// The device flow shows a code to type elsewhere.
	r = f.run(nil, "fake-code-123\n", "mcp", "login", "fk", "--device").must(t, 0)
	if !strings.Contains(r.stdout, "  Code: ABCD-1234\n") {
		t.Errorf("device login:\n%s", r.stdout)
	}
	f.noTokenShown()
}

// login and its siblings refuse what they cannot do, in one line.
func TestLoginRefusals(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, "", "  loc:\n    command: "+testServerPath(t)+"\n")
	f.run(nil, "", "mcp", "login", "loc").must(t, 1).oneLineErr(t, "'loc' is a local (stdio) server: there is nothing to log in to")
	f.run(nil, "", "mcp", "login", "nope").must(t, 1).oneLineErr(t, "no server named 'nope'", "configured: fk, loc")
	f.run(nil, "", "mcp", "login").must(t, 2).oneLineErr(t, "usage: hermes mcp login <name>")
	f.run(nil, "", "mcp", "logout").must(t, 2)
	f.run(nil, "", "mcp", "reauth").must(t, 2).oneLineErr(t, "Specify a server name, or use --all")
	f.run(nil, "", "mcp", "reauth", "fk", "--all").must(t, 2)
	f.run(nil, "", "mcp", "reauth", "loc").must(t, 1).oneLineErr(t, "'loc' is a local (stdio) server")
	f.run(nil, "", "mcp", "auth-status", "x").must(t, 2)
	// A login that fails in the plugin: its message, and nothing else.
	g := newAuthFixture(t, "      fail_login: the authorization server is down for maintenance\n", "")
	g.run(nil, "", "mcp", "login", "fk").must(t, 1).oneLineErr(t, "login to 'fk' failed: the authorization server is down for maintenance; run 'hermes mcp login fk' to try again")
}

// A server without auth: gets auth: oauth written into config.yaml before
// the login (comments and the rest of the file kept), and is told so.
func TestLoginSetsAuthOAuth(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", authTestToken)
	writeConfig(t, home, "# mine\nmcp_servers:\n  web:   # the web one\n    url: "+url+"\n    timeout: 30\nmodel: m\n")
	testbin.Path(t, "hermes-auth-oauth")
	// The test server's metadata names no working authorization server:
	// the OAuth login fails, but the method is recorded.
	r := runHermes(t, home, "mcp", "login", "web", "--no-browser").must(t, 1)
	r.oneLineErr(t, "'web'")
	if !strings.Contains(r.stdout, "'web' had no auth: method; set auth: oauth in "+filepath.Join(home, "config.yaml")) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if got, want := readConfig(t, home), "# mine\nmcp_servers:\n  web:   # the web one\n    url: "+url+"\n    timeout: 30\n    auth: oauth\nmodel: m\n"; got != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", got, want)
	}
	r = runHermes(t, home, "mcp", "test", "web").must(t, 1)
	if !strings.Contains(r.stdout, "Auth: OAuth 2.1\n") || !strings.Contains(r.stdout, "run: hermes mcp login web") {
		t.Errorf("mcp test:\n%s", r.stdout)
	}
}

// auth-status lists each server with an auth method or files left, in a
// stable JSON shape, never a token; its states follow the plugin's status.
func TestAuthStatus(t *testing.T) {
	t.Parallel()
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte(authTestToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newAuthFixture(t, "", ""+
		"  old:\n    url: {URL}\n    auth: fake\n    fake:\n      lifetime: -60\n"+
		"  ex:\n    url: https://ex.example/mcp\n    auth: exec\n    exec:\n      command: /bin/cat\n      args: ["+tokFile+"]\n"+
		"  plain:\n    url: https://plain.example/mcp\n"+
		"  left:\n    url: https://left.example/mcp\n")
	browser, _ := fakeBrowser(t, false)
	f.run([]string{browser}, "", "mcp", "login", "fk").must(t, 0)
	// old logs in, but its token is already expired.
	f.run(nil, "fake-code-123\n", "mcp", "login", "old", "--no-browser").must(t, 0)
	dir := filepath.Join(f.home, "mcp-tokens")
	if err := os.WriteFile(filepath.Join(dir, "left.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := f.run(nil, "", "mcp", "auth-status", "--json").must(t, 0)
	var raw []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var names, states []string
	for _, e := range raw {
		names = append(names, e["name"].(string))
		states = append(states, e["auth_state"].(string))
	}
	if !slices.Equal(names, []string{"fk", "old", "ex", "left"}) || !slices.Equal(states, []string{"ok", "login_needed", "ok", "unused"}) {
		t.Fatalf("names %q states %q\n%s", names, states, r.stdout)
	}
	var keys []string
	for k := range raw[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"account", "auth", "auth_state", "can_refresh", "detail", "expires_at", "expires_in_seconds", "issuer", "last_refresh", "logged_in", "name", "scopes", "token_files"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys of fk: %q\nwant %q", keys, want)
	}
	fk := raw[0]
	if fk["auth"] != "fake" || fk["account"] != "tester@example.com" || fk["logged_in"] != true || fk["token_files"] != 2.0 ||
		!slices.Equal(anyStrings(fk["scopes"]), []string{"mcp:read"}) || fk["expires_in_seconds"].(float64) <= 0 {
		t.Errorf("fk: %v", fk)
	}
	if raw[1]["expires_in_seconds"].(float64) >= 0 || raw[3]["auth"] != "none" || raw[3]["token_files"] != 1.0 {
		t.Errorf("old, left: %v, %v", raw[1], raw[3])
	}

	r = f.run(nil, "", "mcp", "auth-status").must(t, 0)
	for _, w := range []string{
		"  ✓ fk (fake): ok\n      account: tester@example.com\n      scopes: mcp:read\n      expires: in 1h (",
		"  ⚠ old (fake): login needed; run: hermes mcp login old\n",
		"  ✓ ex (exec): ok\n",
		"      from: /bin/cat " + tokFile + "\n",
		"  ⚠ left (none): credential files of a server without auth:\n",
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("auth-status lacks %q:\n%s", w, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "plain") {
		t.Errorf("a server without auth or files is listed:\n%s", r.stdout)
	}
	if c := f.calls(); strings.Count(c, "login ") != 1 {
		t.Errorf("auth-status logged in:\n%s", c)
	}
	r = f.run(nil, "", "mcp", "list").must(t, 0)
	if !regexp.MustCompile(`(?m)^  Name +Transport +Tools +Auth +Status +Last listed$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^  ex +https://ex\.example/mcp +all +exec +✓ enabled +never connected$`).MatchString(r.stdout) {
		t.Errorf("mcp list:\n%s", r.stdout)
	}
	f.noTokenShown()
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, x := range l {
		out[i], _ = x.(string)
	}
	return out
}

// exec: login runs the command once and connects; mcp test shows the
// command as configured; reauth --all logs in to every server with a
// method, one at a time, with a summary.
func TestExecLoginAndReauthAll(t *testing.T) {
	t.Parallel()
	// Not in parallel: sets variables hermes reads from the process.
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte(authTestToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testbin.Path(t, "hermes-auth-exec")
	f := newAuthFixture(t, "", "")
	if err := os.WriteFile(filepath.Join(f.home, "config.yaml"), []byte(readConfig(t, f.home)+
		"  ex:\n    url: "+f.url+"\n    auth: exec\n    exec:\n      command: /bin/cat\n      args: [\"${TOKEN_FILE}\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"TOKEN_FILE=" + tokFile}
	r := f.run(env, "", "mcp", "login", "ex").must(t, 0)
	if !strings.Contains(r.stdout, "✓ Logged in to 'ex' (expires in 5m)\n  ✓ Connected: 21 tools\n") {
		t.Errorf("exec login:\n%s", r.stdout)
	}
	r = f.run(env, "", "mcp", "test", "ex").must(t, 0)
	if !strings.Contains(r.stdout, "Auth: exec (/bin/cat ${TOKEN_FILE})\n") {
		t.Errorf("mcp test:\n%s", r.stdout)
	}
	r = f.run(env, "", "mcp", "logout", "ex").must(t, 0)
	if !strings.HasPrefix(r.stdout, "  No stored credentials for 'ex'\n  forgot the token held in memory") {
		t.Errorf("exec logout:\n%s", r.stdout)
	}

	browser, _ := fakeBrowser(t, false)
	r = f.run(append(env, browser), "", "mcp", "reauth", "--all").must(t, 0)
	if !strings.Contains(r.stdout, "  fk (fake)\n") || !strings.Contains(r.stdout, "  ex (exec)\n") ||
		!strings.HasSuffix(r.stdout, "  Re-authenticated 2/2 server(s)\n") || strings.Count(r.stdout, "✓ Connected: 21 tools") != 2 {
		t.Errorf("reauth --all:\n%s", r.stdout)
	}
	r = f.run(append(env, browser), "", "mcp", "reauth", "fk").must(t, 0)
	if !strings.Contains(r.stdout, "✓ Logged in to 'fk'") {
		t.Errorf("reauth fk:\n%s", r.stdout)
	}
	f.noTokenShown()
}

// A server without auth: that answers 401 with OAuth metadata gets the
// hint to log in, from mcp test, hermes tools and mcp add.
func TestOAuthChallengeHint(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", authTestToken)
	writeConfig(t, home, "mcp_servers:\n  web:\n    url: "+url+"\n")
	r := runHermes(t, home, "mcp", "test", "web").must(t, 1)
	if !strings.Contains(r.stdout, "  This server uses OAuth; run: hermes mcp login web\n") {
		t.Errorf("mcp test:\n%s", r.stdout)
	}
	r = runHermes(t, home, "tools").must(t, 0)
	if !strings.Contains(r.stdout, "This server uses OAuth; run: hermes mcp login web") {
		t.Errorf("tools:\n%s", r.stdout)
	}
	runHermes(t, home, "mcp", "call", "web", "echo").must(t, 1).oneLineErr(t, "this server uses OAuth: run 'hermes mcp login web'")
	r = runHermes(t, home, "mcp", "add", "w2", "--url", url, "--yes").must(t, 1)
	r.oneLineErr(t, "Failed to connect to 'w2'", "(HTTP 401 Unauthorized); it uses OAuth: add it again with --auth oauth to log in now")
	// One piece of advice, not three (a header, auth: oauth in
	// config.yaml, then --auth oauth last, in about 500 characters).
	if strings.Contains(r.stderr, "--header") || strings.Contains(r.stderr, "set auth: oauth") || len(r.stderr) > 250 {
		t.Errorf("add gives more advice than the one that fits (%d bytes): %s", len(r.stderr), r.stderr)
	}
}

// add --auth <plugin> logs in before the probe, with the entry not yet
// saved; a failed login saves nothing and leaves no token behind.
func TestAddLogsIn(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	url := startHTTPServer(t, "--require-bearer", "fake-token")
	testbin.Path(t, "hermes-auth-fake")
	r := runHermesInput(t, home, nil, strings.NewReader("wrong\n"), "mcp", "add", "a", "--url", url, "--auth", "fake", "--yes").must(t, 1)
	r.oneLineErr(t, "login to 'a': wrong code; nothing was saved", "--no-probe", "hermes mcp login a")
	if readConfig(t, home) != "" {
		t.Errorf("config.yaml written:\n%s", readConfig(t, home))
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "mcp-tokens")); len(ents) != 0 {
		t.Errorf("token files left: %v", ents)
	}
	r = runHermesInput(t, home, nil, strings.NewReader("fake-code-123\n"), "mcp", "add", "a", "--url", url, "--auth", "fake", "--tools", "echo").must(t, 0)
	for _, w := range []string{"  Logging in to 'a'...\n", "  ✓ Logged in to 'a' as tester@example.com", "  ✓ Connected! Found 21 tool(s) from 'a':", "  ✓ Saved 'a' to "} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("add stdout lacks %q:\n%s", w, r.stdout)
		}
	}
	if srv := loadConfig(t, home).Server("a"); srv == nil || srv.Auth != "fake" || !slices.Equal(srv.Tools.Include, []string{"echo"}) {
		t.Errorf("config.yaml:\n%s", readConfig(t, home))
	}
	// The tools checklist was answered by --tools; a tool the server lacks
	// fails after the login, and the tokens of the unsaved entry go.
	r = runHermesInput(t, home, nil, strings.NewReader("fake-code-123\n"), "mcp", "add", "b", "--url", url, "--auth", "fake", "--tools", "nosuch").must(t, 1)
	if _, err := os.Stat(filepath.Join(home, "mcp-tokens", "b.json")); err == nil {
		t.Error("the tokens of 'b', not saved, were kept")
	}
	r = runHermes(t, home, "mcp", "remove", "a", "--yes").must(t, 0)
	if r.stdout != "  ✓ Removed 'a' from config\n  ✓ Cleaned up OAuth tokens\n" {
		t.Errorf("remove: %q", r.stdout)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "mcp-tokens")); len(ents) != 0 {
		t.Errorf("token files left: %v", ents)
	}
}

// remove logs out through the plugin, which revokes where it can.
func TestRemoveRevokes(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, "      revoke: true\n", "")
	browser, _ := fakeBrowser(t, false)
	f.run([]string{browser}, "", "mcp", "login", "fk").must(t, 0)
	r := f.run(nil, "", "mcp", "remove", "fk", "--yes").must(t, 0)
	if r.stdout != "  ✓ Removed 'fk' from config\n  ✓ Revoked tokens at the authorization server\n  ✓ Cleaned up OAuth tokens\n" {
		t.Errorf("remove: %q", r.stdout)
	}
	if !strings.Contains(f.calls(), "logout") {
		t.Errorf("plugin calls:\n%s", f.calls())
	}
	f.noTokenShown()
}
