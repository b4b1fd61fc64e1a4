package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/mcp/calls"
	"github.com/hermes-agent/hermes/host/mcpvalue"

	"github.com/hermes-agent/hermes/internal/testbin"
)

// toolsCLI runs the built hermes with home and returns stdout, stderr and
// the exit code.
func toolsCLI(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	r := runHermes(t, home, args...)
	return r.stdout, r.stderr, r.code
}

func toolsHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	ts := filepath.Join(testbin.Dir(t), "hermes-testserver")
	cfg := "mcp_servers:\n" +
		"  ts:\n    command: " + ts + "\n    args: [\"--resources\"]\n    tools:\n      exclude: [crash, \"sl*\"]\n" +
		"  gone:\n    command: " + filepath.Join(home, "no-such-server") + "\n" +
		"  off:\n    command: whatever\n    enabled: false\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestToolsCommand(t *testing.T) {
	t.Parallel()
	home := toolsHome(t)
	out, errOut, code := toolsCLI(t, home, "tools")
	if code != 0 {
		t.Fatalf("hermes tools: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"Built-in toolsets", "none", "ts (stdio) mcp-ts: ", "\n        mcp_ts_echo\n", "\n        mcp_ts_read_resource\n",
		"gone (stdio): failed: missing executable", "off (stdio): disabled"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mcp_ts_sleep") || strings.Contains(out, "mcp_ts_crash") {
		t.Errorf("filtered tools listed:\n%s", out)
	}

	out, _, code = toolsCLI(t, home, "tools", "--json", "--live")
	var rep struct {
		Builtin []any `json:"builtin"`
		Servers []struct {
			Name, State string
			Error       struct{ Code, Message string }
			Tools       []string `json:"registered_tools"`
			Enabled     int      `json:"tools_enabled"`
			Total       int      `json:"tools_total"`
		} `json:"servers"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Servers) != 3 {
		t.Fatalf("tools --json: exit %d\n%s", code, out)
	}
	if s := rep.Servers[0]; s.State != "connected" || s.Enabled == 0 || s.Total <= s.Enabled || len(s.Tools) != s.Enabled+2 {
		t.Errorf("ts = %+v", s)
	}
	if s := rep.Servers[1]; s.State != "missing_command" || s.Error.Code != "not_found" || !strings.Contains(s.Error.Message, "missing executable") {
		t.Errorf("gone = %+v", s)
	}
}

func TestCallThroughRegistry(t *testing.T) {
	t.Parallel()
	home := toolsHome(t)
	out, errOut, code := toolsCLI(t, home, "mcp", "call", "ts", "add", "--arg", "a=2", "--arg", "b=3")
	if code != 0 || strings.TrimSpace(out) != "5" {
		t.Fatalf("call add: exit %d out %q err %q", code, out, errOut)
	}
	out, _, code = toolsCLI(t, home, "mcp", "call", "ts", "add", "--arg", "a=2", "--arg", "b=3", "--json")
	if code != 0 || !strings.Contains(out, `"type": "text"`) {
		t.Fatalf("call --json: exit %d out %q", code, out)
	}
	out, _, code = toolsCLI(t, home, "mcp", "call", "ts", "echo", "--arg", "message=hi", "--rendered")
	if code != 0 || strings.TrimSpace(out) != `{"result":"hi"}` {
		t.Fatalf("call --rendered: exit %d out %q", code, out)
	}
	// A filtered tool is refused and never reaches the server.
	_, errOut, code = toolsCLI(t, home, "mcp", "call", "ts", "sleep", "--arg", "ms=1")
	if code != 1 || !strings.Contains(errOut, "filtered by tools.include/exclude of server ts") {
		t.Fatalf("filtered call: exit %d err %q", code, errOut)
	}
	// A tool the server does not offer is named as such, whatever its
	// name reads like (the registry's availability decides, not its text).
	_, errOut, code = toolsCLI(t, home, "mcp", "call", "ts", "unfiltered")
	if code != 1 || !strings.Contains(errOut, "server 'ts' has no tool 'unfiltered'") || strings.Contains(errOut, "configure") {
		t.Fatalf("unknown tool: exit %d err %q", code, errOut)
	}
	// A structured result whose text is the same JSON is printed once
	// (it was the text, then the same object indented).
	out, _, code = toolsCLI(t, home, "mcp", "call", "ts", "structured")
	if code != 0 || strings.Count(out, "hermes") != 1 || !strings.Contains(out, `"count": 3`) {
		t.Fatalf("structured call: exit %d out %q", code, out)
	}
	out, _, code = toolsCLI(t, home, "mcp", "call", "ts", "read_resource", "--arg", "uri=test://static/hello.txt")
	if code != 0 || !strings.Contains(out, "hello") {
		t.Fatalf("utility call: exit %d out %q", code, out)
	}
	out, _, code = toolsCLI(t, home, "mcp", "call", "ts", "error_result")
	if code != 1 || !strings.Contains(out, "[REDACTED]") || strings.Contains(out, "sk-abc123secret") {
		t.Fatalf("error result: exit %d out %q", code, out)
	}
	_, errOut, code = toolsCLI(t, home, "mcp", "call", "gone", "x")
	if code != 1 || !strings.Contains(errOut, "missing executable") {
		t.Fatalf("unreachable server: exit %d err %q", code, errOut)
	}
}

// TestCallFromTheShell: what a person types at 'hermes mcp call' works or
// says what to type. Arguments after the tool written key=value are
// arguments (they were a bare usage line), a mistyped tool gets the
// nearest name and the code no_such_tool (it was "other" with 21 names),
// a missing required argument is named before anything is sent, --help
// after the arguments is the command's help ("No help topic for 'ts'"),
// and a swapped command name gets a suggestion.
func TestCallFromTheShell(t *testing.T) {
	t.Parallel()
	home := toolsHome(t)
	out, errOut, code := toolsCLI(t, home, "mcp", "call", "ts", "add", "a=2", "b=3")
	if code != 0 || strings.TrimSpace(out) != "5" {
		t.Fatalf("call add a=2 b=3: exit %d out %q err %q", code, out, errOut)
	}
	_, errOut, code = toolsCLI(t, home, "mcp", "call", "ts", "echo", "hi")
	if code != 2 || !strings.Contains(errOut, `"hi" after the tool is not an argument: write arguments as key=value or --arg key=value`) {
		t.Errorf("call echo hi: exit %d err %q", code, errOut)
	}
	_, errOut, code = toolsCLI(t, home, "mcp", "call", "ts", "ech")
	if code != 1 || !strings.Contains(errOut, "server 'ts' has no tool 'ech' (did you mean 'echo'?)") {
		t.Errorf("call ech: exit %d err %q", code, errOut)
	}
	out, _, _ = toolsCLI(t, home, "mcp", "call", "ts", "ech", "--json")
	if !strings.Contains(out, `"code": "no_such_tool"`) {
		t.Errorf("call ech --json: %s", out)
	}
	_, errOut, code = toolsCLI(t, home, "mcp", "call", "ts", "add", "a=2")
	if code != 2 || !strings.Contains(errOut, "missing required argument 'b': pass --arg b=VALUE; run 'hermes mcp tools ts add' for its arguments") {
		t.Errorf("call add a=2: exit %d err %q", code, errOut)
	}
	out, errOut, code = toolsCLI(t, home, "mcp", "call", "ts", "echo", "--help")
	if code != 0 || !strings.Contains(out, "hermes mcp call - call one tool") || strings.Contains(out+errOut, "No help topic") {
		t.Errorf("call ts echo --help: exit %d out %q err %q", code, out, errOut)
	}
	_, errOut, code = toolsCLI(t, home, "mpc", "list")
	if code != 2 || !strings.Contains(errOut, "did you mean 'hermes mcp'?") {
		t.Errorf("mpc list: exit %d err %q", code, errOut)
	}
}

// BuildArguments checks choices (enum) against the schema, for --arg and
// --args-json alike, with the choices in the error.
func TestBuildArgumentsChoices(t *testing.T) {
	tool := &mcpvalue.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"mode":{"type":"string","enum":["fast","safe"]},"n":{"type":"integer","enum":[1,2]}},"required":["mode"]}`)}
	if _, err := calls.BuildArguments(tool, []string{"mode=fast", "n=2"}, ""); err != nil {
		t.Errorf("valid choices refused: %v", err)
	}
	if _, err := calls.BuildArguments(tool, []string{"mode=quick"}, ""); err == nil || err.Error() != "argument mode: want one of fast, safe" {
		t.Errorf("mode=quick: %v", err)
	}
	if _, err := calls.BuildArguments(tool, nil, `{"mode":"safe","n":3}`); err == nil || err.Error() != "argument n: want one of 1, 2" {
		t.Errorf("n=3: %v", err)
	}
	if _, err := calls.BuildArguments(tool, []string{"n=1"}, ""); err == nil || !strings.Contains(err.Error(), "missing required argument 'mode'") {
		t.Errorf("no mode: %v", err)
	}
}

