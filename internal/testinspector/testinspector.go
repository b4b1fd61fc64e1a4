// Package testinspector runs the official MCP Inspector's CLI mode
// (@modelcontextprotocol/inspector-cli, pinned in scripts/npm-deps.sh) as
// a real, external MCP client of hermes in tests: one invocation connects
// over stdio or streamable HTTP, sends one request (tools/list,
// tools/call, ...) and prints the result as JSON. Node or the package
// missing skips the test, or fails it under CI=true (the rule of
// internal/testnpm). It belongs to tests only; nothing in a shipped binary
// imports it.
package testinspector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testnpm"
)

// Package is the npm package of the Inspector's CLI.
const Package = "@modelcontextprotocol/inspector-cli"

// Limit bounds one invocation: node's start, the server's start and one
// request. It is a bound against a hang, not a timing assertion.
const Limit = 120 * time.Second

// Inspector runs the installed Inspector CLI.
type Inspector struct {
	node string
	// index is the CLI proper (build/index.js); the package's bin,
	// build/cli.js, is a launcher that only runs it with `node`.
	index string
	// Env is the environment of every run; nil means the test's own. Over
	// stdio the Inspector hands its environment to the server it starts.
	Env []string
}

// New finds the installed Inspector CLI, skipping the test (failing it
// under CI=true) when node or the package is missing.
func New(t testing.TB) *Inspector {
	t.Helper()
	node, launcher := testnpm.Server(t, Package)
	if node == "" {
		return nil
	}
	index := filepath.Join(filepath.Dir(launcher), "index.js")
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("%s is installed but has no build/index.js (%v); run %s", Package, err, testnpm.InstallCommand)
	}
	return &Inspector{node: node, index: index}
}

// Stdio is the target of a server the Inspector starts itself and talks
// to over its stdin and stdout.
func Stdio(command string, args ...string) []string {
	return append([]string{command}, args...)
}

// HTTP is the target of a streamable HTTP server at url, with the given
// request headers ("Name: value").
func HTTP(url string, headers ...string) []string {
	target := []string{url, "--transport", "http"}
	for _, h := range headers {
		target = append(target, "--header", h)
	}
	return target
}

// Result is the outcome of one invocation.
type Result struct {
	// Stdout is what the Inspector printed: the JSON of the result.
	Stdout []byte
	// Stderr holds the Inspector's diagnostics (and, over stdio, nothing
	// of the server's: it pipes the server's stderr away).
	Stderr []byte
	// Err is the exit status when it was not 0.
	Err error
}

// Exec invokes the Inspector on target (see Stdio and HTTP) with the
// request options args, for example "--method", "tools/list", bounded by
// ctx and Limit. A non-zero exit is in Result.Err; the error return is for
// an Inspector that could not run or did not finish. Unlike Run it does
// not touch a testing.TB, so a goroutine may call it.
func (in *Inspector) Exec(ctx context.Context, target []string, args ...string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, Limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.node, append(append([]string{in.index}, target...), args...)...)
	// The CLI reads its own package.json for its client name by a path
	// it tests relative to the working folder and imports relative to
	// itself; from its build folder the two agree.
	cmd.Dir = filepath.Dir(in.index)
	cmd.Env = in.Env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := Result{Stdout: out.Bytes(), Stderr: errb.Bytes(), Err: err}
	if ctx.Err() != nil {
		return r, fmt.Errorf("the Inspector (%s) did not finish: %w; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), ctx.Err(), r.Stdout, r.Stderr)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return r, fmt.Errorf("running the Inspector: %w", err)
	}
	return r, nil
}

// Run is Exec failing the test when the Inspector could not run or did
// not finish.
func (in *Inspector) Run(t testing.TB, target []string, args ...string) Result {
	t.Helper()
	r, err := in.Exec(context.Background(), target, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Tool is one tool of a tools/list result.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// ListTools runs tools/list and returns the tools, failing the test when
// the Inspector fails.
func (in *Inspector) ListTools(t testing.TB, target []string) []Tool {
	t.Helper()
	r := in.Run(t, target, "--method", "tools/list")
	if r.Err != nil {
		t.Fatalf("Inspector tools/list: %v\nstdout:\n%s\nstderr:\n%s", r.Err, r.Stdout, r.Stderr)
	}
	var res struct {
		Tools []Tool `json:"tools"`
	}
	if err := json.Unmarshal(r.Stdout, &res); err != nil {
		t.Fatalf("Inspector tools/list printed no result: %v\n%s", err, r.Stdout)
	}
	return res.Tools
}

// CallResult is a tools/call result.
type CallResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// Text returns the text of the result's only content item, failing the
// test unless there is exactly one, of type text.
func (c *CallResult) Text(t testing.TB) string {
	t.Helper()
	if len(c.Content) != 1 || c.Content[0].Type != "text" {
		t.Fatalf("want one text content item, got %+v", c.Content)
	}
	return c.Content[0].Text
}

// CallTool runs tools/call of name with arguments given as key=value
// (the Inspector parses a value as JSON when it can, so quote a string
// that looks like a number: message_id="3"). It fails the test when the
// Inspector fails; a tool error is a result with IsError.
func (in *Inspector) CallTool(t testing.TB, target []string, name string, kv ...string) *CallResult {
	t.Helper()
	res, err := in.Run(t, target, CallArgs(name, kv...)...).Call()
	if err != nil {
		t.Fatalf("Inspector tools/call %s %v: %v", name, kv, err)
	}
	return res
}

// CallArgs are the Inspector options of a tools/call of name with
// arguments given as key=value, for Exec.
func CallArgs(name string, kv ...string) []string {
	args := []string{"--method", "tools/call", "--tool-name", name}
	for _, a := range kv {
		args = append(args, "--tool-arg", a)
	}
	return args
}

// Call decodes the tools/call result the Inspector printed; a non-zero
// exit or output that is not a result is an error quoting both streams.
func (r Result) Call() (*CallResult, error) {
	if r.Err != nil {
		return nil, fmt.Errorf("%w\nstdout:\n%s\nstderr:\n%s", r.Err, r.Stdout, r.Stderr)
	}
	var res CallResult
	if err := json.Unmarshal(r.Stdout, &res); err != nil {
		return nil, fmt.Errorf("no tools/call result printed: %w\nstdout:\n%s\nstderr:\n%s", err, r.Stdout, r.Stderr)
	}
	return &res, nil
}
