package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/mcp"
)

// deps returns session dependencies with plugins from the freshly built
// binaries and a throw-away HERMES_HOME.
func deps(t *testing.T) (session.Deps, string) {
	t.Helper()
	dir := testbin.Dir(t)
	home := t.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home, Env: pluginPathEnv(dir)})
	t.Cleanup(sup.KillAll)
	return session.Deps{Home: home, Supervisor: sup}, dir
}

// pluginPathEnv is the host environment with $HERMES_PLUGIN_PATH set to
// dir, for supervisor.Options.Env: the plugin search path without setting
// the process environment, which a parallel test may not do.
func pluginPathEnv(dir string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == "HERMES_PLUGIN_PATH" {
			return dir, true
		}
		return os.LookupEnv(k)
	}
}

// waitForTrace waits up to d for a test server started with --trace under
// home to write line (one of testserver's Trace* lines) to its stderr log,
// and reports whether it did.
func waitForTrace(home, line string, d time.Duration) bool {
	return testwait.Until(d, func() bool {
		b, _ := os.ReadFile(filepath.Join(home, "logs", "mcp-stderr.log"))
		return strings.Contains(string(b), line+"\n")
	})
}

func testServer(dir string, args ...string) *config.Server {
	// ConnectTimeout is generous: on a loaded machine, with the tests
	// running side by side, a plugin and its server took over 10 s to
	// start; a test that waits for the timeout sets its own.
	return &config.Server{
		Name: "ts", Transport: "stdio", Command: filepath.Join(dir, "hermes-testserver"), Args: args,
		Enabled: true, ConnectTimeout: 30 * time.Second, Timeout: 30 * time.Second,
	}
}

