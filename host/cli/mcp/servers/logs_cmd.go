package servers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/urfave/cli/v3"

	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/sdk/logfile"
)

// Log files 'hermes mcp logs' reads, in $HERMES_HOME/logs: what stdio
// servers write to stderr (each line stamped with its time and server by
// the stdio plugin) and hermes's own log.
const (
	ServerLogFile = "mcp-stderr.log"
	HostLogFile   = "hermes.log"
)

// DefaultLogLines is how many lines 'hermes mcp logs' shows by default.
const DefaultLogLines = 50

// MaxLogLines bounds --lines: the lines kept while the files are read.
const MaxLogLines = 100000

// FollowEvery is how often 'hermes mcp logs -f' looks for new lines (and
// for a rotated file), as tail -F does.
const FollowEvery = 200 * time.Millisecond

const LogsDescription = `Shows the last lines a server wrote to its stderr (stdio servers) and
hermes's own log lines about it, oldest first, from the log files hermes
keeps in $HERMES_HOME/logs (mcp-stderr.log and hermes.log, and their
rotated copies). Everything is escaped for the terminal.

With -f, keeps showing new lines as they are written, across a rotation
of the files, until Ctrl-C.`

// LogsOptions is what 'hermes mcp logs' needs.
type LogsOptions struct {
	Env *cmdkit.Env
	// Name is the server whose lines to show.
	Name string
	// Follow is -f: keep showing new lines until ctx ends.
	Follow bool
	// Lines is --lines: how many of the last lines to show.
	Lines int
}

// NewCmdLogs is 'hermes mcp logs NAME [-f] [--lines N]'. runF, when not
// nil, is called with the options in place of the work (the tests' seam).
func NewCmdLogs(e *cmdkit.Env, runF func(context.Context, *LogsOptions) error) *cli.Command {
	opts := &LogsOptions{Env: e}
	return &cli.Command{
		Name:        "logs",
		Usage:       "show a server's stderr and hermes's log lines about it",
		ArgsUsage:   "<name>",
		Description: LogsDescription,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep showing new lines until Ctrl-C", Destination: &opts.Follow},
			&cli.IntFlag{Name: "lines", Aliases: []string{"n"}, Value: DefaultLogLines, Usage: fmt.Sprintf("show the last `N` lines (at most %d)", MaxLogLines), Destination: &opts.Lines},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp logs <name> [-f] [--lines N]; see the servers with: hermes mcp list")
			}
			if opts.Lines < 0 || opts.Lines > MaxLogLines {
				return cmdkit.Usagef("--lines must be between 0 and %d, e.g. --lines 200", MaxLogLines)
			}
			opts.Name = c.Args().First()
			if runF != nil {
				return runF(ctx, opts)
			}
			return logsRun(ctx, opts)
		},
	}
}

// logsRun checks that the server is one hermes runs here, then shows its
// lines.
func logsRun(ctx context.Context, opts *LogsOptions) error {
	e, name := opts.Env, opts.Name
	// Any server hermes runs here, a project's too.
	cfg, err := e.F.Config()
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	if cfg.SafeMode {
		if err := cmdkit.RequireServer(e, name); err != nil {
			return err
		}
	} else if cfg.Server(name) == nil {
		return cmdkit.NotFound(name, cfg.Names())
	}
	return ShowLogs(e, ctx, name, opts.Lines, opts.Follow)
}

// LogLine is one line of a log about a server, with the time it starts
// with (zero when it has none: it keeps its place after the line before).
type LogLine struct {
	t    time.Time
	text string
}

// ShowLogs prints the last n lines about name, then follows the files when
// follow is set.
func ShowLogs(e *cmdkit.Env, ctx context.Context, name string, n int, follow bool) error {
	dir := e.F.Home.Logs()
	m := LogMatcher{name: name}
	var all []LogLine
	all = append(m.tail(filepath.Join(dir, HostLogFile), false, n), m.tail(filepath.Join(dir, ServerLogFile), true, n)...)
	// Both files start each line with a time: merged, oldest first.
	sort.SliceStable(all, func(i, j int) bool { return all[i].t.Before(all[j].t) })
	if len(all) > n {
		all = all[len(all)-n:]
	}
	for _, l := range all {
		fmt.Fprintln(e.Out, termsafe.Escape(l.text))
	}
	if len(all) == 0 && !follow {
		e.P.Info("No log lines about '%s' yet in %s; they are written once it runs (try: hermes mcp test %s)", name, dir, name)
		return nil
	}
	if !follow {
		return nil
	}
	return m.follow(ctx, e.Out, []*FileTail{{path: filepath.Join(dir, HostLogFile)}, {path: filepath.Join(dir, ServerLogFile), stderr: true}})
}

// LogMatcher picks the lines about one server.
type LogMatcher struct{ name string }

