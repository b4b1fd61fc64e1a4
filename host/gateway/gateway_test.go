package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/gateway/audit"
	"github.com/hermes-agent/hermes/host/gateway/identity"
	"github.com/hermes-agent/hermes/host/gateway/policy"
	"github.com/hermes-agent/hermes/host/homedir"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// people are the test's two people, by their static bearer tokens.
var people = map[string]gateway.Person{
	"token-of-alice": {Subject: "alice", Groups: []string{"dev"}},
	"token-of-bob":   {Subject: "bob", Groups: []string{"support"}},
}

// staticTokens is the test's identity middleware: a bearer token from
// people, or 401.
func staticTokens(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		p, known := people[tok]
		if !ok || !known {
			w.Header().Set("WWW-Authenticate", `Bearer`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(identity.WithPrincipal(r.Context(), &p)))
	})
}

// compile is the policy of rules, or the test fails.
func compile(t testing.TB, rules ...policy.Rule) *policy.Policy {
	t.Helper()
	p, err := policy.Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// devOrEcho: group dev may call every tool, group support only echo.
func devOrEcho(t testing.TB) *policy.Policy {
	return compile(t, policy.Rule{Effect: policy.Allow, Groups: []string{"dev"}, Tools: []string{"*"}},
		policy.Rule{Effect: policy.Allow, Groups: []string{"support"}, Tools: []string{"mcp_*_echo"}})
}

// everyone may call every tool.
func everyone(t testing.TB) *policy.Policy {
	return compile(t, policy.Rule{Effect: policy.Allow, Tools: []string{"*"}})
}

// auditLine is one line of the audit file, as a test reads it.
type auditLine struct {
	Subject, Tool, Decision, Reason, Outcome, Method string
	Rule                                             int
}

// auditFile is a real audit log in a file, and a reader of its lines.
func auditFile(t testing.TB) (*audit.Log, func() []auditLine) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(audit.Options{File: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, func() []auditLine {
		b, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		var out []auditLine
		for line := range strings.Lines(string(b)) {
			var a auditLine
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("audit line %q: %v", line, err)
			}
			out = append(out, a)
		}
		return out
	}
}

// liveRegistry is a live registry of the Go test server ts through the
// real stdio plugin, started.
func liveRegistry(t *testing.T) *registry.Manager {
	reg, _ := liveRegistryIn(t, "[]")
	return reg
}

// liveRegistryIn is liveRegistry with the server's args (a YAML list), and
// its home.
func liveRegistryIn(t *testing.T, args string) (*registry.Manager, string) {
	t.Helper()
	testbin.Path(t, "hermes-transport-stdio")
	srv := testbin.Path(t, "hermes-testserver")
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("mcp_servers:\n  ts:\n    command: "+srv+"\n    args: "+args+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := app.New(app.Options{Env: []string{"HERMES_HOME=" + home, "HOME=" + t.TempDir(), "HERMES_PLUGIN_PATH=" + testbin.Dir(t), "PATH=" + os.Getenv("PATH")},
		Dir: t.TempDir(), Stderr: &strings.Builder{}})
	t.Cleanup(func() { f.Close(false) })
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := f.Registry(app.Live, cfg.Servers)
	if err := reg.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	return reg, home
}

// replicas starts n gateways over one registry of the Go test server
// (through the real stdio plugin), sharing only their session key, behind
// a round-robin balancer on loopback: each request lands on the next
// replica.
func replicas(t *testing.T, n int) (url string, lines func() []auditLine, hits []*atomic.Int64) {
	t.Helper()
	reg := liveRegistry(t)
	key := sha256.Sum256([]byte("the deployment's session key, from its secret"))
	log, lines := auditFile(t)
	var handlers []http.Handler
	for range n {
		ids, err := gateway.NewSessionIDs(key[:], time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		g, err := gateway.New(gateway.Options{Backend: &gateway.Registries{Shared: reg}, Authenticate: staticTokens,
			Policy: devOrEcho(t), Audit: log, SessionIDs: ids, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		handlers = append(handlers, g.Handler())
		hits = append(hits, &atomic.Int64{})
	}
	var next atomic.Int64
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(next.Add(1)-1) % n
		hits[i].Add(1)
		handlers[i].ServeHTTP(w, r)
	}))
	t.Cleanup(lb.Close)
	return lb.URL, lines, hits
}

// perPerson: a shared server ts and a per-person server tsp, both the Go
// test server through the real stdio plugin.
func perPerson(t *testing.T) (url string, regs *gateway.Registries) {
	t.Helper()
	testbin.Path(t, "hermes-transport-stdio")
	srv := testbin.Path(t, "hermes-testserver")
	home := t.TempDir()
	cfgText := "mcp_servers:\n  ts:\n    command: " + srv + "\n  tsp:\n    command: " + srv + "\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	f := app.New(app.Options{Env: []string{"HERMES_HOME=" + home, "HOME=" + t.TempDir(), "HERMES_PLUGIN_PATH=" + testbin.Dir(t), "PATH=" + os.Getenv("PATH")},
		Dir: t.TempDir(), Stderr: &strings.Builder{}})
	t.Cleanup(func() { f.Close(false) })
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	shared, perUser := cfg.Servers[:1], cfg.Servers[1:]
	ctx := context.Background()
	sharedReg, _ := f.Registry(app.Live, shared)
	template, _ := f.Registry(app.Cached, perUser)
	for _, m := range []interface{ Start(context.Context) error }{sharedReg, template} {
		if err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	regs = &gateway.Registries{Shared: sharedReg, Template: template, PerUser: []string{"tsp"},
		ForPerson: func(ctx context.Context, subject string) (*registry.Manager, error) {
			// Each person's process is told whom it serves, so the test
			// can tell the processes apart (their pids are alike: each is
			// in a pid namespace of its own).
			own := *perUser[0]
			own.Env = map[string]string{"SERVES": subject}
			m, _ := f.Registry(app.Live, []*config.Server{&own})
			return m, m.Start(ctx)
		}}
	t.Cleanup(regs.Close)
	ids := sessionIDs(t)
	g, err := gateway.New(gateway.Options{Backend: regs, Authenticate: staticTokens, Policy: everyone(t), SessionIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(g.Handler())
	t.Cleanup(s.Close)
	return s.URL, regs
}

// A per-person server runs one process per person: two people's calls
// reach two processes, one person's calls always the same one, and a
// shared server's calls one process for everyone; an idle person's
// processes are stopped.
func TestPerPersonServerRunsAProcessPerPerson(t *testing.T) {
	t.Parallel()
	url, regs := perPerson(t)
	alice, bob := connect(t, url, "token-of-alice", "2026-07-28"), connect(t, url, "token-of-bob", "2025-11-25")
	serves := func(c *client.Client, tool string) string {
		res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: map[string]any{"name": "SERVES"}}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		return text(res)
	}
	if n := names(t, alice); !slices.Contains(n, "mcp_tsp_env") || !slices.Contains(n, "mcp_ts_env") {
		t.Fatalf("alice sees %v", n)
	}
	if a, b := serves(alice, "mcp_tsp_env"), serves(bob, "mcp_tsp_env"); a != "alice" || b != "bob" {
		t.Fatalf("the per-person server's processes serve %q (alice's call) and %q (bob's)", a, b)
	}
	if serves(alice, "mcp_ts_env") != "" {
		t.Fatal("the shared server's process was one of a person's")
	}
	if regs.People() != 2 {
		t.Fatalf("%d people's registries open, want 2", regs.People())
	}
	regs.PersonIdle = time.Nanosecond
	regs.Sweep()
	if regs.People() != 0 {
		t.Fatalf("%d people's registries open after the idle sweep", regs.People())
	}
	if a := serves(alice, "mcp_tsp_env"); a != "alice" || regs.People() != 1 {
		t.Fatalf("after the sweep alice's call reached %q with %d registries open", a, regs.People())
	}
}

func connect(t *testing.T, url, token, revision string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(revision))
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize (%s): %v", revision, err)
	}
	return c
}