func connect(t *testing.T, d session.Deps, srv *config.Server) *session.Session {
	t.Helper()
	s, err := session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
	if err != nil {
		t.Fatalf("connect %s: %v", srv.Name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func call(ctx context.Context, s *session.Session, tool string, args map[string]any) (string, error) {
	res, err := s.Client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		return "", err
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

func TestConnectAndCall(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	s := connect(t, d, testServer(dir))
	if s.Init.ServerInfo.Name != "hermes-testserver" {
		t.Fatalf("server name %q", s.Init.ServerInfo.Name)
	}
	// The test server speaks every revision: the newest wins.
	if s.Init.ProtocolVersion != session.Latest || s.Protocol.Revision != session.Latest || s.Protocol.Source != session.SourceNegotiated {
		t.Fatalf("protocol %q, %+v; want %q negotiated", s.Init.ProtocolVersion, s.Protocol, session.Latest)
	}
	got, err := call(context.Background(), s, "echo", map[string]any{"message": "hi there"})
	if err != nil || got != "hi there" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	// A large result crosses the plugin boundary intact.
	got, err = call(context.Background(), s, "huge", map[string]any{"bytes": 3 << 20})
	if err != nil || len(got) != 3<<20 {
		t.Fatalf("huge: %d bytes, %v", len(got), err)
	}
}

func TestConcurrentCallsOnOneSession(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	s := connect(t, d, testServer(dir))
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := "m" + strconv.Itoa(i)
			got, err := call(context.Background(), s, "echo", map[string]any{"message": msg})
			if err != nil || got != msg {
				errs <- errors.New("echo " + msg + " = " + got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A plugin killed mid-call fails that call at once with an error naming the
// server; another server's session is unaffected.
func TestPluginKilledMidCall(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	victim := connect(t, d, testServer(dir, "--trace"))
	otherSrv := testServer(dir)
	otherSrv.Name = "other"
	other := connect(t, d, otherSrv)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := call(ctx, victim, "sleep", map[string]any{"ms": 50000})
		errc <- err
	}()
	if !waitForTrace(d.Home, testserver.TraceSleepStarted, 10*time.Second) {
		t.Fatal("the sleep call did not reach the server within 10s")
	}
	if err := syscall.Kill(victim.Plugin.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if err == nil || ctx.Err() != nil {
		t.Fatalf("call after plugin kill: err=%v ctx=%v; want an immediate transport error", err, ctx.Err())
	}
	if !errors.Is(err, errClosed) && !strings.Contains(err.Error(), `"ts"`) {
		t.Fatalf("error does not name the server: %v", err)
	}
	select {
	case <-victim.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("session not marked done after its plugin died")
	}
	if got, err := call(context.Background(), other, "echo", map[string]any{"message": "still here"}); err != nil || got != "still here" {
		t.Fatalf("other server affected: %q, %v", got, err)
	}
}

var errClosed = sdk.NewError(sdk.CodeClosed, "")

// A server that exits mid-call fails the call with its exit status.
func TestServerExitsMidCall(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	s := connect(t, d, testServer(dir))
	_, err := call(context.Background(), s, "crash", nil)
	if err == nil {
		t.Fatal("crash call succeeded")
	}
	select {
	case <-s.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("session not done after the server exited")
	}
	if !strings.Contains(s.Err().Error(), "status 3") {
		t.Fatalf("reason does not carry the exit status: %v", s.Err())
	}
}

func TestInitializeTimeout(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	srv := testServer(dir, "--hang-initialize")
	// The server never answers: any bound ends in the timeout; one this
	// long leaves the plugin's start room on a loaded machine, so the
	// bound hit is initialize's.
	srv.ConnectTimeout = 10 * time.Second
	_, err := session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
	var ce *session.ConnectError
	if !errors.As(err, &ce) || ce.Code() != "timeout" || !strings.Contains(err.Error(), "connect_timeout") {
		t.Fatalf("want a connect_timeout error, got %v", err)
	}
}

func TestGarbageOnStdout(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	srv := testServer(dir, "--garbage")
	// The connect fails on what the server wrote, well before its
	// connect_timeout (the code says which: garbage, not timeout).
	srv.ConnectTimeout = 2 * time.Minute
	_, err := session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
	var ce *session.ConnectError
	if !errors.As(err, &ce) || ce.Code() != sdk.CodeGarbage || !strings.Contains(err.Error(), "non-JSON") || !strings.Contains(err.Error(), "no answer to initialize followed") {
		t.Fatalf("want a garbage error about non-JSON output, got %v", err)
	}
}

// TestBannerThenServe: a server that prints a banner line to stdout and
// then answers connects (with a warning in the log).
func TestBannerThenServe(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	srv := testServer(dir, "--banner")
	srv.ConnectTimeout = time.Minute
	s, err := session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
	if err != nil {
		t.Fatalf("a server with a banner line did not connect: %v", err)
	}
	s.Close()
}

func TestMissingExecutable(t *testing.T) {
	d, _ := deps(t)
	srv := &config.Server{Name: "nope", Transport: "stdio", Command: "npx-does-not-exist-here", Enabled: true, ConnectTimeout: 5 * time.Second}
	_, err := session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
	var ce *session.ConnectError
	if !errors.As(err, &ce) || ce.Code() != sdk.CodeNotFound || !strings.Contains(err.Error(), "missing executable 'npx-does-not-exist-here'") {
		t.Fatalf("got %v", err)
	}
	srv.Command = "npx"
	t.Setenv("PATH", t.TempDir())
	_, err = session.Connect(context.Background(), session.PlanFor(srv, d.Home, d.Environ), d)
	if err == nil || !strings.Contains(err.Error(), "Node.js") {
		t.Fatalf("want a Node.js hint, got %v", err)
	}
}

func TestServerFailsAtStart(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	_, err := session.Connect(context.Background(), session.PlanFor(testServer(dir, "--fail-start", "database is locked"), d.Home, d.Environ), d)
	if err == nil || !strings.Contains(err.Error(), "database is locked") || !strings.Contains(err.Error(), "status 1") {
		t.Fatalf("want the server's last stderr line and status, got %v", err)
	}
}

// A call abandoned by the host is cancelled in the server too.
func TestCancellationReachesServer(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	s := connect(t, d, testServer(dir, "--trace"))
	// Cancelled once the server is sleeping (its trace says so), not
	// after a fixed time: on a busy machine the request may not have
	// reached it yet, and a cancellation of a request the server has not
	// seen is not counted.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := call(ctx, s, "sleep", map[string]any{"ms": 20000})
		errc <- err
	}()
	if !waitForTrace(d.Home, testserver.TraceSleepStarted, 30*time.Second) {
		cancel()
		t.Fatalf("the server never started the sleep: %v", <-errc)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context canceled, got %v", err)
	}
	var got string
	var err error
	if !testwait.Until(10*time.Second, func() bool {
		got, err = call(context.Background(), s, "cancelled_count", nil)
		return err != nil || got == "1"
	}) || err != nil {
		t.Fatalf("server saw %s cancellations (%v), want 1", got, err)
	}
}

// The server's environment is the safe baseline plus its own env: a host
// secret does not reach it.
func TestSafeEnvironment(t *testing.T) {
	d, dir := deps(t)
	t.Setenv("HERMES_TEST_HOST_SECRET", "s3cret")
	t.Setenv("LANG", "C.UTF-8")
	srv := testServer(dir)
	srv.Env = map[string]string{"MY_SERVER_VAR": "given"}
	s := connect(t, d, srv)
	for name, want := range map[string]string{"HERMES_TEST_HOST_SECRET": "", "MY_SERVER_VAR": "given", "LANG": "C.UTF-8"} {
		got, err := call(context.Background(), s, "env", map[string]any{"name": name})
		if err != nil || got != want {
			t.Errorf("env %s = %q (%v), want %q", name, got, err, want)
		}
	}
}

// The same from Deps.Environ, the host environment a caller with one of
// its own passes (the CLI passes cli.Options.Env): its safe part reaches
// the server, the rest does not, and the process's does not matter.
func TestSafeEnvironmentFromDeps(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	d.Environ = append(os.Environ(), "HERMES_TEST_DEPS_SECRET=s3cret", "LANG=x-deps.UTF-8")
	srv := testServer(dir)
	srv.Env = map[string]string{"MY_SERVER_VAR": "given"}
	s := connect(t, d, srv)
	for name, want := range map[string]string{"HERMES_TEST_DEPS_SECRET": "", "MY_SERVER_VAR": "given", "LANG": "x-deps.UTF-8"} {
		got, err := call(context.Background(), s, "env", map[string]any{"name": name})
		if err != nil || got != want {
			t.Errorf("env %s = %q (%v), want %q", name, got, err, want)
		}
	}
}

func TestStderrLogged(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	s := connect(t, d, testServer(dir))
	if _, err := call(context.Background(), s, "stderr", map[string]any{"lines": 3}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(filepath.Join(d.Home, "logs", "mcp-stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "starting MCP server 'ts'") {
		t.Fatalf("no start header in stderr log:\n%s", b)
	}
	if strings.Count(string(b), "\n") < 4 {
		t.Fatalf("stderr lines missing:\n%s", b)
	}
}
