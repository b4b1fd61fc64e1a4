package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Shutdown steps of a server that does not exit when its stdin closes.
const (
	stdinCloseGrace = 2 * time.Second
	sigtermGrace    = 2 * time.Second
)

// stdio is an MCP transport over a child process's stdin and stdout.
type stdio struct {
	cfg sdk.TransportConfig
	log hclog.Logger

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	writeMu sync.Mutex

	mu      sync.Mutex
	pending map[string]func(*transport.JSONRPCResponse, error)

	sdk.Handlers
	warnMu sync.Mutex
	onWarn func(*sdk.Error)

	tail    *lineTail
	garbage atomic.Pointer[string]

	done     chan struct{}
	doneOnce sync.Once
	err      error
	closing  atomic.Bool
}

func newStdio(cfg sdk.TransportConfig, log hclog.Logger) *stdio {
	return &stdio{
		cfg:     cfg,
		log:     log,
		pending: map[string]func(*transport.JSONRPCResponse, error){},
		tail:    &lineTail{max: 20},
		done:    make(chan struct{}),
	}
}

// Start starts the server process. ctx lives as long as the plugin.
func (s *stdio) Start(ctx context.Context) error {
	path, err := lookPath(s.cfg.Command, envValue(s.cfg.Env, "PATH"), s.cfg.Cwd)
	if err != nil {
		return err
	}
	if s.cfg.Cwd != "" {
		if fi, err := os.Stat(s.cfg.Cwd); err != nil || !fi.IsDir() {
			return sdk.NewError(sdk.CodeConfig, "cwd %q of server %q is not a folder; fix 'cwd' in config.yaml", s.cfg.Cwd, s.cfg.Server)
		}
	}
	cmd := exec.Command(path, s.cfg.Args...)
	cmd.Args[0] = s.cfg.Command
	cmd.Env = s.cfg.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir = s.cfg.Cwd
	cmd.SysProcAttr = childSysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("stdin pipe for %q: %w", s.cfg.Command, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("stdout pipe for %q: %w", s.cfg.Command, err)
	}
	logFile := s.openStderrLog()
	var stderrDst io.Writer = s.tail
	if logFile != nil {
		stderrDst = io.MultiWriter(logFile, s.tail)
	}
	cmd.Stderr = stderrDst
	if err := cmd.Start(); err != nil {
		if logFile != nil {
			logFile.Close()
		}
		return sdk.NewError(sdk.CodeOther, "start %q: %v", s.cfg.Command, err)
	}
	s.cmd = cmd
	s.stdin = stdin
	s.log.Debug("server started", "command", s.cfg.Command, "pid", cmd.Process.Pid)
	readerDone := make(chan struct{})
	go func() {
		s.readLoop(stdout)
		close(readerDone)
	}()
	go func() {
		werr := cmd.Wait()
		<-readerDone
		if logFile != nil {
			logFile.Close()
		}
		s.finish(s.exitError(werr))
	}()
	return nil
}

// openStderrLog opens the shared server log and writes this start's header.
func (s *stdio) openStderrLog() *os.File {
	if s.cfg.StderrLog == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.cfg.StderrLog), 0o700); err != nil {
		s.log.Warn("cannot create log folder", "error", err)
		return nil
	}
	f, err := os.OpenFile(s.cfg.StderrLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		s.log.Warn("cannot open server stderr log", "error", err)
		return nil
	}
	fmt.Fprintf(f, "\n===== [%s] starting MCP server '%s' =====\n", time.Now().Format("2006-01-02 15:04:05"), s.cfg.Server)
	return f
}

// exitError explains why the server process ended.
func (s *stdio) exitError(werr error) error {
	if s.closing.Load() {
		return sdk.NewError(sdk.CodeClosed, "server %q was stopped", s.cfg.Server)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q exited", s.cfg.Server)
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			fmt.Fprintf(&b, " (killed by %s)", st.Signal())
		} else {
			fmt.Fprintf(&b, " with status %d", ee.ExitCode())
		}
	} else if werr == nil {
		b.WriteString(" with status 0")
	}
	if line := s.tail.last(); line != "" {
		fmt.Fprintf(&b, ": %s", line)
	}
	if g := s.garbage.Load(); g != nil {
		fmt.Fprintf(&b, " (it wrote non-JSON to stdout: %q)", *g)
	}
	return sdk.NewError(sdk.CodeClosed, "%s", b.String())
}

