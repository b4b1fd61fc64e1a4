package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/gateway/policy"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testnpm"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// catalogRules: dev may use everything of ts; support may call echo, get
// the greet prompt and read the static text resource, nothing else.
func catalogRules(t testing.TB) *policy.Policy {
	return compile(t,
		policy.Rule{Effect: policy.Allow, Groups: []string{"dev"}, Servers: []string{"*"}},
		policy.Rule{Effect: policy.Allow, Groups: []string{"support"}, Tools: []string{"mcp_*_echo"}},
		policy.Rule{Effect: policy.Allow, Groups: []string{"support"}, Prompts: []string{"ts_greet"}, Resources: []string{"test://static/hello.txt"}})
}

// anything of any server for anyone (a rule naming no tools, prompts or
// resources applies to all three).
func anything(t testing.TB) *policy.Policy {
	return compile(t, policy.Rule{Effect: policy.Allow, Servers: []string{"*"}})
}

// servers is the config of the Go test server and others (text after
// "mcp_servers:"), its registry factory and the servers.
func servers(t *testing.T, entries string) (*app.Factory, []*config.Server) {
	t.Helper()
	testbin.Path(t, "hermes-transport-stdio")
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("mcp_servers:\n"+entries), 0o600); err != nil {
		t.Fatal(err)
	}
	f := app.New(app.Options{Env: []string{"HERMES_HOME=" + home, "HOME=" + t.TempDir(), "HERMES_PLUGIN_PATH=" + testbin.Dir(t), "PATH=" + os.Getenv("PATH")},
		Dir: t.TempDir(), Stderr: &strings.Builder{}})
	t.Cleanup(func() { f.Close(false) })
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	return f, cfg.Servers
}

// tsEntry is an entry of the Go test server with resources, prompts and
// completions.
func tsEntry(t *testing.T, name string) string {
	return "  " + name + ":\n    command: " + testbin.Path(t, "hermes-testserver") + "\n    args: [--resources, --prompts]\n"
}

