package cli_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/host/homedir"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// gatewayHome is a home whose config serves the Go test server through a
// gateway with two static tokens: alice (dev) may call every tool, bob
// (support) only echo; audit lines go to a file.
func gatewayHome(t *testing.T) (home, audit string) {
	t.Helper()
	testbin.Path(t, "hermes-gateway")
	home = newHome(t)
	audit = filepath.Join(t.TempDir(), "audit.jsonl")
	sum := func(tok string) string { s := sha256.Sum256([]byte(tok)); return hex.EncodeToString(s[:]) }
	writeConfig(t, home, "mcp_servers:\n  ts:\n    command: "+testbin.Path(t, "hermes-testserver")+"\n"+
		"gateway:\n  resource: http://127.0.0.1/mcp\n  tokens:\n"+
		"    - {subject: alice, sha256: \""+sum("alice-token-0123456789")+"\", groups: [dev]}\n"+
		"    - {subject: bob, sha256: \""+sum("bob-token-0123456789")+"\", groups: [support]}\n"+
		"  policy:\n    - {allow: {groups: [dev], tools: [\"*\"]}}\n    - {allow: {groups: [support], tools: [\"mcp_*_echo\"]}}\n"+
		"  audit: {file: "+audit+"}\n")
	return home, audit
}

// TestGatewayServesAndStopsOnSIGTERM: `hermes mcp gateway` as a process:
// it serves the config's server to each person as the policy says,
// records a refused call in the audit file, and at SIGTERM exits 0.
func TestGatewayServesAndStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	home, audit := gatewayHome(t)
	g := startGateway(t, home)
	url, cmd, exited := g.url, g.cmd, g.exited
	alice, bob := gatewayClient(t, url, "alice-token-0123456789"), gatewayClient(t, url, "bob-token-0123456789")
	if a, b := toolNames(t, alice), toolNames(t, bob); !slices.Contains(a, "mcp_ts_add") || !slices.Equal(b, []string{"mcp_ts_echo"}) {
		t.Fatalf("alice sees %v, bob %v", a, b)
	}
	if _, err := bob.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_add", Arguments: map[string]any{"a": 1, "b": 2}}}); err == nil {
		t.Fatal("bob called add")
	}
	testwait.For(t, 0, "the refusal in the audit file", func() bool {
		b, _ := os.ReadFile(audit)
		for line := range strings.Lines(string(b)) {
			var a struct{ Subject, Tool, Outcome string }
			if json.Unmarshal([]byte(line), &a) == nil && a.Subject == "bob" && a.Tool == "mcp_ts_add" && a.Outcome == "denied" {
				return true
			}
		}
		return false
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("after SIGTERM: %v", err)
		}
	case <-testwait.Context(t).Done():
		t.Fatal("the gateway did not stop at SIGTERM")
	}
}

// runningGateway is a `hermes mcp gateway` process of a test.
type runningGateway struct {
	url    string
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan error
}

// startGateway runs `hermes mcp gateway` on home until the test ends, and
// returns once it says where it serves.
func startGateway(t *testing.T, home string) *runningGateway {
	t.Helper()
	cmd := exec.Command(testbin.Path(t, "hermes"), "mcp", "gateway", "--http", "127.0.0.1:0")
	cmd.Env = hermesTestEnv(t, home, "HERMES_GATEWAY_SESSION_KEY="+strings.Repeat("k", 40))
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	g := &runningGateway{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan error, 1)}
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		g.stderr.Write([]byte(sc.Text() + "\n"))
		if _, after, ok := strings.Cut(sc.Text(), " at http://"); ok && strings.HasPrefix(sc.Text(), "hermes mcp gateway: serving") {
			g.url = "http://" + after
			break
		}
	}
	if g.url == "" {
		t.Fatalf("the gateway never said where it serves:\n%s", g.stderr.String())
	}
	go func() {
		for sc.Scan() {
			g.stderr.Write([]byte(sc.Text() + "\n"))
		}
		g.exited <- cmd.Wait()
	}()
	return g
}

// gatewayClient is an MCP client of the gateway at url with token.
func gatewayClient(t *testing.T, url, token string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// toolNames lists c's tools.
func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, tl := range res.Tools {
		n = append(n, tl.Name)
	}
	return n
}