// incoming is any JSON-RPC message from the server.
type incoming struct {
	ID     *mcp.RequestId           `json:"id,omitempty"`
	Method string                   `json:"method,omitempty"`
	Params json.RawMessage          `json:"params,omitempty"`
	Result json.RawMessage          `json:"result,omitempty"`
	Error  *mcp.JSONRPCErrorDetails `json:"error,omitempty"`
}

func (s *stdio) readLoop(stdout io.Reader) {
	r := bufio.NewReaderSize(stdout, 256<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.handleLine(line)
		}
		if err != nil {
			return
		}
	}
}

func (s *stdio) handleLine(line []byte) {
	var m incoming
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &m) != nil {
		s.noteGarbage(trimmed)
		return
	}
	switch {
	case m.Method != "" && m.ID == nil:
		var n mcp.JSONRPCNotification
		if json.Unmarshal(trimmed, &n) != nil {
			s.noteGarbage(trimmed)
			return
		}
		h := s.Notification()
		if h != nil {
			h(n)
		}
	case m.Method != "":
		go s.serveRequest(m)
	case m.ID != nil:
		key := m.ID.String()
		s.mu.Lock()
		done, ok := s.pending[key]
		delete(s.pending, key)
		s.mu.Unlock()
		if ok {
			done(&transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: *m.ID, Result: m.Result, Error: m.Error}, nil)
		}
	default:
		s.noteGarbage(trimmed)
	}
}

// noteGarbage remembers the first non-JSON-RPC line and warns the host once.
func (s *stdio) noteGarbage(line []byte) {
	text := string(line)
	if len(text) > 120 {
		text = text[:120] + "..."
	}
	if !s.garbage.CompareAndSwap(nil, &text) {
		return
	}
	s.warnMu.Lock()
	w := s.onWarn
	s.warnMu.Unlock()
	if w != nil {
		w(sdk.NewError(sdk.CodeGarbage, "MCP server %q wrote non-JSON to stdout: %q; a stdio server must write only JSON-RPC there and log to stderr", s.cfg.Server, text))
	}
}

// serveRequest answers a server-to-client request with the host's handler.
func (s *stdio) serveRequest(m incoming) {
	h := s.Request()
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: *m.ID, Method: m.Method}
	if len(m.Params) > 0 {
		req.Params = m.Params
	}
	var resp *transport.JSONRPCResponse
	if h == nil {
		resp = &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: *m.ID,
			Error: &mcp.JSONRPCErrorDetails{Code: mcp.METHOD_NOT_FOUND, Message: "method not supported: " + m.Method}}
	} else {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-s.done:
			case <-ctx.Done():
			}
			cancel()
		}()
		r, err := h(ctx, req)
		cancel()
		if err != nil {
			r = &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: *m.ID,
				Error: &mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: err.Error()}}
		}
		resp = r
	}
	if resp == nil {
		return
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return
	}
	_ = s.writeLine(b)
}

func (s *stdio) writeLine(b []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.stdin == nil {
		return sdk.NewError(sdk.CodeClosed, "server %q is not running", s.cfg.Server)
	}
	b = append(b, '\n')
	if _, err := s.stdin.Write(b); err != nil {
		return sdk.NewError(sdk.CodeClosed, "write to server %q: %v", s.cfg.Server, err)
	}
	return nil
}

// SendRequest writes a request and waits for the response with its id.
func (s *stdio) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	type result struct {
		resp *transport.JSONRPCResponse
		err  error
	}
	ch := make(chan result, 1)
	s.SendRequestAsync(ctx, req, func(r *transport.JSONRPCResponse, err error) { ch <- result{r, err} })
	r := <-ch
	return r.resp, r.err
}

// SendRequestAsync writes a request and calls done with its response, from
// the stdout reader (sdk.AsyncSender): no goroutine hand-off per call.
func (s *stdio) SendRequestAsync(ctx context.Context, req transport.JSONRPCRequest, done func(*transport.JSONRPCResponse, error)) {
	select {
	case <-s.done:
		done(nil, s.err)
		return
	default:
	}
	b, err := json.Marshal(req)
	if err != nil {
		done(nil, fmt.Errorf("encode %s: %w", req.Method, err))
		return
	}
	key := req.ID.String()
	var once sync.Once
	finish := func(r *transport.JSONRPCResponse, err error) { once.Do(func() { done(r, err) }) }
	// take removes the pending entry; whoever takes it answers.
	take := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.pending[key]; !ok {
			return false
		}
		delete(s.pending, key)
		return true
	}
	// stop unregisters the cancellation watcher once answered; set after
	// the request is written, so it is guarded.
	var stopMu sync.Mutex
	var stop func() bool
	s.mu.Lock()
	s.pending[key] = func(r *transport.JSONRPCResponse, err error) {
		stopMu.Lock()
		st := stop
		stopMu.Unlock()
		if st != nil {
			st()
		}
		finish(r, err)
	}
	s.mu.Unlock()
	if err := s.writeLine(b); err != nil {
		if take() {
			finish(nil, err)
		}
		return
	}
	if ctx.Done() != nil {
		st := context.AfterFunc(ctx, func() {
			if take() {
				finish(nil, ctx.Err())
			}
		})
		stopMu.Lock()
		stop = st
		stopMu.Unlock()
	}
}

