package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/children"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/logfile"
	"github.com/hermes-agent/hermes/sdk/rawio"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// Shutdown steps of a server that does not exit when its stdin closes.
const (
	stdinCloseGrace = 2 * time.Second
	sigtermGrace    = 2 * time.Second
)

// pipeGrace is how long, once the server has exited, the plugin waits for
// its stdout and stderr to close: a process it left behind may hold them
// open forever.
const pipeGrace = time.Second

// defaultMaxLine bounds one line from the server when the host sends no
// limit.
const defaultMaxLine = 64 << 20

// conn is one running server: a transport.Conn over its stdin and stdout.
type conn struct {
	cfg  transport.Config
	log  hclog.Logger
	host transport.Host

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdinW io.Writer // stdin, written with raw system calls (rawio_linux.go)
	stdout *os.File  // closed by Read at the end
	out    *bufio.Reader
	max    int

	writeMu sync.Mutex
	wbuf    []byte

	tail    *lineTail
	garbage atomic.Pointer[string]
	// long holds a line longer than the reader's buffer as it is read:
	// one buffer, grown fourfold (up to the limit) when full, and handed
	// over as the message itself, never joined. A line costs its own size
	// and, at the last growth, the buffer before it (at most a quarter of
	// the line, but for a line just past a growth); a line over the limit
	// never more than the limit.
	long []byte

	exited  chan struct{} // closed when the process has exited
	exitErr error
	werr    error // what Wait returned, for exitError
	// pid is the server's: cmd's own, or its child when cmd is the init
	// of the server's pid namespace.
	pid int
	// initSaid is how the server ended as the init of its pid namespace
	// reported it (the process the plugin waits for is that init).
	initSaid string
	closing  atomic.Bool

	// sandbox is what the server runs under, nil for none; released
	// once the server has ended. report says what is in force.
	sandbox *sandbox.Launch
	report  *transport.SandboxReport
}

// start starts the server process of cfg: in a pid namespace of its own
// where the kernel gives one, which the first start finds out by trying
// (a start that finds none is made again without).
func start(ctx context.Context, cfg transport.Config, host transport.Host, log hclog.Logger) (*conn, error) {
	c, err := startOnce(ctx, cfg, host, log)
	if errors.Is(err, sandbox.ErrNoPidNS) {
		c, err = startOnce(ctx, cfg, host, log)
	}
	return c, err
}

// startOnce is one attempt of start.
func startOnce(ctx context.Context, cfg transport.Config, host transport.Host, log hclog.Logger) (*conn, error) {
	path, err := lookPath(cfg.Command, envValue(cfg.Env, "PATH"), cfg.Cwd)
	if err != nil {
		return nil, err
	}
	if cfg.Cwd != "" {
		if fi, err := os.Stat(cfg.Cwd); err != nil || !fi.IsDir() {
			return nil, sdk.NewError(sdk.CodeConfig, "cwd %q of server %q is not a folder; fix 'cwd' in config.yaml", cfg.Cwd, cfg.Server)
		}
	}
	var sb *sandbox.Launch
	if cfg.Sandbox != nil {
		if sb, err = sandbox.New(cfg, path, log, sandboxOptions); err != nil {
			return nil, err
		}
	} else {
		// No sandbox: still in a pid namespace of its own where the
		// kernel gives one, so nothing it starts outlives it.
		if sb, err = sandbox.NewInit(cfg, path, log, sandboxOptions); err != nil {
			return nil, err
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
	cmd.WaitDelay = pipeGrace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe for %q: %w", cfg.Command, err)
	}
	// Our own pipe, not StdoutPipe: Wait closes a StdoutPipe as soon as
	// the process exits, which can lose the last lines it wrote (the
	// reader may not have read them yet). This one the reader drains to
	// its end, bounded by pipeGrace after the exit.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe for %q: %w", cfg.Command, err)
	}
	cmd.Stdout = stdoutW
	c := &conn{
		cfg:    cfg,
		log:    log,
		host:   host,
		stdin:  stdin,
		stdinW: rawio.Writer(stdin),
		out:    bufio.NewReaderSize(rawio.Reader(stdout), 256<<10),
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
	if sb != nil {
		err = sb.Wrap(cmd)
	}
	if err == nil {
		if sb != nil {
			err = sb.Start(cmd)
		} else {
			err = children.Start(cmd)
		}
	}
	stdoutW.Close() // the server holds its own copy
	if err == nil && sb != nil {
		if serr := sb.Started(ctx, cmd.Process.Pid); serr != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			children.Reaped(cmd.Process.Pid)
			stdout.Close()
			if logFile != nil {
				logFile.Close()
			}
			sb.Close()
			return nil, serr
		}
		c.sandbox, c.report = sb, sb.Report()
	}
	if err != nil {
		stdout.Close()
		if logFile != nil {
			logFile.Close()
		}
		if sb != nil {
			sb.Close()
			if perr := sb.SpawnFailed(err); errors.Is(perr, sandbox.ErrNoPidNS) {
				return nil, perr
			}
		}
		return nil, sdk.NewError(sdk.CodeOther, "start %q: %v", cfg.Command, err)
	}
	c.stdout = stdout
	c.cmd = cmd
	c.pid = cmd.Process.Pid
	if c.sandbox != nil {
		c.pid = c.sandbox.ServerPid(c.pid)
	}
	log.Debug("server started", "command", cfg.Command, "pid", c.pid)
	go func() {
		// Once the server has exited, whatever it left running (a
		// daemon it double-forked into a session of its own) has been
		// handed to the plugin, its subreaper: it stops with the server,
		// and so lets go of the server's stdout and stderr.
		awaitExit(cmd.Process.Pid)
		if n := killOrphans(); n > 0 {
			log.Debug("killed processes the server left behind", "count", n)
		}
		werr := cmd.Wait()
		children.Reaped(cmd.Process.Pid)
		if logFile != nil {
			logFile.Close()
		}
		if c.sandbox != nil {
			c.initSaid, _ = c.sandbox.ServerExit()
			c.sandbox.Close()
		}
		c.werr = werr
		c.exitErr = c.exitError(werr)
		// What the server wrote is read to the end; a process that
		// still holds its stdout cannot keep the connection open.
		_ = stdout.SetReadDeadline(time.Now().Add(pipeGrace))
		close(c.exited)
		log.Debug("server ended", "reason", c.exitErr)
	}()
	return c, nil
}