func names(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return sortedKeys(res.Tools, func(tl mcp.Tool) string { return tl.Name })
}

// Two people of different roles, in each revision, across three replicas
// that share nothing but the session key: each sees only their tools, a
// call outside their role is refused and audited, and every request may
// land on another replica.
func TestPeopleSeeAndCallOnlyTheirToolsAcrossReplicas(t *testing.T) {
	t.Parallel()
	url, lines, hits := replicas(t, 3)
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			alice := connect(t, url, "token-of-alice", rev)
			bob := connect(t, url, "token-of-bob", rev)
			an, bn := names(t, alice), names(t, bob)
			if len(an) < 3 || !slices.Contains(an, "mcp_ts_echo") || !slices.Contains(an, "mcp_ts_add") {
				t.Fatalf("alice (dev) sees %v", an)
			}
			if !slices.Equal(bn, []string{"mcp_ts_echo"}) {
				t.Fatalf("bob (support) sees %v, want only mcp_ts_echo", bn)
			}
			res, err := bob.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_echo", Arguments: map[string]any{"message": "hi " + rev}}})
			if err != nil || res.IsError || !strings.Contains(text(res), "hi "+rev) {
				t.Fatalf("bob's echo: %v %+v", err, res)
			}
			if _, err := bob.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_add", Arguments: map[string]any{"a": 1, "b": 2}}}); err == nil ||
				!strings.Contains(err.Error(), "unknown tool") {
				t.Fatalf("bob called a tool outside his role: %v", err)
			}
			res, err = alice.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_add", Arguments: map[string]any{"a": 1, "b": 2}}})
			if err != nil || res.IsError || !strings.Contains(text(res), "3") {
				t.Fatalf("alice's add: %v %+v", err, res)
			}
		})
	}
	for i, h := range hits {
		if h.Load() == 0 {
			t.Errorf("replica %d served no request", i)
		}
	}
	var denied int
	for _, r := range lines() {
		if r.Outcome == "denied" {
			denied++
			if r.Subject != "bob" || r.Tool != "mcp_ts_add" || r.Decision != "deny" || r.Rule != -1 || !strings.Contains(r.Reason, "default deny") {
				t.Errorf("denial recorded as %+v", r)
			}
		}
	}
	if denied != 2 {
		t.Fatalf("%d denials audited, want 2 (one per revision)", denied)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// A 2025-11-25 session id is the person's: another person presenting it
// gets 404 (start a new session), and a request without a credential 401.
func TestSessionIDIsBoundToItsPerson(t *testing.T) {
	t.Parallel()
	url, _, _ := replicas(t, 2)
	post := func(token, session, body string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	init := post("token-of-alice", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := init.Header.Get("Mcp-Session-Id")
	if init.StatusCode != http.StatusOK || !strings.HasPrefix(sid, "hg1.") {
		t.Fatalf("initialize: %d, session id %q", init.StatusCode, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if res := post("token-of-alice", sid, list); res.StatusCode != http.StatusOK {
		t.Fatalf("alice with her own session id on the other replica: %d", res.StatusCode)
	}
	if res := post("token-of-bob", sid, list); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob with alice's session id: %d, want 404", res.StatusCode)
	}
	if res := post("", sid, list); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no credential: %d, want 401", res.StatusCode)
	}
	if res := post("token-of-alice", "hg1."+hex.EncodeToString(make([]byte, 20)), list); res.StatusCode != http.StatusNotFound {
		t.Fatalf("a forged session id: %d, want 404", res.StatusCode)
	}
}

// A tool a server adds at runtime (tools/list_changed) is offered by the
// gateway's next listing.
func TestToolAddedUpstreamIsListed(t *testing.T) {
	t.Parallel()
	url, _, _ := replicas(t, 1)
	alice := connect(t, url, "token-of-alice", "2025-11-25")
	res, err := alice.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_add_tool", Arguments: map[string]any{"name": "fresh"}}})
	if err != nil || res.IsError {
		t.Fatalf("add_tool: %v %+v", err, res)
	}
	testwait.For(t, time.Minute, "mcp_ts_fresh in the gateway's listing", func() bool {
		return slices.Contains(names(t, alice), "mcp_ts_fresh")
	})
	res, err = alice.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_fresh"}})
	if err != nil {
		t.Fatalf("calling the new tool: %v", err)
	}
}

// A client that gives up on a call cancels it upstream: the server's
// sleep ends early and counts the cancellation.
func TestCancelledCallIsCancelledUpstream(t *testing.T) {
	t.Parallel()
	reg, home := liveRegistryIn(t, "[--trace]")
	ids := sessionIDs(t)
	g, err := gateway.New(gateway.Options{Backend: &gateway.Registries{Shared: reg}, Authenticate: staticTokens, Policy: everyone(t), SessionIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	alice := connect(t, srv.URL, "token-of-alice", "2026-07-28")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := alice.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_sleep", Arguments: map[string]any{"ms": 600000}}})
		done <- err
	}()
	log := homedir.Dir(home).ServerStderrLog()
	testwait.For(t, time.Minute, "the sleep to start upstream", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), testserver.TraceSleepStarted)
	})
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call returned a result")
	}
	testwait.For(t, time.Minute, "the upstream to count the cancellation", func() bool {
		res, err := alice.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_cancelled_count"}})
		return err == nil && text(res) == "1"
	})
}

