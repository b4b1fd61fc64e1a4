package cli_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testoauth"
)

// oauthRig is a Hermes home with the server "notes" (auth: oauth), a
// hermes-testserver protected by the test authorization server
// (oidc-provider, internal/testoauth), reached through the real plugins
// hermes-auth-oauth and hermes-transport-http of the built hermes.
type oauthRig struct {
	t    *testing.T
	as   *testoauth.AS
	url  string
	home string
}

func newOAuthRig(t *testing.T, o testoauth.Options) *oauthRig {
	t.Helper()
	testbin.Path(t, "hermes-auth-oauth")
	testbin.Path(t, "hermes-transport-http")
	as := testoauth.Start(t, o)
	r := &oauthRig{t: t, as: as, url: as.StartResourceServer(t), home: newHome(t)}
	return r
}

// config writes config.yaml with "notes".
func (r *oauthRig) config() {
	writeConfig(r.t, r.home, "mcp_servers:\n  notes:\n    url: "+r.url+"\n    auth: oauth\n    oauth:\n      client_name: hermes e2e\n")
}

func (r *oauthRig) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	r.t.Cleanup(cancel)
	return ctx
}

// stats are the authorization server's refresh figures.
type refreshStats struct{ refreshes, attempts, reuses int }

func (r *oauthRig) stats(ctx context.Context) refreshStats {
	r.t.Helper()
	var s refreshStats
	var err1, err2, err3 error
	s.refreshes, err1 = r.as.RefreshCount(ctx)
	s.attempts, err2 = r.as.RefreshAttempts(ctx)
	s.reuses, err3 = r.as.RefreshReuses(ctx)
	if err1 != nil || err2 != nil || err3 != nil {
		r.t.Fatalf("authorization server stats: %v %v %v", err1, err2, err3)
	}
	return s
}