// SendNotification writes a notification.
func (s *stdio) SendNotification(_ context.Context, n mcp.JSONRPCNotification) error {
	select {
	case <-s.done:
		return s.err
	default:
	}
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode %s: %w", n.Method, err)
	}
	return s.writeLine(b)
}

// SetWarningHandler sets where warnings go (sdk.Warner).
func (s *stdio) SetWarningHandler(h func(*sdk.Error)) {
	s.warnMu.Lock()
	s.onWarn = h
	s.warnMu.Unlock()
}

// GetSessionId returns "": stdio has no sessions.
func (s *stdio) GetSessionId() string { return "" }

// Done is closed when the server process has exited (sdk.Watched).
func (s *stdio) Done() <-chan struct{} { return s.done }

// Err says why the server process ended.
func (s *stdio) Err() error { return s.err }

// Close stops the server: stdin closed, then SIGTERM, then SIGKILL.
func (s *stdio) Close() error {
	if s.cmd == nil || s.cmd.Process == nil {
		s.finish(sdk.NewError(sdk.CodeClosed, "server %q was stopped", s.cfg.Server))
		return nil
	}
	s.closing.Store(true)
	s.writeMu.Lock()
	_ = s.stdin.Close()
	s.writeMu.Unlock()
	select {
	case <-s.done:
		return nil
	case <-time.After(stdinCloseGrace):
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(sigtermGrace):
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	return nil
}

func (s *stdio) finish(err error) {
	s.doneOnce.Do(func() {
		s.err = err
		close(s.done)
		s.mu.Lock()
		pending := s.pending
		s.pending = map[string]func(*transport.JSONRPCResponse, error){}
		s.mu.Unlock()
		for _, done := range pending {
			done(nil, err)
		}
		s.log.Debug("server ended", "reason", err)
	})
}

// lineTail keeps the last lines written to it (the server's stderr), for
// error messages.
type lineTail struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial []byte
}

func (t *lineTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
		if line == "" {
			continue
		}
		if len(line) > 300 {
			line = line[:300] + "..."
		}
		t.lines = append(t.lines, line)
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	if len(t.partial) > 4096 {
		t.partial = t.partial[len(t.partial)-4096:]
	}
	return len(p), nil
}

// last returns the last non-empty line, including an unterminated one.
func (t *lineTail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := strings.TrimSpace(string(t.partial)); p != "" {
		return p
	}
	if len(t.lines) == 0 {
		return ""
	}
	return t.lines[len(t.lines)-1]
}

// envValue returns the value of key in a KEY=value list.
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// lookPath finds command on the child's PATH (not the plugin's), so the
// server runs exactly what its own environment names.
func lookPath(command, pathEnv, cwd string) (string, error) {
	if command == "" {
		return "", sdk.NewError(sdk.CodeConfig, "no command given; set 'command' in config.yaml")
	}
	if strings.Contains(command, "/") {
		p := command
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		if isExecutable(p) {
			return p, nil
		}
		return "", notFound(command, "")
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, command)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", notFound(command, pathEnv)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// notFound builds the missing-executable error with a hint for well-known
// launchers.
func notFound(command, pathEnv string) error {
	hint := "install it or set 'command' to its full path"
	switch filepath.Base(command) {
	case "npx", "npm", "node":
		hint = "install Node.js (it provides node, npm and npx) or set 'command' to its full path"
	case "uvx", "uv":
		hint = "install uv (https://docs.astral.sh/uv/) or set 'command' to its full path"
	case "python", "python3", "pip":
		hint = "install Python 3 or set 'command' to its full path"
	case "docker", "podman":
		hint = "install " + filepath.Base(command) + " or set 'command' to its full path"
	}
	where := "on PATH"
	if strings.Contains(command, "/") {
		where = "(no such executable file)"
	}
	_ = pathEnv
	return sdk.NewError(sdk.CodeNotFound, "missing executable '%s' %s; %s", command, where, hint)
}
