package replicas_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-agent/hermes/host/gateway/replicas"
	"github.com/hermes-agent/hermes/host/homedir"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// caller is an MCP client of one revision that calls a tool and returns
// its text.
type caller interface {
	call(ctx context.Context, tool string, args map[string]any) (string, error)
}

// goSDK is the official go-sdk client (it negotiates 2025-11-25: a
// session id, minted by one replica, accepted by every one).
type goSDK struct{ s *gomcp.ClientSession }

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func newGoSDK(t testing.TB, url, token string) *goSDK {
	t.Helper()
	c := gomcp.NewClient(&gomcp.Implementation{Name: "replicas-test", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &gomcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &goSDK{s}
}

func (g *goSDK) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	res, err := g.s.CallTool(ctx, &gomcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", b.String())
	}
	return b.String(), nil
}

// mcpGo is mcp-go's client speaking 2026-07-28: no session, every request
// carries what it needs.
type mcpGo struct{ c *client.Client }

func newMCPGo(t testing.TB, url, token, revision string) *mcpGo {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(revision))
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize (%s): %v", revision, err)
	}
	return &mcpGo{c}
}

func (m *mcpGo) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	res, err := m.c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", b.String())
	}
	return b.String(), nil
}

// retried calls tool as a client that retries a failed call (on another
// replica: the balancer sends each request to the next one) does, up to
// three attempts; it returns the text and how many attempts it took.
func retried(ctx context.Context, c caller, tool string, args map[string]any) (string, int, error) {
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		var text string
		if text, err = c.call(ctx, tool, args); err == nil {
			return text, attempt, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return "", 3, err
}

// sleepsStarted counts the upstream's "sleep started" lines in a replica's
// home (its servers' stderr log).
func sleepsStarted(home string) int {
	b, _ := os.ReadFile(homedir.Dir(home).ServerStderrLog())
	return strings.Count(string(b), testserver.TraceSleepStarted)
}

// drain empties c.
func drain(c chan int) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// Three replicas started from the image as a Deployment runs them, behind a
// round-robin Service, serve clients of both revisions with each request on
// another replica; SIGKILL of one in the middle fails only the calls in
// flight on it, which the client's retry completes on another; it is
// restarted; SIGTERM of another drains it: its call in flight finishes, it
// exits 0, and no call is cut.
func TestReplicasShareNothing(t *testing.T) {
	t.Parallel()
	// What the balancer forwarded: while the killed replica is down (dead
	// is its index), its failures are expected; any other failure fails
	// the test.
	var dead atomic.Int64
	dead.Store(-1)
	var mu sync.Mutex
	var unexpected []replicas.Forwarded
	var expectedFailures int
	sleeps := make(chan int, 16)
	hooks := replicas.Hooks{
		Sent: func(i int, tool string) {
			if tool == "mcp_ts_sleep" {
				sleeps <- i
			}
		},
		Done: func(f replicas.Forwarded) {
			if f.Err == nil && f.Status < 500 {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if int64(f.Backend) == dead.Load() {
				expectedFailures++
				return
			}
			unexpected = append(unexpected, f)
		},
	}
	d := deploy(t, 3, tsServers(t, "ts"), hooks)
	ctx := testwait.Context(t)
	older := newGoSDK(t, d.lb.URL, aliceToken)
	newer := newMCPGo(t, d.lb.URL, bobToken, "2026-07-28")

	// Each client's requests go round the replicas.
	for i := range 3 {
		for _, c := range []caller{older, newer} {
			msg := fmt.Sprintf("round %d", i)
			if text, err := c.call(ctx, "mcp_ts_echo", map[string]any{"message": msg}); err != nil || text != msg {
				t.Fatalf("echo %q: %q, %v", msg, text, err)
			}
		}
	}
	for i := range 3 {
		if d.lb.Hits(i) == 0 {
			t.Fatalf("replica %d served none of the first requests", i)
		}
	}

	// Both clients call all along; every call must succeed, retried or not.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls, retries atomic.Int64
	failed := make(chan error, 2)
	for n, c := range []caller{older, newer} {
		wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				msg := fmt.Sprintf("client %d call %d", n, k)
				text, attempts, err := retried(ctx, c, "mcp_ts_echo", map[string]any{"message": msg})
				calls.Add(1)
				retries.Add(int64(attempts - 1))
				if err != nil || text != msg {
					failed <- fmt.Errorf("client %d's call %d failed after %d attempts: %q %v", n, k, attempts, text, err)
					return
				}
			}
		})
	}

	// SIGKILL the replica a long call is in flight on, once its upstream
	// is working on it.
	type result struct {
		text     string
		attempts int
		err      error
	}
	longCall := func(c caller, ms int) <-chan result {
		out := make(chan result, 1)
		go func() {
			text, attempts, err := retried(ctx, c, "mcp_ts_sleep", map[string]any{"ms": ms})
			out <- result{text, attempts, err}
		}()
		return out
	}
	killed := longCall(older, 4000)
	x := <-sleeps
	testwait.For(t, 0, fmt.Sprintf("the sleep to start on replica %d's upstream", x), func() bool { return sleepsStarted(d.homes[x]) == 1 })
	dead.Store(int64(x))
	if err := d.reps[x].Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-d.reps[x].Exited()
	r := <-killed
	// Failed, and a retry completed it. A retry may also meet a connection
	// the balancer kept open to the killed replica, which the kernel has
	// reset but the balancer has not yet seen closed (on a busy machine),
	// and fail once more: a Service's proxy does the same.
	if r.err != nil || r.text != "slept 4000ms" || r.attempts < 2 || r.attempts > 3 {
		t.Fatalf("the call in flight on the killed replica: %q after %d attempts, %v (want it failed and retried)", r.text, r.attempts, r.err)
	}

	// The replica restarts (same volumes) and takes requests again. (Drop
	// what the balancer told of the retries.)
	drain(sleeps)
	d.start(t, x)
	dead.Store(-1)
	before := d.lb.Hits(x)
	testwait.For(t, 0, fmt.Sprintf("the restarted replica %d to serve", x), func() bool { return d.lb.Hits(x) > before+2 })

	// SIGTERM another replica while a call is in flight on it: its
	// endpoint is removed (no new request reaches it), its call finishes.
	var y int
	var drained <-chan result
	var started [3]int
	for {
		drain(sleeps)
		// Counted before the call: its sleep may start on the upstream
		// before the balancer's word of it is read.
		for i := range started {
			started[i] = sleepsStarted(d.homes[i])
		}
		call := longCall(older, 2000)
		y = <-sleeps
		if y != x {
			drained = call
			break
		}
		if r := <-call; r.err != nil {
			t.Fatalf("a sleep on replica %d: %v", y, r.err)
		}
	}
	testwait.For(t, 0, fmt.Sprintf("the sleep to start on replica %d's upstream", y), func() bool { return sleepsStarted(d.homes[y]) > started[y] })
	d.lb.Remove(y)
	// What a pod's preStop sleep is for: the requests the Service sent
	// before the endpoint went are written before the listener closes
	// (here: all of them but the long call are answered).
	testwait.For(t, 0, fmt.Sprintf("replica %d's requests other than the long call to be answered", y), func() bool { return d.lb.InFlight(y) <= 1 })
	if err := d.reps[y].Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := <-drained; r.err != nil || r.text != "slept 2000ms" || r.attempts != 1 {
		t.Fatalf("the call in flight on the stopping replica: %q after %d attempts, %v (want it answered once)", r.text, r.attempts, r.err)
	}
	if err := d.reps[y].ExitErr(); err != nil {
		t.Fatalf("replica %d after SIGTERM: %v\n%s", y, err, d.reps[y].Stderr.String())
	}
	if !strings.Contains(d.reps[y].Stderr.String(), "stopping; calls in flight have") {
		t.Errorf("replica %d did not say it drains:\n%s", y, d.reps[y].Stderr.String())
	}

	close(stop)
	wg.Wait()
	select {
	case err := <-failed:
		t.Fatal(err)
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	if len(unexpected) > 0 {
		t.Fatalf("requests failed on replicas that were up: %+v", unexpected)
	}
	if expectedFailures == 0 {
		t.Fatal("no request failed on the killed replica, yet a call was in flight on it")
	}
	t.Logf("%d calls by the two clients meanwhile, %d retried; %d requests failed on the killed replica %d, replica %d drained",
		calls.Load(), retries.Load(), expectedFailures, x, y)
	// Each replica's audit lines (stdout, as a container logs) name the
	// person of each call: they share no log, but each records its own.
	for i, rep := range d.reps {
		if i != x && !strings.Contains(rep.Stdout.String(), `"subject":"alice"`) {
			t.Errorf("replica %d audited no call of alice's:\n%.500s", i, rep.Stdout.String())
		}
	}
}