// A server's progress on a call reaches the client that asked for it,
// under the client's own token, through the gateway.
func TestProgressCrossesTheGateway(t *testing.T) {
	t.Parallel()
	url, _, _ := replicas(t, 1)
	var mu sync.Mutex
	var seen []mcp.ProgressNotificationParams
	tr, err := transport.NewStreamableHTTP(url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer token-of-alice"}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	t.Cleanup(func() { _ = c.Close() })
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationProgress) {
			return
		}
		var p mcp.ProgressNotificationParams
		b, _ := json.Marshal(n.Params)
		_ = json.Unmarshal(b, &p)
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_slow_stream", Arguments: map[string]any{"steps": 3, "interval_ms": 1},
		Meta: &mcp.Meta{ProgressToken: "client-token-7"}}}
	res, err := c.CallTool(t.Context(), req)
	if err != nil || text(res) != "done" {
		t.Fatalf("slow_stream: %v %+v", err, res)
	}
	// The last notification may reach the client just after the result
	// (it travels on the same stream, written by another goroutine of
	// mcp-go's server): wait for it, bounded generously.
	testwait.For(t, time.Minute, "three progress notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= 3
	})
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || seen[0].ProgressToken != "client-token-7" || seen[2].Progress != 3 || seen[2].Total != 3 {
		t.Fatalf("progress seen by the client: %+v", seen)
	}
}

// sessionIDs are the session ids of a test gateway, under a fixed key.
func sessionIDs(t testing.TB) *gateway.SessionIDs {
	t.Helper()
	key := sha256.Sum256([]byte("k"))
	ids, err := gateway.NewSessionIDs(key[:], time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