// openStderrLog opens the shared server log and writes this start's
// header. The server's lines go through a rate limit (log_lines_per_second,
// bursts of log_burst, from the config; the dropped ones are
// counted in the log) into a file rotated at logfile.DefaultMaxBytes, so a
// server cannot fill the disk through its stderr.
func (c *conn) openStderrLog() io.WriteCloser {
	if c.cfg.StderrLog == "" {
		return nil
	}
	f, err := logfile.Open(c.cfg.StderrLog, logfile.Options{})
	if err != nil {
		c.log.Warn("cannot open server stderr log", "error", err)
		return nil
	}
	// Every line starts with its time and the server's name: servers
	// share the file, and hermes mcp logs NAME picks a server's lines by
	// it.
	stamp := logfile.SourceStamp(c.cfg.Server)
	_, _ = f.Write(append(stamp(nil), "===== starting MCP server '"+c.cfg.Server+"' =====\n"...))
	lines := logfile.NewLineWriter(f, "MCP server '"+c.cfg.Server+"'", logfile.NewLimiter(c.cfg.LogLinesPerSecond, c.cfg.LogBurst))
	lines.Hint = "raise log_lines_per_second or log_burst in its entry in config.yaml"
	lines.Stamp = stamp
	return &stderrLog{file: f, lines: lines}
}

// stderrLog is one server's part of the shared stderr log.
type stderrLog struct {
	file  *logfile.File
	lines *logfile.LineWriter
}

func (l *stderrLog) Write(p []byte) (int, error) { return l.lines.Write(p) }

// Close writes what is left (a last line, the count of dropped lines) and
// closes the file.
func (l *stderrLog) Close() error { _ = l.lines.Close(); return l.file.Close() }

// exitError explains why the server process ended: which process, and
// its status or the signal that killed it.
func (c *conn) exitError(werr error) error {
	if c.closing.Load() {
		return sdk.NewError(sdk.CodeClosed, "server %q was stopped", c.cfg.Server)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q (%s, pid %d) ", c.cfg.Server, c.cfg.Command, c.pid)
	if c.initSaid != "" {
		b.WriteString(c.initSaid)
	} else if ps := c.cmd.ProcessState; ps != nil {
		b.WriteString(sdk.ExitReason(ps))
	} else {
		fmt.Fprintf(&b, "ended: %v", werr)
	}
	if refused := c.sandboxRefused(); refused != "" {
		b.WriteString(refused)
	} else if line := c.tail.last(); line != "" {
		fmt.Fprintf(&b, ": %s", line)
	}
	if g := c.garbage.Load(); g != nil {
		fmt.Fprintf(&b, " (it wrote non-JSON to stdout: %q)", *g)
	}
	return sdk.NewError(sdk.CodeClosed, "%s", b.String())
}

// sandboxRefused says what the sandbox refused a sandboxed server that
// ended, "" when nothing: what the sandbox itself turned away (writable
// paths it could not grant, hosts its proxy refused), and the line of
// the server's stderr that reported a refused operation, in place of its
// last line.
func (c *conn) sandboxRefused() string {
	if c.cfg.Sandbox == nil || c.sandbox == nil {
		return ""
	}
	refused, line := c.sandbox.Refused(), c.tail.denied()
	if len(refused) == 0 && line == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("; the sandbox refused ")
	if len(refused) > 0 {
		b.WriteString(strings.Join(refused, "; "))
	} else {
		b.WriteString("it something (files outside its writable paths are read-only; see sandbox: in its entry)")
	}
	if line != "" {
		fmt.Fprintf(&b, "; the server said: %s", line)
	}
	return b.String()
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
