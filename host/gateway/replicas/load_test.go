package replicas_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/hermes-agent/hermes/host/gateway/replicas"
)

// The load test runs only under `make loadtest` (-loadtest): it takes
// about a minute of both cores.
var (
	loadFlag    = flag.Bool("loadtest", false, "run TestLoad: N clients × M calls through three replicas (make loadtest)")
	loadClients = flag.Int("loadtest.clients", 16, "concurrent clients")
	loadCalls   = flag.Int("loadtest.calls", 300, "calls per client")
	loadSession = flag.Int("loadtest.sessions", 600, "2025-11-25 sessions opened to measure the memory of one")
)

// capture keeps the last tools/call request a client sent: the load
// replays it as that client would send it.
type capture struct {
	mu     sync.Mutex
	header http.Header
	body   []byte
	next   http.RoundTripper
}

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		if bytes.Contains(b, []byte(`"tools/call"`)) {
			c.mu.Lock()
			c.header, c.body = r.Header.Clone(), b
			c.mu.Unlock()
		}
	}
	return c.next.RoundTrip(r)
}

// target is the captured request as a vegeta target.
func (c *capture) target(url string) vegeta.Target {
	c.mu.Lock()
	defer c.mu.Unlock()
	return vegeta.Target{Method: http.MethodPost, URL: url, Header: c.header.Clone(), Body: c.body}
}

// callTargets are n clients' tools/call of tool with args, in revision
// rev, captured from real clients (the go-sdk's for 2025-11-25, each with
// a session of its own; mcp-go's for 2026-07-28).
func callTargets(t *testing.T, url, rev string, n int, tool string, args map[string]any) []vegeta.Target {
	t.Helper()
	var out []vegeta.Target
	for range n {
		cp := &capture{next: http.DefaultTransport}
		switch rev {
		case "2025-11-25":
			c := gomcp.NewClient(&gomcp.Implementation{Name: "load", Version: "1"}, nil)
			s, err := c.Connect(t.Context(), &gomcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true,
				HTTPClient: &http.Client{Transport: bearer{token: aliceToken, next: cp}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CallTool(t.Context(), &gomcp.CallToolParams{Name: tool, Arguments: args}); err != nil {
				t.Fatal(err)
			}
		default:
			tr, err := transport.NewStreamableHTTP(url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + aliceToken}),
				transport.WithHTTPBasicClient(&http.Client{Transport: cp}))
			if err != nil {
				t.Fatal(err)
			}
			c := client.NewClient(tr, client.WithProtocolVersion(rev))
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}}); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, cp.target(url+"/mcp"))
	}
	return out
}

// countPacer sends total requests as fast as the workers take them.
type countPacer struct{ total uint64 }

func (p countPacer) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	return 0, hits >= p.total
}
func (p countPacer) Rate(time.Duration) float64 { return 0 }

// run is one attack's figures.
type run struct {
	name       string
	m          vegeta.Metrics
	bad        int // answers that are not the tool's result
	firstBad   string
	wall       time.Duration
	cpuSeconds float64
}

// attack sends calls requests from workers concurrent clients, round the
// targets; want is in every good answer.
func attack(name string, targets []vegeta.Target, workers, calls int, want string) *run {
	var next uint64
	var mu sync.Mutex
	tr := vegeta.Targeter(func(tg *vegeta.Target) error {
		mu.Lock()
		defer mu.Unlock()
		*tg = targets[next%uint64(len(targets))]
		next++
		return nil
	})
	a := vegeta.NewAttacker(vegeta.Workers(uint64(workers)), vegeta.MaxWorkers(uint64(workers)), vegeta.KeepAlive(true),
		vegeta.Connections(workers), vegeta.Timeout(time.Minute), vegeta.MaxBody(64<<10))
	r := &run{name: name}
	start := time.Now()
	for res := range a.Attack(tr, countPacer{uint64(calls)}, 0, name) {
		if res.Error == "" && (!bytes.Contains(res.Body, []byte(want)) || bytes.Contains(res.Body, []byte(`"isError":true`))) {
			res.Error = "not the tool's result"
			r.bad++
			if r.firstBad == "" {
				r.firstBad = string(res.Body)
			}
		}
		r.m.Add(res)
	}
	r.m.Close()
	r.wall = time.Since(start)
	return r
}

func (r *run) String() string {
	return fmt.Sprintf("%-44s %6d calls  %7.0f calls/s  p50 %7s  p99 %7s  errors %d",
		r.name, r.m.Requests, float64(r.m.Requests)/r.wall.Seconds(), r.m.Latencies.P50.Round(10*time.Microsecond),
		r.m.Latencies.P99.Round(10*time.Microsecond), r.m.Requests-uint64(float64(r.m.Requests)*r.m.Success+0.5))
}