// serve starts a gateway over a live registry of srvs with pol, and the
// audit it writes.
func serve(t *testing.T, f *app.Factory, srvs []*config.Server, pol *policy.Policy) (url string, reg *registry.Manager, lines func() []auditLine) {
	t.Helper()
	reg, _ = f.Registry(app.Live, srvs)
	if err := reg.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	log, lines := auditFile(t)
	ids := sessionIDs(t)
	g, err := gateway.New(gateway.Options{Backend: &gateway.Registries{Shared: reg}, Authenticate: staticTokens, Policy: pol, Audit: log, SessionIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(g.Handler())
	t.Cleanup(s.Close)
	return s.URL, reg, lines
}

func promptNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListPrompts(t.Context(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return sortedKeys(res.Prompts, func(p mcp.Prompt) string { return p.Name })
}

func resourceURIs(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListResources(t.Context(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return sortedKeys(res.Resources, func(r mcp.Resource) string { return r.URI })
}

// sortedKeys is key of every item, sorted.
func sortedKeys[T any](items []T, key func(T) string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, key(it))
	}
	slices.Sort(out)
	return out
}

func templates(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListResourceTemplates(t.Context(), mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.ResourceTemplates {
		out = append(out, r.URITemplate.Raw())
	}
	return out
}

// asJSON is v's JSON decoded again: two values of different Go types
// compare by what they encode.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Two people of different roles, in each revision: each sees the prompts,
// resources and templates their role allows; a read or get outside it is
// refused and audited; what they may read and get through the gateway is
// what the server answers; completions come from the prompt's and the
// template's server.
func TestPeopleSeeTheirPromptsAndResources(t *testing.T) {
	t.Parallel()
	f, srvs := servers(t, tsEntry(t, "ts"))
	url, reg, lines := serve(t, f, srvs, catalogRules(t))
	ctx := t.Context()
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			alice, bob := connect(t, url, "token-of-alice", rev), connect(t, url, "token-of-bob", rev)
			if got := promptNames(t, alice); !slices.Equal(got, []string{"ts_greet", "ts_summarize"}) {
				t.Errorf("alice's prompts: %v", got)
			}
			if got := promptNames(t, bob); !slices.Equal(got, []string{"ts_greet"}) {
				t.Errorf("bob's prompts: %v", got)
			}
			if got := resourceURIs(t, alice); !slices.Equal(got, []string{"test://static/hello.txt", "test://static/pixel.png"}) {
				t.Errorf("alice's resources: %v", got)
			}
			if got := resourceURIs(t, bob); !slices.Equal(got, []string{"test://static/hello.txt"}) {
				t.Errorf("bob's resources: %v", got)
			}
			if got := templates(t, alice); !slices.Equal(got, []string{"test://items/{id}"}) {
				t.Errorf("alice's templates: %v", got)
			}
			if got := templates(t, bob); len(got) != 0 {
				t.Errorf("bob's templates: %v", got)
			}

			// What the gateway reads and gets is the server's answer.
			for _, uri := range []string{"test://static/hello.txt", "test://static/pixel.png", "test://items/7"} {
				want, err := reg.ReadResource(ctx, "ts", uri)
				if err != nil {
					t.Fatal(err)
				}
				got, err := alice.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
				if err != nil {
					t.Fatalf("alice reads %s: %v", uri, err)
				}
				if !reflect.DeepEqual(asJSON(t, got.Contents), asJSON(t, want)) {
					t.Errorf("%s through the gateway %s, from the server %s", uri, asJSON(t, got.Contents), asJSON(t, want))
				}
			}
			want, err := reg.GetPrompt(ctx, "ts", "greet", map[string]string{"name": "Bob"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := bob.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "ts_greet", Arguments: map[string]string{"name": "Bob"}}})
			if err != nil {
				t.Fatalf("bob gets ts_greet: %v", err)
			}
			if len(got.Messages) != 1 || got.Description != want.Description || got.Messages[0].Role != mcp.Role(want.Messages[0].Role) ||
				got.Messages[0].Content.(mcp.TextContent).Text != want.Messages[0].Content.Text {
				t.Errorf("ts_greet through the gateway %+v, from the server %+v", got, want)
			}

			// Outside bob's role: refused as if it did not exist.
			if _, err := bob.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "test://static/pixel.png"}}); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("bob read pixel.png: %v", err)
			}
			if _, err := bob.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "ts_summarize", Arguments: map[string]string{"text": "x"}}}); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("bob got ts_summarize: %v", err)
			}

			// Completions, from the prompt's and the template's server.
			comp, err := alice.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{Ref: mcp.PromptReference{Type: "ref/prompt", Name: "ts_summarize"},
				Argument: mcp.CompleteArgument{Name: "style", Value: "s"}}})
			if err != nil || !slices.Equal(comp.Completion.Values, []string{"short"}) {
				t.Errorf("alice completes ts_summarize's style: %v %+v", err, comp)
			}
			comp, err = alice.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{Ref: mcp.ResourceReference{Type: "ref/resource", URI: "test://items/{id}"},
				Argument: mcp.CompleteArgument{Name: "id"}}})
			if err != nil || !slices.Equal(comp.Completion.Values, []string{"1", "2", "3"}) {
				t.Errorf("alice completes test://items/{id}: %v %+v", err, comp)
			}
			if _, err := bob.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{Ref: mcp.PromptReference{Type: "ref/prompt", Name: "ts_summarize"},
				Argument: mcp.CompleteArgument{Name: "style", Value: "s"}}}); err == nil {
				t.Error("bob completed an argument of a prompt he may not see")
			}
		})
	}
	var denied []string
	for _, l := range lines() {
		if l.Outcome == "denied" {
			if l.Subject != "bob" || l.Rule != -1 || l.Decision != "deny" {
				t.Errorf("denial recorded as %+v", l)
			}
			denied = append(denied, l.Method+" "+l.Tool)
		}
	}
	slices.Sort(denied)
	if want := []string{"prompts/get ts_summarize", "prompts/get ts_summarize", "resources/read test://static/pixel.png", "resources/read test://static/pixel.png"}; !slices.Equal(denied, want) {
		t.Fatalf("denials audited: %q, want %q", denied, want)
	}
}