// TestGatewayReloadsOnSIGHUP: a changed policy and audit file take effect
// at SIGHUP without a restart, and a broken config is refused on one line
// while the gateway goes on serving the one before.
func TestGatewayReloadsOnSIGHUP(t *testing.T) {
	t.Parallel()
	home, audit := gatewayHome(t)
	g := startGateway(t, home)
	bob := gatewayClient(t, g.url, "bob-token-0123456789")
	if n := toolNames(t, bob); !slices.Equal(n, []string{"mcp_ts_echo"}) {
		t.Fatalf("bob sees %v", n)
	}
	b, err := os.ReadFile(filepath.Join(home, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), "moved", "audit.jsonl")
	reloaded := strings.Replace(string(b), "groups: [support], tools: [\"mcp_*_echo\"]", "groups: [support], tools: [\"mcp_*_echo\", \"mcp_*_add\"]", 1)
	writeConfig(t, home, strings.Replace(reloaded, "file: "+audit, "file: "+moved, 1))
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 0, "the reload", func() bool { return strings.Contains(g.stderr.String(), "reloaded, serving 1 server(s)") })
	if n := toolNames(t, bob); !slices.Contains(n, "mcp_ts_add") {
		t.Fatalf("after the reload bob sees %v", n)
	}
	if _, err := bob.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_add", Arguments: map[string]any{"a": 1, "b": 2}}}); err != nil {
		t.Fatalf("bob's add after the reload: %v", err)
	}
	if b, _ := os.ReadFile(moved); !strings.Contains(string(b), `"subject":"bob"`) || !strings.Contains(string(b), `"tool":"mcp_ts_add"`) {
		t.Fatalf("the audit file the reload named holds %q", b)
	}
	if b, _ := os.ReadFile(audit); strings.Contains(string(b), "mcp_ts_add") {
		t.Fatalf("the audit file before the reload got a call after it: %q", b)
	}
	writeConfig(t, home, string(b)+"  polcy: []\n")
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 0, "the refused reload", func() bool { return strings.Contains(g.stderr.String(), "reload refused, still serving") })
	if n := toolNames(t, bob); !slices.Contains(n, "mcp_ts_add") {
		t.Fatalf("after a refused reload bob sees %v", n)
	}
}

// TestGatewayCheckExplains: `hermes mcp gateway check` names the person,
// the decision, the rule and why; a refused token and a config without a
// gateway block are one line each.
func TestGatewayCheckExplains(t *testing.T) {
	t.Parallel()
	home, _ := gatewayHome(t)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("bob-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runHermes(t, home, "mcp", "gateway", "check", "--token", tok, "--tool", "mcp_ts_echo").must(t, 0).stdout
	if !strings.Contains(out, "ALLOW mcp_ts_echo for bob") || !strings.Contains(out, "rule: gateway.policy[1]") {
		t.Fatalf("check of bob's echo:\n%s", out)
	}
	out = runHermes(t, home, "mcp", "gateway", "check", "--token", tok, "--tool", "mcp_ts_add").must(t, 0).stdout
	if !strings.Contains(out, "DENY mcp_ts_add for bob") || !strings.Contains(out, "rule: none") || !strings.Contains(out, "default deny") {
		t.Fatalf("check of bob's add:\n%s", out)
	}
	if err := os.WriteFile(tok, []byte("not-a-known-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	runHermes(t, home, "mcp", "gateway", "check", "--token", tok, "--tool", "mcp_ts_add").must(t, 1).oneLineErr(t, "the token is refused")
	plain := newHome(t)
	writeConfig(t, plain, "mcp_servers: {}\n")
	runHermes(t, plain, "mcp", "gateway", "--http", "127.0.0.1:0").must(t, 1).oneLineErr(t, "has no gateway: block")
	runHermes(t, plain, "mcp", "gateway").must(t, 2).oneLineErr(t, "needs --http HOST:PORT")
}

// TestGatewayDrainsAtSIGTERM: a call in flight when SIGTERM arrives
// finishes with its result, and then the gateway exits 0.
func TestGatewayDrainsAtSIGTERM(t *testing.T) {
	t.Parallel()
	home, _ := gatewayHome(t)
	b, err := os.ReadFile(filepath.Join(home, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, strings.Replace(string(b), "\ngateway:", "\n    args: [--trace]\ngateway:", 1))
	g := startGateway(t, home)
	alice := gatewayClient(t, g.url, "alice-token-0123456789")
	answered := make(chan string, 1)
	go func() {
		res, err := alice.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mcp_ts_sleep", Arguments: map[string]any{"ms": 2000}}})
		if err != nil {
			answered <- err.Error()
			return
		}
		answered <- res.Content[0].(mcp.TextContent).Text
	}()
	testwait.For(t, 0, "the sleep to start upstream", func() bool {
		b, _ := os.ReadFile(homedir.Dir(home).ServerStderrLog())
		return strings.Contains(string(b), testserver.TraceSleepStarted)
	})
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := <-answered; got != "slept 2000ms" {
		t.Fatalf("the call in flight at SIGTERM: %s\n%s", got, g.stderr.String())
	}
	if err := <-g.exited; err != nil {
		t.Fatalf("after the drain: %v\n%s", err, g.stderr.String())
	}
	if !strings.Contains(g.stderr.String(), "stopping; calls in flight have") {
		t.Fatalf("stderr:\n%s", g.stderr.String())
	}
}
