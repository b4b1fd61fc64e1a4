package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Bounds of what an install runs. A manifest and the repository it names
// are hostile input: every command is bounded in time, and what it prints
// is shown escaped and only up to a limit.
const (
	// DefaultStepTimeout bounds each bootstrap step
	// (hermes mcp install --step-timeout).
	DefaultStepTimeout = 10 * time.Minute
	// DefaultCloneTimeout bounds the clone and checkout
	// (hermes mcp install --clone-timeout).
	DefaultCloneTimeout = 5 * time.Minute
	// maxShownOutput is how much of one command's output is shown; the
	// rest is read and dropped.
	maxShownOutput = 256 << 10
	// maxLine cuts a longer line of output.
	maxLine = 4 << 10
	// outputGrace is how long, after a command ended and its group was
	// killed, its output may take to close (a process that left the group
	// may hold it open).
	outputGrace = 2 * time.Second
)

// errTimedOut marks a command stopped at its time limit.
var errTimedOut = errors.New("timed out")

// installCmd is one process an install runs: git or a bootstrap step.
type installCmd struct {
	argv    []string
	dir     string
	env     []string
	timeout time.Duration
	// line receives each line of output (stdout and stderr merged),
	// without its end; nil drops the output.
	line func(string)
}

// run runs c in its own process group, recorded in the journal while it
// runs, and returns its exit code. The group is killed when the command
// ends (nothing it started keeps running), at its timeout (errTimedOut)
// and when ctx ends (ctx's error).
func (t *txn) run(ctx context.Context, c installCmd) (int, error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	cmd.Stdin = nil // /dev/null: nothing may wait for an answer
	cmd.SysProcAttr = installSysProcAttr()
	pr, pw, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return -1, err
	}
	pw.Close()
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
	if err := t.setProc(&journalProc{PGID: pgid, Start: procStart(pgid), Limit: int64(c.timeout / time.Second)}); err != nil {
		killGroup()
		_ = cmd.Wait()
		pr.Close()
		return -1, err
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		readLines(pr, c.line)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	var stopped error
	var werr error
	select {
	case werr = <-waited:
	case <-timer.C:
		stopped = errTimedOut
		killGroup()
		werr = <-waited
	case <-ctx.Done():
		stopped = ctx.Err()
		killGroup()
		werr = <-waited
	}
	// Whatever the command left running in its group goes with it.
	killGroup()
	select {
	case <-readDone:
	case <-time.After(outputGrace):
		pr.Close()
		<-readDone
	}
	pr.Close()
	if err := t.setProc(nil); err != nil {
		return -1, err
	}
	if stopped != nil {
		return -1, stopped
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	if werr != nil {
		return -1, werr
	}
	return 0, nil
}

// readLines splits r into lines at "\n" or "\r" (a progress bar redraws
// its line with "\r"), drops empty ones, cuts long ones, and hands them to
// line until maxShownOutput bytes were shown; the rest is read and
// dropped, with one line saying so.
func readLines(r io.Reader, line func(string)) {
	if line == nil {
		_, _ = io.Copy(io.Discard, r)
		return
	}
	buf := make([]byte, 32<<10)
	var cur []byte
	long := false
	shown := 0
	emit := func() {
		if len(cur) == 0 {
			long = false
			return
		}
		if shown <= maxShownOutput {
			shown += len(cur)
			if shown > maxShownOutput {
				line("(more output not shown: over 256 KiB)")
			} else {
				s := string(cur)
				if long {
					s += " …"
				}
				line(s)
			}
		}
		cur, long = cur[:0], false
	}
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			switch {
			case b == '\n' || b == '\r':
				emit()
			case len(cur) >= maxLine:
				long = true
			default:
				cur = append(cur, b)
			}
		}
		if err != nil {
			emit()
			return
		}
	}
}

// outputTail keeps the last n lines it is given.
type outputTail struct {
	n     int
	lines []string
}

func (t *outputTail) add(s string) {
	t.lines = append(t.lines, s)
	if len(t.lines) > t.n {
		t.lines = t.lines[1:]
	}
}

func (t *outputTail) last() string {
	for i := len(t.lines) - 1; i >= 0; i-- {
		if s := string(bytes.TrimSpace([]byte(t.lines[i]))); s != "" {
			return s
		}
	}
	return ""
}

// timeoutError says which limit stopped a command and how to raise it.
func timeoutError(what string, limit time.Duration, flag string) error {
	return fmt.Errorf("%s timed out after %s; raise the limit with %s (e.g. %s %s)", what, limit, flag, flag, 3*limit)
}
