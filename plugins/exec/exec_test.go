package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// Every token the tests use contains secret: no error or log may.
const secret = "s3cr3t"

// lockedBuffer is a log sink safe for concurrent writes and reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// cmdDir is a folder holding a token command: `script` (written by
// script), the token it prints (`token`), and `count`, a line per run.
type cmdDir string

// script writes a token command whose body follows a line that counts
// the run; $D is the folder.
func script(t *testing.T, body string) cmdDir {
	t.Helper()
	d := cmdDir(t.TempDir())
	text := fmt.Sprintf("#!/bin/sh\nD='%s'\necho run >> \"$D/count\"\n%s\n", d, body)
	if err := os.WriteFile(d.path("script"), []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// tokenCommand prints the content of the token file.
func tokenCommand(t *testing.T, token string) cmdDir {
	d := script(t, `cat "$D/token"`)
	d.setToken(t, token)
	return d
}

func (d cmdDir) path(name string) string { return filepath.Join(string(d), name) }

func (d cmdDir) setToken(t *testing.T, token string) {
	t.Helper()
	if err := os.WriteFile(d.path("token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runs counts the runs of the command so far.
func (d cmdDir) runs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(d.path("count"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// settings returns an exec: block running the script, with more keys.
func (d cmdDir) settings(kv ...any) map[string]any {
	m := map[string]any{"command": d.path("script")}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// open opens the plugin through go-plugin's in-process RPC connection, as
// the host does. It returns the host's client and the plugin's
// authenticator; at the end of the test, the plugin's log must hold no
// token.
func open(t *testing.T, settings map[string]any, ui auth.UI) (*pluginhost.AuthClient, *execAuth, error) {
	t.Helper()
	logs := &lockedBuffer{}
	log := hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug})
	var opened *execAuth
	h := sdktest.AuthInProcess(t, func(_ context.Context, cfg auth.Config) (auth.Authenticator, error) {
		a, err := newExecAuth(cfg, log)
		if err != nil {
			return nil, err
		}
		opened = a
		t.Cleanup(func() { a.Close() })
		return a, nil
	})
	t.Cleanup(func() {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a token reached the log:\n%s", logs)
		}
	})
	c, err := h.Open(context.Background(), auth.Config{Server: "corp", Method: "exec", URL: "https://mcp.corp.example/mcp", Settings: settings}, pluginhost.AuthOptions{UI: ui})
	return c, opened, err
}

func mustOpen(t *testing.T, settings map[string]any, ui auth.UI) (*pluginhost.AuthClient, *execAuth) {
	t.Helper()
	c, a, err := open(t, settings, ui)
	if err != nil {
		t.Fatal(err)
	}
	return c, a
}

// failure checks that err has code, says want, and holds no token.
func failure(t *testing.T, err error, code, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s: %q", code, want)
	}
	if got := sdk.ErrorCode(err); got != code {
		t.Errorf("code = %q, want %q (%v)", got, code, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error = %q, want it to say %q", err, want)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error holds the token: %q", err)
	}
}

func headers(t *testing.T, c *pluginhost.AuthClient) auth.Headers {
	t.Helper()
	h, err := c.Headers(context.Background(), auth.HeadersRequest{Method: "POST", URL: "https://mcp.corp.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// One run serves every request within the lifetime, and the host may reuse
// the headers until then.
func TestHeadersReuseTheTokenForItsLifetime(t *testing.T) {
	d := tokenCommand(t, secret+"-1")
	c, _ := mustOpen(t, d.settings("lifetime", 3000), nil)
	before := time.Now()
	h := headers(t, c)
	after := time.Now()
	if got := h.Headers["Authorization"]; got != "Bearer "+secret+"-1" {
		t.Fatalf("Authorization = %q", got)
	}
	if h.ValidUntil.Before(before.Add(3000*time.Second)) || h.ValidUntil.After(after.Add(3000*time.Second)) {
		t.Errorf("ValidUntil = %v, want 3000s after the run", h.ValidUntil)
	}
	d.setToken(t, secret+"-2")
	for range 10 {
		if got := headers(t, c).Headers["Authorization"]; got != "Bearer "+secret+"-1" {
			t.Fatalf("Authorization = %q, want the cached token", got)
		}
	}
	if n := d.runs(t); n != 1 {
		t.Errorf("the command ran %d times, want 1", n)
	}
}

// Concurrent requests wait for one run of the command.
func TestConcurrentHeadersShareOneRun(t *testing.T) {
	d := script(t, `read line < "$D/gate"; cat "$D/token"`)
	d.setToken(t, secret)
	if err := syscall.Mkfifo(d.path("gate"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, a := mustOpen(t, d.settings(), nil)
	const n = 8
	got := make(chan string, n)
	for range n {
		go func() {
			h, err := c.Headers(context.Background(), auth.HeadersRequest{})
			if err != nil {
				got <- err.Error()
				return
			}
			got <- h.Headers["Authorization"]
		}()
	}
	// Opening the gate waits for the command to read it; the run is then
	// held until every request has joined it.
	gate, err := os.OpenFile(d.path("gate"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.run != nil && a.run.callers == n
	})
	gate.WriteString("go\n")
	gate.Close()
	for range n {
		if h := <-got; h != "Bearer "+secret {
			t.Errorf("Headers = %q", h)
		}
	}
	if r := d.runs(t); r != 1 {
		t.Errorf("the command ran %d times, want 1", r)
	}
}

// waitFor yields until cond holds (no clock involved).
func waitFor(cond func() bool) {
	for !cond() {
		runtime.Gosched()
	}
}

// A challenge runs the command again: a new token is retried, the same
// token is refused with a clear error.
func TestChallengeRunsTheCommandAgain(t *testing.T) {
	d := tokenCommand(t, secret+"-old")
	c, _ := mustOpen(t, d.settings("args", []any{"a", "b c"}), nil)
	headers(t, c)
	d.setToken(t, secret+"-new")
	ans, err := c.Challenge(context.Background(), auth.Challenge{Status: 401, Attempt: 1}, false)
	if err != nil || !ans.Retry {
		t.Fatalf("Challenge = %+v, %v; want a retry", ans, err)
	}
	// The answer carries the new token's headers: the transport retries
	// without another call.
	if got := ans.Headers.Headers["Authorization"]; got != "Bearer "+secret+"-new" {
		t.Errorf("Authorization in the challenge's answer = %q", got)
	}
	if got := headers(t, c).Headers["Authorization"]; got != "Bearer "+secret+"-new" {
		t.Errorf("Authorization after the challenge = %q", got)
	}
	if n := d.runs(t); n != 2 {
		t.Errorf("the command ran %d times, want 2", n)
	}

	ans, err = c.Challenge(context.Background(), auth.Challenge{Status: 401, Attempt: 1}, false)
	want := fmt.Sprintf("the token from `%s a \"b c\"` was refused (HTTP 401); check that the command prints a valid token for this server", d.path("script"))
	failure(t, err, sdk.CodeAuth, want)
	if ans.Retry || err.Error() != want {
		t.Errorf("Challenge = %+v, %q; want no retry and %q", ans, err, want)
	}
	if n := d.runs(t); n != 3 {
		t.Errorf("the command ran %d times, want 3", n)
	}
}

// A command that overruns exec.timeout is killed, and says so.
func TestTimeoutKillsTheCommand(t *testing.T) {
	d := script(t, "exec sleep 60")
	c, _ := mustOpen(t, d.settings("timeout", 1), nil)
	_, err := c.Headers(context.Background(), auth.HeadersRequest{})
	failure(t, err, sdk.CodeTimeout, fmt.Sprintf("the token command `%s` did not finish within 1s and was killed; make sure it never waits for input, or raise exec.timeout", d.path("script")))
}

// holdingCommand starts a run of a command whose child (in the command's
// process group) holds the FIFO `held` open until it is killed. It returns
// once the child holds it, and the reader sees EOF when the child is dead.
func holdingCommand(t *testing.T, ctx context.Context) (*execAuth, <-chan error, io.Reader) {
	t.Helper()
	d := script(t, `sleep 600 > "$D/held" &
exec sleep 600`)
	if err := syscall.Mkfifo(d.path("held"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, a := mustOpen(t, d.settings("timeout", 3600), nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Headers(ctx, auth.HeadersRequest{})
		errc <- err
	}()
	held, err := os.Open(d.path("held"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	return a, errc, held
}

// When the only caller gives up, the command and its children are killed.
func TestCancelKillsTheCommandGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, errc, held := holdingCommand(t, ctx)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Headers after cancel = %v", err)
	}
	io.Copy(io.Discard, held) // EOF: the child is dead
}

// Closing the authenticator (the plugin exits) kills a command still
// running.
func TestCloseKillsTheCommandGroup(t *testing.T) {
	a, errc, held := holdingCommand(t, context.Background())
	a.Close()
	io.Copy(io.Discard, held)
	if err := <-errc; err == nil {
		t.Fatal("Headers succeeded after Close")
	}
}

// Output that is not one token is refused, without being shown.
func TestBadOutputIsRefused(t *testing.T) {
	for name, tc := range map[string]struct{ body, want string }{
		"empty":       {`printf ''`, "printed nothing on stdout; it must print the token"},
		"blank":       {`printf '  \n\n'`, "printed nothing on stdout"},
		"oversize":    {`yes ` + secret + ` | head -c 17000`, "printed more than 16 KiB; it must print the token only"},
		"two lines":   {`printf '` + secret + `-1\n` + secret + `-2\n'`, "printed more than one line"},
		"control":     {`printf '` + secret + `\001x'`, "printed a token with a space, control or non-ASCII character inside"},
		"bearer":      {`echo 'Bearer ` + secret + `'`, `(Hermes adds "Bearer " itself)`},
		"non-ascii":   {`printf '` + secret + `\303\251'`, "non-ASCII"},
		"tab inside":  {`printf '` + secret + `\tx\n'`, "a space, control"},
		"space after": {`printf '\n  ` + secret + ` \n'`, ""}, // trimmed: fine
	} {
		t.Run(name, func(t *testing.T) {
			d := script(t, tc.body)
			c, _ := mustOpen(t, d.settings(), nil)
			h, err := c.Headers(context.Background(), auth.HeadersRequest{})
			if tc.want == "" {
				if err != nil || h.Headers["Authorization"] != "Bearer "+secret {
					t.Fatalf("Headers = %+v, %v", h, err)
				}
				return
			}
			failure(t, err, sdk.CodeAuth, tc.want)
		})
	}
}

// A failing command's error names its exit status and shows the first line
// of its stderr, cleaned, cut, and with the token masked.
func TestFailureShowsTheFirstStderrLine(t *testing.T) {
	d := script(t, `printf '`+secret+`-123\n'; cat "$D/stderr" >&2; exit 3`)
	long := strings.Repeat("é", 300)
	stderr := "\n  \x1b[31mdenied\x1b[0m: " + secret + "-123 \x01\u202e" + long + "\nsecond line\n"
	if err := os.WriteFile(d.path("stderr"), []byte(stderr), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := mustOpen(t, d.settings(), nil)
	_, err := c.Headers(context.Background(), auth.HeadersRequest{})
	failure(t, err, sdk.CodeAuth, fmt.Sprintf("the token command `%s` exited with status 3; it said: denied: [token] ééé", d.path("script")))
	_, said, _ := strings.Cut(err.Error(), "it said: ")
	if n := utf8.RuneCountInString(said); n != 200 || !strings.HasSuffix(said, "é…") {
		t.Errorf("stderr line of %d characters: %q", n, said)
	}
	if strings.ContainsAny(said, "\x1b\x01\u202e") || strings.Contains(said, "second") {
		t.Errorf("stderr line not cleaned: %q", said)
	}

	// A command that exits 0 but prints nothing shows its stderr too.
	d = script(t, `echo 'not logged in; run: login' >&2`)
	c, _ = mustOpen(t, d.settings(), nil)
	_, err = c.Headers(context.Background(), auth.HeadersRequest{})
	failure(t, err, sdk.CodeAuth, "printed nothing on stdout; it must print the token; it said: not logged in; run: login")
}

// A command that is not there says where it was looked for.
func TestMissingCommand(t *testing.T) {
	c, _ := mustOpen(t, map[string]any{"command": "hermes-no-such-token-command"}, nil)
	_, err := c.Headers(context.Background(), auth.HeadersRequest{})
	failure(t, err, sdk.CodeNotFound, "the token command 'hermes-no-such-token-command' was not found on PATH; install it, or set exec.command to its full path")

	c, _ = mustOpen(t, map[string]any{"command": "gcloud-missing auth print-access-token"}, nil)
	_, err = c.Headers(context.Background(), auth.HeadersRequest{})
	failure(t, err, sdk.CodeNotFound, "exec.command names the program only: put its arguments in exec.args")

	c, _ = mustOpen(t, map[string]any{"command": "/nonexistent/token"}, nil)
	_, err = c.Headers(context.Background(), auth.HeadersRequest{})
	failure(t, err, sdk.CodeNotFound, "'/nonexistent/token' is not an executable file; fix exec.command")

	// With no PATH at all, a default one is searched, and handed on.
	t.Setenv("PATH", "")
	c, _ = mustOpen(t, map[string]any{"command": "hermes-no-such-token-command"}, nil)
	_, err = c.Headers(context.Background(), auth.HeadersRequest{})
	failure(t, err, sdk.CodeNotFound, "was not found on the default PATH "+defaultPATH+" (Hermes gave the plugin no PATH)")
	c, _ = mustOpen(t, map[string]any{"command": "sh", "args": []any{"-c", `echo "$PATH"`}}, nil)
	if got := headers(t, c).Headers["Authorization"]; got != "Bearer "+defaultPATH {
		t.Errorf("the command's PATH: %q", got)
	}
}

// Settings: another header carries the raw token; exec.env reaches the
// command, the plugin's plumbing does not.
func TestHeaderAndEnvironment(t *testing.T) {
	t.Setenv(pluginhost.MagicCookieKey, "cookie")
	t.Setenv("PLUGIN_MIN_PORT", "10000")
	t.Setenv(sdk.StreamFDEnv, "3")
	d := script(t, `env | grep -E '^(HERMES_PLUGIN|HERMES_PLUGIN_STREAM_FD|PLUGIN_MIN_PORT)=' >&2 && exit 9
printf '%s' "$TOKEN_PART-$N"`)
	c, _ := mustOpen(t, d.settings("header", "X-Api-Key", "env", map[string]any{"TOKEN_PART": secret, "N": 7}), nil)
	h := headers(t, c)
	if len(h.Headers) != 1 || h.Headers["X-Api-Key"] != secret+"-7" {
		t.Errorf("Headers = %v", h.Headers)
	}
}

// ui records notices.
type ui struct{ notices chan auth.Notice }

func (u *ui) Interactive() bool                           { return true }
func (u *ui) OpenURL(context.Context, string) error       { return auth.ErrNoBrowser }
func (u *ui) Show(_ context.Context, n auth.Notice) error { u.notices <- n; return nil }
func (u *ui) Ask(context.Context, string) (string, error) {
	return "", errors.New("no question expected")
}

// Login runs the command and tells the user; Logout forgets the token;
// Status never shows it.
func TestLoginLogoutStatus(t *testing.T) {
	d := tokenCommand(t, secret)
	u := &ui{notices: make(chan auth.Notice, 1)}
	c, _ := mustOpen(t, d.settings("args", []any{"print-token"}, "lifetime", "60"), u)
	ctx := context.Background()
	st, err := c.Status(ctx)
	if err != nil || st.LoggedIn || st.Method != "exec" || st.Issuer != d.path("script")+" print-token" || !st.CanRefresh {
		t.Fatalf("Status before login = %+v, %v", st, err)
	}
	before := time.Now()
	st, err = c.Login(ctx, auth.LoginOptions{})
	if err != nil || !st.LoggedIn || st.ExpiresAt.Before(before.Add(time.Minute)) || st.LastRefresh.Before(before) {
		t.Fatalf("Status after login = %+v, %v", st, err)
	}
	if n := <-u.notices; !strings.HasPrefix(n.Text, "Ran `"+d.path("script")+" print-token`: it printed a token") {
		t.Errorf("notice = %q", n.Text)
	}
	headers(t, c)
	if n := d.runs(t); n != 1 {
		t.Errorf("the command ran %d times, want 1 (Headers reuses the login's token)", n)
	}
	r, err := c.Logout(ctx)
	if err != nil || r.Revoked || r.Removed != 0 || !strings.Contains(r.Detail, "stores nothing on disk") {
		t.Fatalf("Logout = %+v, %v", r, err)
	}
	if st, _ := c.Status(ctx); st.LoggedIn || !st.ExpiresAt.IsZero() {
		t.Errorf("Status after logout = %+v", st)
	}
	headers(t, c)
	if n := d.runs(t); n != 2 {
		t.Errorf("the command ran %d times, want 2", n)
	}
	for _, s := range []string{fmt.Sprintf("%+v", st), fmt.Sprintf("%+v", r)} {
		if strings.Contains(s, secret) {
			t.Errorf("the token shows: %s", s)
		}
	}
}

// A bad or missing setting is a config error naming the key.
func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]any
		want     string
	}{
		{nil, "exec.command: missing"},
		{map[string]any{"args": []any{"x"}}, "exec.command: missing"},
		{map[string]any{"command": ""}, "exec.command: missing"},
		{map[string]any{"command": []any{"gcloud"}}, "exec.command: want a string, got a list"},
		{map[string]any{"command": "x", "args": "auth print"}, "exec.args: want a list of strings"},
		{map[string]any{"command": "x", "args": []any{"a", map[string]any{}}}, "exec.args: item 2: want a string, got a map"},
		{map[string]any{"command": "x", "lifetime": 0}, "exec.lifetime: want a positive number of seconds, got 0"},
		{map[string]any{"command": "x", "lifetime": -5}, "exec.lifetime: want a positive number of seconds, got -5"},
		{map[string]any{"command": "x", "lifetime": "soon"}, `exec.lifetime: want a positive number of seconds, got "soon"`},
		{map[string]any{"command": "x", "lifetime": 1e12}, "exec.lifetime: want a positive number of seconds"},
		{map[string]any{"command": "x", "timeout": true}, "exec.timeout: want a positive number of seconds, got true/false"},
		{map[string]any{"command": "x", "header": "Bad Header"}, "exec.header: want an HTTP header name"},
		{map[string]any{"command": "x", "header": ""}, "exec.header: want an HTTP header name"},
		{map[string]any{"command": "x", "env": []any{"A=b"}}, "exec.env: want a map"},
		{map[string]any{"command": "x", "env": map[string]any{"A=B": "c"}}, `exec.env: "A=B" is not a variable name`},
		{map[string]any{"command": "x", "env": map[string]any{"A": nil}}, "exec.env: A: want a string, got nothing"},
		{map[string]any{"command": "x", "lifetme": 60}, "exec.lifetme: unknown setting (known: command, args, env, lifetime, timeout, header)"},
	} {
		_, _, err := open(t, tc.settings, nil)
		if sdk.ErrorCode(err) != sdk.CodeConfig || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("settings %v: error %v, want %q", tc.settings, err, tc.want)
		}
	}
	// Numbers and numeric strings are accepted, as seconds.
	_, a, err := open(t, map[string]any{"command": "x", "lifetime": 2.5, "timeout": " 7 "}, nil)
	if err != nil || a.s.lifetime != 2500*time.Millisecond || a.s.timeout != 7*time.Second || a.s.header != "Authorization" {
		t.Errorf("open = %v; lifetime %v, timeout %v", err, a.s.lifetime, a.s.timeout)
	}
}

// The plugin keeps the auth contract as the sdk checks it: valid headers,
// a Status without the token, a challenge answered with the new headers.
func TestAuthContract(t *testing.T) {
	d := tokenCommand(t, secret)
	log := hclog.NewNullLogger()
	sdktest.CheckAuth(t, func(_ context.Context, cfg auth.Config) (auth.Authenticator, error) {
		a, err := newExecAuth(cfg, log)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { a.Close() })
		return a, nil
	}, auth.Config{Server: "corp", Method: "exec", URL: "https://mcp.corp.example/mcp", Settings: d.settings()})
}
