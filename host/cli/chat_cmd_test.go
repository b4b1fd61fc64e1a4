package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// chatHome writes a home whose model: block points at the scripted model
// (model.default test-model, the key in .env) with extra model: lines
// and the servers given.
func chatHome(t *testing.T, srv *testmodel.Server, modelExtra, servers string) string {
	t.Helper()
	testbin.Path(t, "hermes-model-openai")
	home := newHome(t)
	if !strings.Contains(modelExtra, "max_retries") {
		modelExtra = "  max_retries: 0\n" + modelExtra
	}
	writeConfig(t, home, fmt.Sprintf("model:\n  base_url: %s\n  default: test-model\n  api_key_env: HERMES_TEST_MODEL_KEY\n%s%s", srv.URL, modelExtra, servers))
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("HERMES_TEST_MODEL_KEY=sk-chat\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// tsEntry is a config entry of the Go test server. Its tools are marked
// read-only, so the approval gate lets the model call them without asking
// (mcp-go lists every other tool with destructiveHint: true).
func tsEntry(t *testing.T, name string, extra string, args ...string) string {
	args = append([]string{"--read-only-tools"}, args...)
	a := "\n    args: [" + strings.Join(args, ", ") + "]"
	return fmt.Sprintf("  %s:\n    command: %s%s\n%s", name, testServerPath(t), a, extra)
}

// toolMessages returns the tool messages of a model request, by call id.
func toolMessages(req testmodel.Request) map[string]string {
	out := map[string]string{}
	for _, m := range req.Messages() {
		if m["role"] == "tool" {
			id, _ := m["tool_call_id"].(string)
			text, _ := m["content"].(string)
			if text == "" {
				b, _ := json.Marshal(m["content"])
				text = string(b)
			}
			out[id] = text
		}
	}
	return out
}

// TestChatParallelToolCalls: one prompt makes the model call a tool of the
// Go test server and one of server-everything in one round; both run, the
// results go back to the model as the registry renders them, and the
// model's streamed answer is printed.
func TestChatParallelToolCalls(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Script(
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{
			{ID: "call_go", Name: "mcp_ts_echo", Arguments: `{"message":"from go"}`},
			{ID: "call_ev", Name: "mcp_ev_echo", Arguments: `{"message":"from everything"}`},
		}},
		testmodel.Reply{Text: "Both servers answered.", ChunkSize: 3},
	)
	servers := "mcp_servers:\n" + tsEntry(t, "ts", "    supports_parallel_tool_calls: true\n") +
		strings.TrimPrefix(everythingConfig(t), "mcp_servers:\n") + "    supports_parallel_tool_calls: true\n"
	home := chatHome(t, srv, "", servers)
	r := runHermes(t, home, "chat", "ask both servers").must(t, 0)
	if r.stdout != "Both servers answered.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	for _, want := range []string{"→ mcp_ts_echo", "→ mcp_ev_echo", "✓ mcp_ts_echo", "✓ mcp_ev_echo"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("want 2 model requests, got %d", len(reqs))
	}
	first := string(reqs[0].Raw)
	for _, name := range []string{`"mcp_ts_echo"`, `"mcp_ev_echo"`, `"mcp_ts_sleep"`} {
		if !strings.Contains(first, name) {
			t.Errorf("the model was not offered %s", name)
		}
	}
	got := toolMessages(reqs[1])
	if got["call_go"] != `{"result":"from go"}` || !strings.Contains(got["call_ev"], "Echo: from everything") {
		t.Errorf("tool results fed back: %v", got)
	}
}

