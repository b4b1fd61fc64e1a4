package main

import (
	"bufio"
	"context"
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
	"github.com/hermes-agent/hermes/sdk/transport"
)

// Shutdown steps of a server that does not exit when its stdin closes.
const (
	stdinCloseGrace = 2 * time.Second
	sigtermGrace    = 2 * time.Second
)

// defaultMaxLine bounds one line from the server when the host sends no
// limit.
const defaultMaxLine = 64 << 20

// conn is one running server: a transport.Conn over its stdin and stdout.
type conn struct {
	cfg  transport.Config
	log  hclog.Logger
	host transport.Host

	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	max   int

	writeMu sync.Mutex
	wbuf    []byte

	tail    *lineTail
	garbage atomic.Pointer[string]
	long    []byte // a line longer than the reader's buffer, being collected

	exited  chan struct{} // closed when the process has exited
	exitErr error
	closing atomic.Bool
}

// start starts the server process of cfg.
func start(_ context.Context, cfg transport.Config, host transport.Host, log hclog.Logger) (*conn, error) {
	path, err := lookPath(cfg.Command, envValue(cfg.Env, "PATH"), cfg.Cwd)
	if err != nil {
		return nil, err
	}
	if cfg.Cwd != "" {
		if fi, err := os.Stat(cfg.Cwd); err != nil || !fi.IsDir() {
			return nil, sdk.NewError(sdk.CodeConfig, "cwd %q of server %q is not a folder; fix 'cwd' in config.yaml", cfg.Cwd, cfg.Server)
		}
	}
	cmd := exec.Command(path, cfg.Args...)
	cmd.Args[0] = cfg.Command
	cmd.Env = cfg.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir = cfg.Cwd
	cmd.SysProcAttr = childSysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe for %q: %w", cfg.Command, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe for %q: %w", cfg.Command, err)
	}
	c := &conn{
		cfg:    cfg,
		log:    log,
		host:   host,
		stdin:  stdin,
		out:    bufio.NewReaderSize(stdout, 256<<10),
		max:    defaultMaxLine,
		tail:   &lineTail{max: 20},
		exited: make(chan struct{}),
	}
	if cfg.MaxMessageBytes > 0 && cfg.MaxMessageBytes < uint64(c.max) {
		c.max = int(cfg.MaxMessageBytes)
	}
	logFile := c.openStderrLog()
	if logFile != nil {
		cmd.Stderr = io.MultiWriter(logFile, c.tail)
	} else {
		cmd.Stderr = c.tail
	}
	if err := cmd.Start(); err != nil {
		if logFile != nil {
			logFile.Close()
		}
		return nil, sdk.NewError(sdk.CodeOther, "start %q: %v", cfg.Command, err)
	}
	c.cmd = cmd
	log.Debug("server started", "command", cfg.Command, "pid", cmd.Process.Pid)
	go func() {
		werr := cmd.Wait()
		if logFile != nil {
			logFile.Close()
		}
		c.exitErr = c.exitError(werr)
		close(c.exited)
		log.Debug("server ended", "reason", c.exitErr)
	}()
	return c, nil
}

// openStderrLog opens the shared server log and writes this start's header.
func (c *conn) openStderrLog() *os.File {
	if c.cfg.StderrLog == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.cfg.StderrLog), 0o700); err != nil {
		c.log.Warn("cannot create log folder", "error", err)
		return nil
	}
	f, err := os.OpenFile(c.cfg.StderrLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		c.log.Warn("cannot open server stderr log", "error", err)
		return nil
	}
	fmt.Fprintf(f, "\n===== [%s] starting MCP server '%s' =====\n", time.Now().Format("2006-01-02 15:04:05"), c.cfg.Server)
	return f
}

// exitError explains why the server process ended.
func (c *conn) exitError(werr error) error {
	if c.closing.Load() {
		return sdk.NewError(sdk.CodeClosed, "server %q was stopped", c.cfg.Server)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q exited", c.cfg.Server)
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
	if line := c.tail.last(); line != "" {
		fmt.Fprintf(&b, ": %s", line)
	}
	if g := c.garbage.Load(); g != nil {
		fmt.Fprintf(&b, " (it wrote non-JSON to stdout: %q)", *g)
	}
	return sdk.NewError(sdk.CodeClosed, "%s", b.String())
}

// Close stops the server: stdin closed, then SIGTERM, then SIGKILL, each
// after a grace; it returns once the process has exited.
func (c *conn) Close() error {
	c.closing.Store(true)
	c.writeMu.Lock()
	_ = c.stdin.Close()
	c.writeMu.Unlock()
	select {
	case <-c.exited:
		return nil
	case <-time.After(stdinCloseGrace):
	}
	c.log.Debug("server still running after stdin closed; sending SIGTERM")
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		return nil
	case <-time.After(sigtermGrace):
	}
	c.log.Debug("server ignored SIGTERM; killing it")
	_ = c.cmd.Process.Kill()
	<-c.exited
	return nil
}