// match returns the line of a log file as shown when it is about the
// server, and its time. In mcp-stderr.log (stderr true): a line the stdio
// plugin stamped with the server's name. In hermes.log: a line whose
// logger is the server's (hermes.mcp.NAME, hermes.NAME and their
// sub-loggers) or that names it (server=NAME).
func (m LogMatcher) match(line string, stderr bool) (LogLine, bool) {
	if stderr {
		t, source, text, ok := logfile.ParseStamped(line)
		if !ok || source != m.name {
			return LogLine{}, false
		}
		return LogLine{t: t, text: t.Format(logfile.TimeLayout) + " [stderr] " + text}, true
	}
	// hclog: "<time> [LEVEL] <logger>: <message> key=value..."
	ts, rest, ok := strings.Cut(line, " ")
	if !ok {
		return LogLine{}, false
	}
	t, err := time.Parse(logfile.TimeLayout, ts)
	if err != nil {
		return LogLine{}, false
	}
	_, rest, ok = strings.Cut(rest, "]")
	if !ok {
		return LogLine{}, false
	}
	logger, msg, _ := strings.Cut(strings.TrimLeft(rest, " "), ": ")
	for _, own := range []string{"hermes.mcp." + m.name, "hermes." + m.name} {
		if logger == own || strings.HasPrefix(logger, own+".") {
			return LogLine{t: t, text: line}, true
		}
	}
	for _, field := range strings.Fields(msg) {
		if field == "server="+m.name || field == `server="`+m.name+`"` {
			return LogLine{t: t, text: line}, true
		}
	}
	return LogLine{}, false
}

// tail returns the last n lines about the server in the log file path and
// its rotated copies (path.3, the oldest, to path).
func (m LogMatcher) tail(path string, stderr bool, n int) []LogLine {
	var ring []LogLine
	for i := logfile.DefaultBackups; i >= 0; i-- {
		p := path
		if i > 0 {
			p = fmt.Sprintf("%s.%d", path, i)
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		EachLine(f, func(line string) {
			if l, ok := m.match(line, stderr); ok {
				ring = append(ring, l)
				if len(ring) > 2*n+64 {
					ring = append(ring[:0], ring[len(ring)-n:]...)
				}
			}
		})
		f.Close()
	}
	if len(ring) > n {
		ring = ring[len(ring)-n:]
	}
	return ring
}

// MaxLogLineBytes bounds one line read from a log file; past it the line
// is cut (the files' writers cut lines well before).
const MaxLogLineBytes = 64 << 10

// EachLine calls fn with each whole line of r, without its newline.
func EachLine(r io.Reader, fn func(string)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long) < MaxLogLineBytes {
				long = append(long, chunk...)
			}
			continue
		}
		if len(chunk) > 0 && (err == nil || len(long) > 0) {
			long = append(long, chunk...)
			fn(strings.TrimRight(string(long), "\r\n"))
			long = long[:0]
		}
		if err != nil {
			return
		}
	}
}

// follow shows the new lines about the server in the files of tails as
// they are written, until ctx ends. A file that is rotated (renamed to
// path.1, a new one started) is read to its end, then the new one from
// its start; a file that shrinks is read again from its start.
func (m LogMatcher) follow(ctx context.Context, out io.Writer, tails []*FileTail) error {
	for _, t := range tails {
		t.open(true)
	}
	defer func() {
		for _, t := range tails {
			t.close()
		}
	}()
	tick := time.NewTicker(FollowEvery)
	defer tick.Stop()
	for {
		for _, t := range tails {
			t.poll(func(line string) {
				if l, ok := m.match(line, t.stderr); ok {
					fmt.Fprintln(out, termsafe.Escape(l.text))
				}
			})
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// FileTail is one log file followed: the file open, and the start of a
// line not ended yet.
type FileTail struct {
	path string
	// stderr: the file is mcp-stderr.log (else hermes.log).
	stderr  bool
	f       *os.File
	partial []byte
}

// open opens the file at path, at its end when atEnd (the lines before
// were shown already), else at its start.
func (t *FileTail) open(atEnd bool) {
	f, err := os.Open(t.path)
	if err != nil {
		return
	}
	if atEnd {
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			f.Close()
			return
		}
	}
	t.f, t.partial = f, nil
}

func (t *FileTail) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// poll passes the whole lines written since the last poll to fn, and
// moves to the new file when the one open was rotated away.
func (t *FileTail) poll(fn func(string)) {
	if t.f == nil {
		t.open(false)
		if t.f == nil {
			return
		}
	}
	t.read(fn)
	cur, err := os.Stat(t.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	mine, merr := t.f.Stat()
	switch {
	case merr != nil:
		return
	case err == nil && !os.SameFile(cur, mine):
		// Rotated: what was written to the old file before the rename
		// was read above; the new file is read from its start.
		t.read(fn)
		t.close()
		t.open(false)
		t.read(fn)
	case err == nil:
		if off, serr := t.f.Seek(0, io.SeekCurrent); serr == nil && cur.Size() < off {
			// Truncated: read it again from the start.
			_, _ = t.f.Seek(0, io.SeekStart)
			t.partial = nil
		}
	}
}

// read reads the open file to its end, passing whole lines to fn.
func (t *FileTail) read(fn func(string)) {
	buf := make([]byte, 64<<10)
	for {
		n, err := t.f.Read(buf)
		data := buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if len(t.partial) < MaxLogLineBytes {
					t.partial = append(t.partial, data...)
				}
				break
			}
			line := append(t.partial, data[:i]...)
			t.partial = nil
			fn(strings.TrimRight(string(line), "\r"))
			data = data[i+1:]
		}
		if err != nil || n == 0 {
			return
		}
	}
}
