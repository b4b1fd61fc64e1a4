package cli_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testmodel"
	"github.com/hermes-agent/hermes/internal/testnpm"
)

// modelHome writes a home whose model: block points at url, with the key
// in .env under a variable no environment sets.
func modelHome(t *testing.T, url, key, servers string) string {
	t.Helper()
	testbin.Path(t, "hermes-model-openai") // found on HERMES_PLUGIN_PATH
	home := newHome(t)
	writeConfig(t, home, fmt.Sprintf("model:\n  base_url: %s\n  default: test-model\n  api_key_env: HERMES_TEST_MODEL_KEY\n  max_retries: 0\n%s", url, servers))
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("HERMES_TEST_MODEL_KEY="+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestModelTest(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Key = "sk-right-key"
	srv.Models = []string{"test-model"}
	srv.SetDefault(testmodel.Reply{Text: "ok", PromptTokens: 5, CompletionTokens: 1})

	home := modelHome(t, srv.URL, "sk-right-key", "")
	r := runHermes(t, home, "model", "test").must(t, 0)
	for _, want := range []string{"Endpoint: " + srv.URL, "Key: $HERMES_TEST_MODEL_KEY (from the .env)", "Model: test-model", "✓ Answered", "by test-model", "Tokens: 6"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if req := srv.Last(t); req.Authorization != "Bearer sk-right-key" || req.MaxTokens() != 16 {
		t.Errorf("request %s", req.Raw)
	}

	wrong := modelHome(t, srv.URL, "sk-wrong-key", "")
	r = runHermes(t, wrong, "model", "test").must(t, 1)
	if !strings.Contains(r.stdout, "refused the API key (HTTP 401)") || !strings.Contains(r.stdout, "$HERMES_TEST_MODEL_KEY") {
		t.Errorf("wrong key:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "sk-wrong-key") {
		t.Errorf("the key was printed:\n%s%s", r.stdout, r.stderr)
	}

	r = runHermes(t, home, "model", "test", "-m", "no-such-model").must(t, 1)
	if !strings.Contains(r.stdout, "does not serve model 'no-such-model'") {
		t.Errorf("unknown model:\n%s", r.stdout)
	}

	html := testmodel.New(t)
	html.SetDefault(testmodel.Reply{Body: testmodel.HTML})
	r = runHermes(t, modelHome(t, html.URL, "k", ""), "model", "test").must(t, 1)
	if !strings.Contains(r.stdout, "is not an OpenAI-compatible chat-completions endpoint") || !strings.Contains(r.stdout, "model.base_url") {
		t.Errorf("HTML endpoint:\n%s", r.stdout)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() + "/v1"
	l.Close()
	r = runHermes(t, modelHome(t, down, "k", ""), "model", "test").must(t, 1)
	if !strings.Contains(r.stdout, "cannot reach the model endpoint") {
		t.Errorf("unreachable:\n%s", r.stdout)
	}
	if n := strings.Count(r.stdout, "\n✗") + strings.Count(r.stdout, "  ✗"); n != 1 {
		t.Errorf("want one failure line:\n%s", r.stdout)
	}
}

// 'hermes mcp call' answers server-everything's sampling request through
// the model of config.yaml with the server's policy, and 'hermes mcp test'
// shows the policy and the saved metrics.
func TestMCPCallSamplesThroughTheModel(t *testing.T) {
	t.Parallel()
	node, script := testnpm.Server(t, "@modelcontextprotocol/server-everything")
	srv := testmodel.New(t)
	srv.Key = "sk-key"
	srv.Script(testmodel.Reply{Text: "the scripted answer", PromptTokens: 8, CompletionTokens: 2})
	servers := fmt.Sprintf("mcp_servers:\n  everything:\n    command: %s\n    args: [%s, stdio]\n    sampling:\n      max_tokens_cap: 25\n      model: capped-model\n", node, script)
	home := modelHome(t, srv.URL, "sk-key", servers)
	r := runHermes(t, home, "mcp", "call", "everything", "trigger-sampling-request", "--arg", "prompt=tell me", "--arg", "maxTokens=500").must(t, 0)
	if !strings.Contains(r.stdout, "the scripted answer") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	req := srv.Last(t)
	if req.MaxTokens() != 25 || req.Model() != "capped-model" || !req.Contains("tell me") {
		t.Errorf("the model received %s", req.Raw)
	}
	r = runHermes(t, home, "mcp", "test", "everything").must(t, 0)
	for _, want := range []string{"Sampling: on (model: capped-model; max_tokens_cap 25, max_rpm 10", "Sampling requests: 1, errors: 0, tokens: 10, tool uses: 0"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("mcp test lacks %q:\n%s", want, r.stdout)
		}
	}

	// Sampling off: server-everything is not offered the capability, so
	// it has no sampling tool to call.
	off := modelHome(t, srv.URL, "sk-key", fmt.Sprintf("mcp_servers:\n  everything:\n    command: %s\n    args: [%s, stdio]\n    sampling:\n      enabled: false\n", node, script))
	r = runHermes(t, off, "mcp", "call", "everything", "trigger-sampling-request", "--arg", "prompt=x").must(t, 1)
	if !strings.Contains(r.stderr, "has no tool 'trigger-sampling-request'") {
		t.Errorf("disabled sampling: %s", r.stderr)
	}
	if r = runHermes(t, off, "mcp", "test", "everything").must(t, 0); !strings.Contains(r.stdout, "Sampling: off (sampling.enabled is false)") {
		t.Errorf("mcp test of a disabled server:\n%s", r.stdout)
	}
}

// 'hermes model test --json' prints one object in the documented shape,
// for an answer and for each kind of failure, and never the key.
func TestModelTestJSON(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Key = "sk-right-key"
	srv.Models = []string{"test-model"}
	srv.SetDefault(testmodel.Reply{Text: "ok", PromptTokens: 5, CompletionTokens: 1})

	cases := []struct {
		golden, key string
		args        []string
		code        int
	}{
		{"model-test", "sk-right-key", nil, 0},
		{"model-test-auth", "sk-wrong-key", nil, 1},
		{"model-test-unknown-model", "sk-right-key", []string{"-m", "no-such-model"}, 1},
	}
	for _, c := range cases {
		home := modelHome(t, srv.URL, c.key, "")
		r := runHermes(t, home, append([]string{"model", "test", "--json"}, c.args...)...).must(t, c.code)
		if strings.Contains(r.stdout+r.stderr, c.key) {
			t.Errorf("%s: the key was printed:\n%s%s", c.golden, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "Testing the model endpoint") {
			t.Errorf("%s: the person's lines did not go to stderr:\n%s", c.golden, r.stderr)
		}
		checkGolden(t, c.golden, strings.ReplaceAll(r.stdout, srv.URL, "$MODEL_URL"), home)
	}

	none := newHome(t)
	writeConfig(t, none, "model:\n  base_url: "+srv.URL+"\n  api_key_env: HERMES_TEST_MODEL_UNSET\n")
	r := runHermes(t, none, "model", "test", "--json").must(t, 2)
	checkGolden(t, "model-test-no-model", strings.ReplaceAll(r.stdout, srv.URL, "$MODEL_URL"), none)
}