// Two servers that both list a URI: the first configured serves it, and
// a prompt of each is served under its own server's name.
func TestCollidingURIsGoToTheFirstServer(t *testing.T) {
	t.Parallel()
	srv := testbin.Path(t, "hermes-testserver")
	f, srvs := servers(t, tsEntry(t, "one")+"  two:\n    command: "+srv+"\n    args: [--resources, --prompts]\n    env: {SERVES: two}\n")
	url, _, _ := serve(t, f, srvs, anything(t))
	alice := connect(t, url, "token-of-alice", "2025-11-25")
	if got := resourceURIs(t, alice); !slices.Equal(got, []string{"test://static/hello.txt", "test://static/pixel.png"}) {
		t.Fatalf("resources: %v", got)
	}
	if got := promptNames(t, alice); !slices.Equal(got, []string{"one_greet", "one_summarize", "two_greet", "two_summarize"}) {
		t.Fatalf("prompts: %v", got)
	}
}

// A server added by a reload is announced to a 2025-11-25 client on its
// GET stream: tools, resources and prompts changed; its prompts are then
// listed and can be got.
func TestListChangedOnTheGetStream(t *testing.T) {
	t.Parallel()
	srv := testbin.Path(t, "hermes-testserver")
	f, srvs := servers(t, "  ts:\n    command: "+srv+"\n"+tsEntry(t, "more"))
	url, reg, _ := serve(t, f, srvs[:1], anything(t))
	tr, err := transport.NewStreamableHTTP(url+"/mcp", transport.WithContinuousListening(),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer token-of-alice"}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion("2025-11-25"))
	t.Cleanup(func() { _ = c.Close() })
	var mu sync.Mutex
	seen := map[string]bool{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		seen[n.Method] = true
		mu.Unlock()
	})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := promptNames(t, c); len(got) != 0 {
		t.Fatalf("prompts before the reload: %v", got)
	}
	if _, err := reg.Reload(t.Context(), srvs); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed"} {
		testwait.For(t, time.Minute, method+" on the GET stream", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return seen[method]
		})
	}
	if got := promptNames(t, c); !slices.Equal(got, []string{"more_greet", "more_summarize"}) {
		t.Fatalf("prompts after the reload: %v", got)
	}
	res, err := c.GetPrompt(t.Context(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "more_greet", Arguments: map[string]string{"name": "A"}}})
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("more_greet: %v %+v", err, res)
	}
}