// TestLoad: N clients × M calls through three replicas of the image
// behind the round-robin balancer, in each revision (p50, p99, errors: 0
// expected), the replicas' memory (per replica, per 2025-11-25 session),
// then the same load on one upstream while another is slow and a third
// crashes at every call: the first's latency must not follow them.
func TestLoad(t *testing.T) {
	if !*loadFlag {
		t.Skip("the load test runs under make loadtest (-loadtest)")
	}
	d := deploy(t, 3, tsServers(t, "fast", "slow", "crash"), replicas.Hooks{})
	n, m := *loadClients, *loadCalls
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load test: %d replicas, %d clients × %d calls, GOMAXPROCS %d, load average before: %s", len(d.reps), n, m, runtime.GOMAXPROCS(0), load)
	echo := map[string]any{"message": "load"}
	var runs []*run
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		targets := callTargets(t, d.lb.URL, rev, n, "mcp_fast_echo", echo)
		attack("warm-up "+rev, targets, n, n*10, `load`)
		r := attack("echo, "+rev, targets, n, n*m, `load`)
		fmt.Println(r)
		runs = append(runs, r)
	}
	for i, rep := range d.reps {
		own, tree, err := rep.RSS()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("replica %d after the load: gateway RSS %.1f MB, with its plugins and servers %.1f MB\n", i, float64(own)/1e6, float64(tree)/1e6)
	}

	// Memory per session: open sessions with initialize only, as clients
	// that connect and stay.
	var before int64
	for _, rep := range d.reps {
		own, _, _ := rep.RSS()
		before += own
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`
	initTarget := vegeta.Target{Method: http.MethodPost, URL: d.lb.URL + "/mcp", Body: []byte(init), Header: http.Header{
		"Authorization": {"Bearer " + aliceToken}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}}
	sr := attack("initialize, 2025-11-25", []vegeta.Target{initTarget}, 8, *loadSession, `"protocolVersion"`)
	var after int64
	for _, rep := range d.reps {
		own, _, _ := rep.RSS()
		after += own
	}
	fmt.Printf("%d sessions opened (%d errors): gateway RSS %+.1f MB in all, %.1f KB per session\n",
		*loadSession, sr.m.Requests-uint64(float64(sr.m.Requests)*sr.m.Success+0.5), float64(after-before)/1e6, float64(after-before)/float64(*loadSession)/1e3)

	// One upstream slow (every call sleeps 200 ms, 8 clients on it), one
	// crashing (its every call ends its process), during the same load on
	// the fast one.
	rev := "2026-07-28"
	fast := callTargets(t, d.lb.URL, rev, n, "mcp_fast_echo", echo)
	slow := callTargets(t, d.lb.URL, rev, 8, "mcp_slow_sleep", map[string]any{"ms": 200})
	crash := callTargets(t, d.lb.URL, rev, 1, "mcp_crash_add", map[string]any{"a": 1, "b": 2})
	crashBody := bytes.Replace(crash[0].Body, []byte(`"mcp_crash_add"`), []byte(`"mcp_crash_crash"`), 1)
	crashBody = bytes.Replace(crashBody, []byte(`{"a":1,"b":2}`), []byte(`{}`), 1)
	crash[0].Body = crashBody
	crash[0].Header.Set("Mcp-Name", "mcp_crash_crash")
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var slowRun, crashRun *run
	wg.Go(func() { slowRun = attackUntil(ctx, "slow upstream (sleep 200 ms), 8 clients", slow, 8, `slept`) })
	wg.Go(func() { crashRun = attackUntil(ctx, "crashing upstream, 2 clients", crash, 2, `"result"`) })
	beside := attack("echo, "+rev+", beside slow + crashing", fast, n, n*m, `load`)
	stop()
	wg.Wait()
	fmt.Println(beside)
	fmt.Println(slowRun)
	fmt.Println(crashRun, "(errors expected: the server exits at every call)")
	for _, r := range append(runs, beside) {
		if errs := r.m.Requests - uint64(float64(r.m.Requests)*r.m.Success+0.5); errs != 0 || r.bad != 0 {
			t.Errorf("%s: %d errors (%v), %d bad answers (first: %.300s)", r.name, errs, r.m.Errors, r.bad, r.firstBad)
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("load average after: %s", load)
}

// attackUntil sends requests from workers clients until ctx ends.
func attackUntil(ctx context.Context, name string, targets []vegeta.Target, workers int, want string) *run {
	var next uint64
	var mu sync.Mutex
	tr := vegeta.Targeter(func(tg *vegeta.Target) error {
		mu.Lock()
		defer mu.Unlock()
		*tg = targets[next%uint64(len(targets))]
		next++
		return nil
	})
	a := vegeta.NewAttacker(vegeta.Workers(uint64(workers)), vegeta.MaxWorkers(uint64(workers)), vegeta.KeepAlive(true), vegeta.Timeout(time.Minute))
	go func() { <-ctx.Done(); a.Stop() }()
	r := &run{name: name}
	start := time.Now()
	for res := range a.Attack(tr, vegeta.Rate{Freq: 0}, 0, name) {
		if res.Error == "" && !bytes.Contains(res.Body, []byte(want)) {
			res.Error = "not the tool's result"
		}
		r.m.Add(res)
	}
	r.m.Close()
	r.wall = time.Since(start)
	return r
}
