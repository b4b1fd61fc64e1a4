// Package cli owns the hermes command line as a whole: Main and Run, the
// run's signals and exit code, the tree of commands and its help and
// completion. Each command lives in a package by noun (chat, tools,
// modelcmd, mcp/...), takes what it shares with the others from cmdkit and
// its parts from the run's composition root (host/app).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-agent/hermes/host/cli/mcp/servers"

	"github.com/hermes-agent/hermes/host/cli/mcp/calls"

	"github.com/hermes-agent/hermes/host/cli/mcp/add"

	"github.com/hermes-agent/hermes/host/cli/mcp/catalogcmd"

	"github.com/hermes-agent/hermes/host/cli/mcp/login"

	"github.com/hermes-agent/hermes/host/cli/mcp/gatewaycmd"
	"github.com/hermes-agent/hermes/host/cli/mcp/servecmd"

	"github.com/hermes-agent/hermes/host/cli/tools"

	"github.com/hermes-agent/hermes/host/cli/modelcmd"

	"github.com/hermes-agent/hermes/host/cli/chat"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
)

// Main runs the hermes command line as the process hermes: the process's
// environment, working folder and signals, and os.Stderr and the standard
// logger routed into hermes's log. It returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return Run(Options{
		Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Env: os.Environ(), Signals: sigs, OwnsProcess: true,
	})
}

// Options is everything one run of the command line takes from outside:
// a process passes its own (Main), a test passes its own to run commands
// in process, side by side.
type Options struct {
	// Args are the command line, the program name first.
	Args []string
	// Stdin, Stdout and Stderr are the streams; a nil Stdin reads nothing.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Env is the environment hermes reads ("KEY=value"; the last of a
	// key wins): HERMES_HOME, HERMES_PLUGIN_PATH, HERMES_SAFE_MODE,
	// HERMES_OPTIONAL_MCPS, NO_COLOR, TERM, COLUMNS, BROWSER, the display
	// and SSH variables, PATH, and the values an install asks for.
	Env []string
	// Dir is the working folder relative paths and imports start from;
	// "" is the process's.
	Dir string
	// Signals, when not nil, delivers SIGINT and SIGTERM: the first
	// cancels the command and stops every plugin, a second ends the run.
	Signals <-chan os.Signal
	// OwnsProcess routes what go-plugin writes to os.Stderr, and the
	// standard logger, into this run's log. Only the process's one run
	// may: both are process-wide.
	OwnsProcess bool
}

// Run runs the hermes command line with opts and returns the exit code.
func Run(opts Options) int {
	stdin := opts.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	stdout, stderr := opts.Stdout, opts.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	input, in := cmdkit.NewInput(stdin)
	e := &cmdkit.Env{In: in, Input: input, Out: stdout, Err: stderr, Opts: cmdkit.RunOptions{Env: opts.Env, Dir: opts.Dir, OwnsProcess: opts.OwnsProcess}}
	e.P = ui.NewEnv(stdout, stderr, in, cmdkit.Getter(e))
	defer cmdkit.CloseRun(e)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := opts.Signals
	// interrupted is closed on the first SIGINT/SIGTERM, again on the
	// second; got is the first signal.
	interrupted, again := make(chan struct{}), make(chan struct{})
	var got os.Signal
	go func() {
		// On SIGINT/SIGTERM cancel the command and kill every plugin
		// (plugins ignore SIGINT), also those a finished command left to
		// stop their servers. A normal return kills nothing detached.
		// A nil sigs never delivers.
		// A signal the command's hook takes (hermes chat cancelling its
		// turn) is not the run's.
		for {
			var sig os.Signal
			select {
			case sig = <-sigs:
			case <-ctx.Done():
				return
			}
			if h := e.OnSignal.Load(); h != nil && h.Fn(sig) {
				continue
			}
			got = sig
			break
		}
		e.Interrupted.Store(true) // before cancel: close sees it
		cancel()
		if sup := cmdkit.RunSupervisor(e); sup != nil {
			sup.Interrupt()
		}
		close(interrupted)
		select {
		case <-sigs:
			close(again)
		case <-ctx.Done():
		}
	}()

	// The command runs beside the signal wait: a step that does not watch
	// ctx (reading a config file that never ends, a parse) must not keep
	// hermes alive after a signal. The command gets interruptGrace to
	// finish on its own; a second signal ends hermes at once.
	app := newApp(e)
	done := make(chan error, 1)
	args := opts.Args
	if len(args) == 0 {
		args = []string{"hermes"}
	}
	args = helpAfterArguments(app, args)
	go func() { done <- app.Run(ctx, args) }()
	var err error
	select {
	case err = <-done:
		if e.Interrupted.Load() {
			// The signal cancelled the command, which returned before
			// the signal wait closed interrupted; it closes it right
			// after setting the flag, and got is set by then.
			<-interrupted
			err = afterInterrupt(err, got)
		}
	case <-interrupted:
		grace := time.NewTimer(interruptGrace)
		defer grace.Stop()
		select {
		case err = <-done:
			err = afterInterrupt(err, got)
		case <-grace.C:
			err = interruptedError(got)
		case <-again:
			err = interruptedError(got)
		}
	}
	if err == nil {
		return cmdkit.ExitOK
	}
	var ee *cmdkit.ExitError
	if errors.As(err, &ee) {
		if ee.Msg != "" {
			e.P.Errorf("%s", ee.Msg)
		}
		return ee.Code
	}
	// urfave/cli's own errors are about usage (unknown flag, missing value).
	e.P.Errorf("%s; run 'hermes --help' for usage", cmdkit.OneLine(err.Error()))
	return cmdkit.ExitUsage
}