// Through the gateway, server-everything's resources, templates, prompts
// and completions are its own answers.
func TestEverythingThroughTheGateway(t *testing.T) {
	t.Parallel()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-everything")
	f, srvs := servers(t, "  everything:\n    command: "+node+"\n    args: ["+script+", stdio]\n")
	url, reg, _ := serve(t, f, srvs, anything(t))
	ctx := t.Context()
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			c := connect(t, url, "token-of-alice", rev)
			upRes, err := reg.ServerResources(ctx, "everything")
			if err != nil || len(upRes) == 0 {
				t.Fatalf("upstream resources: %v %d", err, len(upRes))
			}
			var want []string
			for _, r := range upRes {
				want = append(want, r.URI)
			}
			slices.Sort(want)
			if got := resourceURIs(t, c); !slices.Equal(got, want) {
				t.Errorf("resources through the gateway %v, upstream %v", got, want)
			}
			uri := upRes[0].URI
			wantC, err := reg.ReadResource(ctx, "everything", uri)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil || !reflect.DeepEqual(asJSON(t, got.Contents), asJSON(t, wantC)) {
				t.Errorf("read %s: %v; through the gateway %v, upstream %v", uri, err, asJSON(t, got), asJSON(t, wantC))
			}
			upT, err := reg.ServerResourceTemplates(ctx, "everything")
			if err != nil || len(upT) == 0 {
				t.Fatalf("upstream templates: %v", err)
			}
			if got := templates(t, c); len(got) != len(upT) || !slices.Contains(got, upT[0].URITemplate) {
				t.Errorf("templates through the gateway %v, upstream %+v", got, upT)
			}
			if got := promptNames(t, c); !slices.Contains(got, "everything_simple-prompt") || !slices.Contains(got, "everything_completable-prompt") {
				t.Errorf("prompts through the gateway %v", got)
			}
			wantP, err := reg.GetPrompt(ctx, "everything", "simple-prompt", nil)
			if err != nil {
				t.Fatal(err)
			}
			gotP, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "everything_simple-prompt"}})
			if err != nil || len(gotP.Messages) != len(wantP.Messages) || gotP.Messages[0].Content.(mcp.TextContent).Text != wantP.Messages[0].Content.Text {
				t.Errorf("simple-prompt: %v; through the gateway %+v, upstream %+v", err, gotP, wantP)
			}
			req := mcpvalue.CompletionRequest{Ref: mcpvalue.CompletionRef{Type: mcpvalue.RefPrompt, Name: "completable-prompt"}, Argument: "name", Value: "",
				Context: map[string]string{"department": "Engineering"}}
			wantV, err := reg.Complete(ctx, "everything", req)
			if err != nil || len(wantV.Values) == 0 {
				t.Fatalf("upstream completion: %v %+v", err, wantV)
			}
			comp, err := c.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{Ref: mcp.PromptReference{Type: "ref/prompt", Name: "everything_completable-prompt"},
				Argument: mcp.CompleteArgument{Name: "name"}, Context: mcp.CompleteContext{Arguments: map[string]string{"department": "Engineering"}}}})
			if err != nil || !slices.Equal(comp.Completion.Values, wantV.Values) {
				t.Errorf("completion through the gateway: %v %+v, upstream %v", err, comp, wantV.Values)
			}
		})
	}
}

// A per-person server's prompts and resources are listed from the
// template before a person has a process of it, and a read or a get of
// them runs in the person's own process, started then.
func TestPerPersonPromptsAndResources(t *testing.T) {
	t.Parallel()
	srv := testbin.Path(t, "hermes-testserver")
	f, srvs := servers(t, "  ts:\n    command: "+srv+"\n"+tsEntry(t, "tsp"))
	ctx := context.Background()
	shared, _ := f.Registry(app.Live, srvs[:1])
	template, _ := f.Registry(app.Cached, srvs[1:])
	for _, m := range []*registry.Manager{shared, template} {
		if err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	regs := &gateway.Registries{Shared: shared, Template: template, PerUser: []string{"tsp"},
		ForPerson: func(ctx context.Context, _ string) (*registry.Manager, error) {
			m, _ := f.Registry(app.Live, srvs[1:])
			return m, m.Start(ctx)
		}}
	t.Cleanup(regs.Close)
	ids := sessionIDs(t)
	g, err := gateway.New(gateway.Options{Backend: regs, Authenticate: staticTokens, Policy: anything(t), SessionIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(g.Handler())
	t.Cleanup(s.Close)
	bob := connect(t, s.URL, "token-of-bob", "2026-07-28")
	if got := promptNames(t, bob); !slices.Equal(got, []string{"tsp_greet", "tsp_summarize"}) || regs.People() != 0 {
		t.Fatalf("bob's prompts before his first use %v, with %d people's registries open", got, regs.People())
	}
	res, err := bob.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "test://static/hello.txt"}})
	if err != nil || len(res.Contents) != 1 || regs.People() != 1 {
		t.Fatalf("bob's read: %v %+v, with %d people's registries open", err, res, regs.People())
	}
	if got := resourceURIs(t, bob); !slices.Equal(got, []string{"test://static/hello.txt", "test://static/pixel.png"}) {
		t.Fatalf("bob's resources from his own process: %v", got)
	}
}