// TestMcpToolsShowsArguments: 'hermes mcp tools NAME [TOOL]' shows a
// server's tools with their arguments as the model sees them (filters
// applied), and --json their input schemas.
func TestMcpToolsShowsArguments(t *testing.T) {
	t.Parallel()
	home := toolsHome(t)
	out, errOut, code := toolsCLI(t, home, "mcp", "tools", "ts", "echo")
	if code != 0 || !strings.Contains(out, "echo  (model name mcp_ts_echo)") || !strings.Contains(out, "    message  string  required\n        text to echo\n") {
		t.Fatalf("mcp tools ts echo: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = toolsCLI(t, home, "mcp", "tools", "ts", "--json")
	var rep struct {
		Server string `json:"server"`
		Tools  []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Server != "ts" {
		t.Fatalf("mcp tools ts --json: exit %d\n%s%s", code, out, errOut)
	}
	names := map[string]bool{}
	for _, tl := range rep.Tools {
		names[tl.Name] = true
		if tl.Name == "add" && tl.InputSchema["required"] == nil {
			t.Errorf("add's schema lost required: %v", tl.InputSchema)
		}
	}
	if !names["echo"] || !names["add"] || names["sleep"] || names["crash"] {
		t.Errorf("tools listed: %v (want the filter applied: no sleep, no crash)", names)
	}
	_, errOut, code = toolsCLI(t, home, "mcp", "tools", "ts", "sleep")
	if code != 1 || !strings.Contains(errOut, "filtered by tools.include/exclude of server ts") {
		t.Fatalf("filtered tool: exit %d err %q", code, errOut)
	}
}

// TestListCheck: 'hermes mcp list --check' connects the enabled servers
// and adds their state (tools the model sees, or why not); --json carries
// the same as state, error and tools_enabled. Disabled servers are not
// started.
func TestListCheck(t *testing.T) {
	t.Parallel()
	home := toolsHome(t)
	out, errOut, code := toolsCLI(t, home, "mcp", "list", "--check")
	if code != 0 || !strings.Contains(out, "Check") || !regexp.MustCompile(`ts .*✓ \d+ tools`).MatchString(out) || !regexp.MustCompile(`gone .*✗ `).MatchString(out) {
		t.Fatalf("list --check: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = toolsCLI(t, home, "mcp", "list", "--check", "--json")
	var rep []struct {
		Name         string `json:"name"`
		State        string `json:"state"`
		ToolsEnabled *int   `json:"tools_enabled"`
		Error        *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep) != 3 {
		t.Fatalf("list --check --json: exit %d\n%s", code, out)
	}
	if r := rep[0]; r.State != "connected" || r.ToolsEnabled == nil || *r.ToolsEnabled == 0 {
		t.Errorf("ts = %+v", r)
	}
	if r := rep[1]; r.State == "connected" || r.Error == nil || !strings.Contains(r.Error.Message, "missing executable") {
		t.Errorf("gone = %+v", r)
	}
	if r := rep[2]; r.State != "disabled" || r.ToolsEnabled != nil {
		t.Errorf("off = %+v", r)
	}
}