// interruptGrace is how long a command may take to return after SIGINT or
// SIGTERM cancelled it before hermes exits without it.
const interruptGrace = 2 * time.Second

// interruptedError is the exit of a command that did not return in time
// after sig: 128 + the signal number, as shells report it.
func interruptedError(sig os.Signal) error {
	code := 130
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	return &cmdkit.ExitError{Code: code, Msg: fmt.Sprintf("Interrupted (%v)", sig)}
}

// afterInterrupt is the result of a command that returned err after sig
// interrupted it: a command that failed because it was interrupted ends as
// an interrupted command does (130 for Ctrl-C), not with exit 1 and
// "context canceled" or "the caller cancelled it"; a success, a usage
// error or a command's own code stay what they are.
func afterInterrupt(err error, sig os.Signal) error {
	if err != nil && !errors.As(err, new(*cmdkit.ExitError)) || isFailExit(err) {
		return interruptedError(sig)
	}
	return err
}

// isFailExit reports whether err is a command's plain failure (exit 1):
// after an interruption, that is the interruption (a usage error or a
// command's own code stay what they are).
func isFailExit(err error) bool {
	var ee *cmdkit.ExitError
	return errors.As(err, &ee) && ee.Code == cmdkit.ExitFail
}

func newApp(e *cmdkit.Env) *cli.Command {
	return withCompletion(e, argumentsFirst(&cli.Command{
		Name:                  "hermes",
		Usage:                 "connect an agent to MCP servers, each in its own plugin process",
		EnableShellCompletion: true,
		Writer:                e.Out,
		ErrWriter:             e.Err,
		Reader:                e.In,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "mirror logs on stderr", Destination: &e.Verbose},
			&cli.BoolFlag{Name: "version", Usage: "print the version and exit"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			switch {
			case c.Bool("version"):
				return printVersion(e, false)
			case c.Args().Len() > 0:
				return cmdkit.UnknownCommand(c, c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		Before: func(ctx context.Context, c *cli.Command) (context.Context, error) {
			if c.Bool("version") && c.Args().Len() == 0 {
				// hermes --version touches no file: no log, no home.
				return ctx, nil
			}
			cmdkit.Setup(e)
			// Every command sees config.yaml, .env and the install
			// folders whole: what a killed install left is put back
			// first (installs still running hold their lock and are
			// left alone).
			return catalogcmd.RecoverInstalls(e, ctx, c)
		},
		Commands: []*cli.Command{
			mcpCommand(e),
			tools.NewCmdTools(e, nil),
			chat.NewCmdChat(e, nil),
			modelcmd.NewCmdModel(e),
			versionCommand(e),
		},
	}))
}

func mcpCommand(e *cmdkit.Env) *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "manage and use MCP servers; without a command, the catalog picker (on a terminal) or the catalog",
		// No command: the picker on a terminal, the catalog elsewhere.
		Action: func(ctx context.Context, c *cli.Command) error { return mcpAction(e, ctx, c) },
		Commands: []*cli.Command{
			calls.NewCmdTest(e, nil),
			servers.NewCmdLogs(e, nil),
			calls.NewCmdCall(e, nil),
			calls.NewCmdToolsSchema(e, nil),
			add.NewCmdAdd(e, nil),
			add.NewCmdAddJSON(e, nil),
			add.NewCmdImport(e, nil),
			servers.NewCmdGet(e, nil),
			servers.NewCmdRemove(e, nil),
			servers.NewCmdList(e, nil),
			servers.NewCmdConfigure(e, nil),
			servers.NewCmdEnable(e, true, nil),
			servers.NewCmdEnable(e, false, nil),
			login.NewCmdLogin(e, nil),
			login.NewCmdLogout(e, nil),
			login.NewCmdReauth(e, nil),
			login.NewCmdAuthStatus(e, nil),
			catalogcmd.NewCmdCatalog(e, nil),
			catalogcmd.NewCmdInstall(e, nil),
			catalogcmd.NewCmdUninstall(e, nil),
			servers.NewCmdApprove(e, nil),
			servers.NewCmdReject(e, nil),
			servers.NewCmdResetProjectChoices(e, nil),
			servecmd.NewCmdServe(e, nil),
			gatewaycmd.NewCmdGateway(e, nil),
		},
	}
}

// Exit codes of a run (cmdkit names them for the commands).
const (
	ExitOK    = cmdkit.ExitOK
	ExitFail  = cmdkit.ExitFail
	ExitUsage = cmdkit.ExitUsage
)