// The model's tools are exactly the names and schemas hermes tools shows.
func TestChatOffersWhatToolsShows(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	home := chatHome(t, srv, "", "mcp_servers:\n"+tsEntry(t, "ts", "    tools:\n      exclude: [crash]\n"))
	runHermes(t, home, "chat", "hi").must(t, 0)
	var offered struct {
		Tools []struct {
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(srv.Last(t).Raw, &offered); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Servers []struct {
			RegisteredTools []string `json:"registered_tools"`
		} `json:"servers"`
	}
	r := runHermes(t, home, "tools", "--json").must(t, 0)
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Servers) != 1 {
		t.Fatalf("tools --json: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, tl := range offered.Tools {
		names = append(names, tl.Function.Name)
		if tl.Function.Parameters["type"] != "object" {
			t.Errorf("%s: schema %v", tl.Function.Name, tl.Function.Parameters)
		}
	}
	if strings.Join(names, ",") != strings.Join(rep.Servers[0].RegisteredTools, ",") {
		t.Errorf("offered %v\nhermes tools shows %v", names, rep.Servers[0].RegisteredTools)
	}
}

// TestChatOneShotFromStdin: without a prompt argument the prompt is
// stdin.
func TestChatOneShotFromStdin(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Script(testmodel.Reply{Text: "read it"})
	home := chatHome(t, srv, "", "")
	r := runHermesInput(t, home, nil, strings.NewReader("a prompt from stdin\n"), "chat").must(t, 0)
	if r.stdout != "read it\n" || !srv.Last(t).Contains("a prompt from stdin") {
		t.Errorf("stdout %q; request %s", r.stdout, srv.Last(t).Raw)
	}
	r = runHermesInput(t, home, nil, strings.NewReader(""), "chat").must(t, 2)
	r.oneLineErr(t, "stdin was empty")
}

// A 429 is retried (model.max_retries) and the answer printed.
func TestChatRetriesRateLimit(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Script(testmodel.Reply{Status: 429, RetryAfter: "0"}, testmodel.Reply{Text: "after the wait"})
	home := chatHome(t, srv, "  max_retries: 2\n", "")
	r := runHermes(t, home, "chat", "hello").must(t, 0)
	if r.stdout != "after the wait\n" || len(srv.Requests()) != 2 {
		t.Errorf("stdout %q after %d requests", r.stdout, len(srv.Requests()))
	}
}

// A malformed chunk is a one-line error and exit code 1.
func TestChatMalformedChunk(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Script(testmodel.Reply{Text: "partial", Raw: []string{`{"choices":[{"delta":{"content":`}})
	home := chatHome(t, srv, "", "")
	r := runHermes(t, home, "chat", "hello").must(t, 1)
	r.oneLineErr(t, "model.base_url")
}

// The turn stops at model.max_tool_rounds with an error naming the key.
func TestChatMaxToolRounds(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.SetDefault(testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "c", Name: "mcp_ts_echo", Arguments: `{"message":"again"}`}}})
	home := chatHome(t, srv, "  max_tool_rounds: 2\n", "mcp_servers:\n"+tsEntry(t, "ts", ""))
	r := runHermes(t, home, "chat", "loop").must(t, 1)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "model.max_tool_rounds = 2") || !strings.Contains(last, "raise it") {
		t.Errorf("last line %q", last)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3 (two rounds run)", n)
	}
	if n := strings.Count(r.stderr, "✓ mcp_ts_echo"); n != 2 {
		t.Errorf("%d calls ran, want 2:\n%s", n, r.stderr)
	}
}

// What the model writes reaches the terminal escaped, lines kept.
func TestChatEscapesTheModel(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Script(testmodel.Reply{Text: "line one\nred \x1b[31mtext\x1b]0;title\x07 \u202eevil", ChunkSize: 2})
	home := chatHome(t, srv, "", "")
	r := runHermes(t, home, "chat", "hi").must(t, 0)
	if strings.ContainsAny(r.stdout, "\x1b\x07\u202e") {
		t.Errorf("control reached the terminal: %q", r.stdout)
	}
	if !strings.HasPrefix(r.stdout, "line one\nred ") || !strings.Contains(r.stdout, `\x1b[31m`) {
		t.Errorf("stdout %q", r.stdout)
	}
}