// A login's loopback callback ends the login only for a request on the
// callback path that carries the login's state. Forged redirects sent
// first (another local process, or a web page guessing the port) get a
// plain 400 page that repeats nothing of them, and the login goes on
// waiting: the real redirect that follows logs in.
func TestOAuthLoginIgnoresForgedCallbacks(t *testing.T) {
	t.Parallel()
	r := newOAuthRig(t, testoauth.Options{})
	r.config()
	ctx := r.ctx()

	cmd := exec.Command(testbin.Path(t, "hermes"), "mcp", "login", "notes", "--no-browser")
	cmd.Env = hermesTestEnv(t, r.home)
	// stdin stays open and silent: the paste prompt waits, the callback
	// ends the login.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited closes when hermes has exited; waitErr is then its end.
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	// The authorization URL is printed on a line of its own.
	var out syncBuf
	authURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			out.Write([]byte(line + "\n"))
			if u := strings.TrimSpace(line); !sent && strings.HasPrefix(u, r.as.Issuer+"/") && strings.Contains(u, "state=") {
				authURL <- u
				sent = true
			}
		}
	}()
	var au string
	select {
	case au = <-authURL:
	case <-exited:
		t.Fatalf("login ended before showing the URL (%v)\nstdout:\n%s\nstderr:\n%s", waitErr, out.String(), stderr.String())
	case <-ctx.Done():
		t.Fatalf("no authorization URL shown\nstdout:\n%s", out.String())
	}
	parsed, err := url.Parse(au)
	if err != nil {
		t.Fatal(err)
	}
	redirect, state := parsed.Query().Get("redirect_uri"), parsed.Query().Get("state")
	cb, err := url.Parse(redirect)
	if err != nil || state == "" {
		t.Fatalf("redirect_uri %q, state %q", redirect, state)
	}
	other := *cb
	other.Path = "/elsewhere"
	forged := []string{
		redirect + "?error=access_denied&error_description=%3Cscript%3Eforged%3C%2Fscript%3E&state=not-the-state",
		redirect + "?error=access_denied",
		redirect + "?code=forged-code",
		redirect + "?code=forged-code&state=" + url.QueryEscape(state[:len(state)-1]),
		other.String() + "?code=forged-code&state=" + url.QueryEscape(state),
	}
	for _, f := range forged {
		resp, err := http.Get(f)
		if err != nil {
			t.Fatalf("forged callback %s: %v", f, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("forged callback %s: HTTP %d, want 400", f, resp.StatusCode)
		}
		for _, echo := range []string{"forged", "access_denied", "script"} {
			if strings.Contains(string(body), echo) {
				t.Errorf("forged callback %s: the page repeats %q: %s", f, echo, body)
			}
		}
	}
	select {
	case <-exited:
		t.Fatalf("a forged callback ended the login (%v)\nstdout:\n%s\nstderr:\n%s", waitErr, out.String(), stderr.String())
	default:
	}
	if err := r.as.Browser(ctx, au); err != nil {
		t.Fatalf("the real redirect: %v", err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("login: %v\nstdout:\n%s\nstderr:\n%s", waitErr, out.String(), stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("the login did not end after the real redirect")
	}
	if !strings.Contains(out.String(), "✓ Logged in to 'notes'") {
		t.Errorf("login stdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
	}
}

// syncBuf is a strings.Builder safe for one writer and readers.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// defaultShortTTL is the access token lifetime of TestOAuthShortLivedTokens:
// short enough to see several lifetimes in a test, long enough that a busy
// machine gets calls done within one. HERMES_TEST_OAUTH_TTL (a Go
// duration, e.g. 30s or 60s) runs the same test with longer tokens, for
// figures: it then takes four lifetimes.
const defaultShortTTL = 6 * time.Second

func shortTTLFor(t *testing.T) time.Duration {
	v := os.Getenv("HERMES_TEST_OAUTH_TTL")
	if v == "" {
		return defaultShortTTL
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		t.Fatalf("HERMES_TEST_OAUTH_TTL=%q: want a duration of a second or more", v)
	}
	return d
}

// Short-lived access tokens (issue: 60 s tokens against a 60 s refresh
// margin refreshed on every request, spent refresh tokens again, and
// locked the user out while auth-status said ok). Against an authorization
// server issuing shortTTL tokens with rotating refresh tokens and reuse
// detection, 'hermes mcp add' logs in, then two shells call a tool side by
// side, each call a hermes process of its own, over several lifetimes:
// every call works, no refresh token is presented twice, and the refreshes
// stay about one per lifetime. auth-status then says ok, and after the
// authorization server revoked the grant it says so.
func TestOAuthShortLivedTokens(t *testing.T) {
	t.Parallel()
	shortTTL := shortTTLFor(t)
	r := newOAuthRig(t, testoauth.Options{AccessTTL: shortTTL})
	ctx := r.ctx()
	browser, _ := fakeBrowser(t, false)
	start := time.Now()
	runHermesEnv(t, r.home, []string{browser}, "mcp", "add", "notes", "--url", r.url, "--auth", "oauth", "--tools", "echo", "--yes").must(t, 0)
	afterAdd := r.stats(ctx)
	t.Logf("add: %d refreshes (%d attempts, %d reuses) in %s", afterAdd.refreshes, afterAdd.attempts, afterAdd.reuses, time.Since(start).Round(time.Millisecond))

	// Calls go on until several lifetimes have passed, however slow the
	// machine; the bound on refreshes is counted in lifetimes elapsed.
	const lifetimes = 4
	var (
		mu    sync.Mutex
		calls int
		fails []string
		wg    sync.WaitGroup
	)
	for shell := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Since(start) < lifetimes*shortTTL || i < 3; i++ {
				msg := fmt.Sprintf("s%d-%d", shell, i)
				res := runHermes(t, r.home, "mcp", "call", "notes", "echo", "--arg", "message="+msg)
				mu.Lock()
				calls++
				if res.code != 0 || !strings.Contains(res.stdout, msg) {
					fails = append(fails, fmt.Sprintf("call %s: exit %d\nstdout: %s\nstderr: %s", msg, res.code, res.stdout, res.stderr))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	s := r.stats(ctx)
	// One refresh per lifetime less the margin (10% of it), one more for
	// the lifetime under way, and one for a token issued at the start.
	bound := int(elapsed/(shortTTL-shortTTL/10)) + 2
	t.Logf("%d calls in %s with %s tokens: %d refreshes (%d attempts, %d reuses); bound %d",
		calls, elapsed.Round(time.Millisecond), shortTTL, s.refreshes, s.attempts, s.reuses, bound)
	if len(fails) > 0 {
		t.Errorf("%d of %d calls failed; first:\n%s", len(fails), calls, fails[0])
	}
	if s.reuses != 0 {
		t.Errorf("a spent refresh token was presented again %d times (the authorization server revoked the grant)", s.reuses)
	}
	if s.attempts != s.refreshes {
		t.Errorf("%d refresh requests, %d succeeded", s.attempts, s.refreshes)
	}
	if s.refreshes > bound {
		t.Errorf("%d refreshes in %s of %s tokens; want at most %d (about one per lifetime)", s.refreshes, elapsed.Round(time.Millisecond), shortTTL, bound)
	}
	if s.refreshes == 0 {
		t.Errorf("no refresh in %s of %s tokens", elapsed.Round(time.Millisecond), shortTTL)
	}

	// The access token lives 6 s: whether the last one has run out by now
	// depends on the machine's speed, and both states are a live grant.
	res := runHermes(t, r.home, "mcp", "auth-status").must(t, 0)
	if !strings.Contains(res.stdout, "✓ notes (oauth): ok") && !strings.Contains(res.stdout, "✓ notes (oauth): expired, refreshable") {
		t.Errorf("auth-status of a live grant:\n%s", res.stdout)
	}
	if err := r.as.RevokeAll(ctx); err != nil {
		t.Fatal(err)
	}
	res = runHermes(t, r.home, "mcp", "auth-status").must(t, 0)
	if strings.Contains(res.stdout, "✓") || !strings.Contains(res.stdout, "expired or revoked") ||
		!strings.Contains(res.stdout, "run: hermes mcp login notes") {
		t.Errorf("auth-status of a revoked grant:\n%s", res.stdout)
	}
	res = runHermes(t, r.home, "mcp", "auth-status", "--json").must(t, 0)
	if !strings.Contains(res.stdout, `"auth_state": "login_needed"`) {
		t.Errorf("auth-status --json of a revoked grant:\n%s", res.stdout)
	}
}

// A login that can neither open a browser nor read a pasted URL (stdin at
// its end, as in a script) fails at once naming the command to run on a
// terminal; it waited five minutes at "Paste the redirect URL".
func TestOAuthLoginWithoutInputFailsAtOnce(t *testing.T) {
	t.Parallel()
	r := newOAuthRig(t, testoauth.Options{})
	r.config()
	res := runHermesInput(t, r.home, nil, strings.NewReader(""), "mcp", "login", "notes", "--no-browser").must(t, 1)
	res.oneLineErr(t, "login to 'notes': no browser opened and nothing can be pasted here (the input ended); run 'hermes mcp login notes' on a terminal")
}
