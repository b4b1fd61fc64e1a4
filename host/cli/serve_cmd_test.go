package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestServeStdioProtocolOnly: `hermes -v mcp serve` over stdio with the
// fake bridge: an MCP client initializes, lists and calls (stdout carries
// protocol only, though -v logs), and after the plugin is killed the next
// call works in a new plugin process.
func TestServeStdioProtocolOnly(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	var stderr serveStderrLog
	c, err := client.NewStdioMCPClientWithOptions(testbin.Path(t, "hermes"), hermesTestEnv(t, home),
		[]string{"-v", "mcp", "serve", "--bridge", "fake"}, transport.WithCommandStderrWriter(&stderr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init, err := c.Initialize(ctx, mcp.InitializeRequest{})
	if err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr.String())
	}
	if init.ServerInfo.Name != "fake" {
		t.Fatalf("server info %+v", init.ServerInfo)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) != 6 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	pid := func() int {
		t.Helper()
		var req mcp.CallToolRequest
		req.Params.Name = "pid"
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("pid: %+v %v\nstderr:\n%s", res, err, stderr.String())
		}
		var v struct{ Pid int }
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &v); err != nil || v.Pid == 0 {
			t.Fatalf("pid result %s: %v", raw, err)
		}
		return v.Pid
	}
	first := pid()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Once the plugin is gone (reaped by hermes), the next call works: it
	// waits for the restart or starts the plugin itself.
	testwait.For(t, 20*time.Second, "the killed plugin to be reaped", func() bool { return syscall.Kill(first, 0) == syscall.ESRCH })
	if second := pid(); second == first {
		t.Fatalf("the call ran in the killed plugin %d", first)
	}
	// -v mirrors the log on stderr, never on stdout (the client would
	// have failed on a log line in the protocol).
	if !strings.Contains(stderr.String(), "bridge plugin") {
		t.Errorf("-v wrote no log to stderr:\n%s", stderr.String())
	}
}

// TestServeRefusals: the command's mistakes end in one line saying what to
// do, before anything starts.
func TestServeRefusals(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	runHermes(t, home, "mcp", "serve", "--allow-remote").must(t, 2).oneLineErr(t, "--allow-remote only applies to --http")
	runHermes(t, home, "mcp", "serve", "--http", "0.0.0.0:0").must(t, 1).oneLineErr(t, "not a loopback address", "--allow-remote")
	runHermes(t, home, "mcp", "serve", "--http", "nonsense").must(t, 1).oneLineErr(t, "want HOST:PORT")
	runHermes(t, home, "mcp", "serve", "--bridge", "nope").must(t, 1).oneLineErr(t, "hermes-bridge-nope")
	runHermes(t, home, "mcp", "serve", "--bridge", "../../bin/sh").must(t, 2).oneLineErr(t, "a bridge plugin's name is letters")
	writeConfig(t, home, "mcp_serve:\n  call_timeout: soon\n")
	runHermes(t, home, "mcp", "serve").must(t, 1).oneLineErr(t, "mcp_serve.call_timeout", "want a number of seconds")
}

// TestServeHTTPTokenShownOnce: the first --http run makes a token, saves
// it to .env and shows it once; the next run uses it and shows nothing.
func TestServeHTTPTokenShownOnce(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	run := func() (stderr string) {
		t.Helper()
		cmd := exec.Command(testbin.Path(t, "hermes"), "mcp", "serve", "--bridge", "fake", "--http", "127.0.0.1:0")
		cmd.Env = hermesTestEnv(t, home, "HERMES_MCP_SERVE_TOKEN=")
		pipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var seen []string
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if strings.HasPrefix(sc.Text(), "Serving MCP on http://127.0.0.1:") {
				break
			}
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		for sc.Scan() {
			seen = append(seen, sc.Text())
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve ended with %v after SIGTERM; stderr:\n%s", err, strings.Join(seen, "\n"))
		}
		return strings.Join(seen, "\n")
	}
	first := run()
	env, err := os.ReadFile(filepath.Join(home, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(env))
	token, ok := strings.CutPrefix(line, "HERMES_MCP_SERVE_TOKEN=")
	if !ok || len(token) < 40 {
		t.Fatalf(".env holds %q", line)
	}
	if !strings.Contains(first, "Generated a bearer token") || strings.Count(first, token) != 1 {
		t.Fatalf("the first run did not show the token once:\n%s", first)
	}
	if second := run(); strings.Contains(second, token) || strings.Contains(second, "Generated") {
		t.Fatalf("the second run showed the token again:\n%s", second)
	}
}
