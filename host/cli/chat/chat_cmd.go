package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/app"

	"github.com/hermes-agent/hermes/host/agent"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/roots"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"
)

// MaxStdinPrompt bounds a one-shot prompt read from stdin.
const MaxStdinPrompt = 1 << 20

// ChatPrompt is the interactive prompt.
const ChatPrompt = "› "

// ChatOptions are what 'hermes chat' needs: the run, its flag and its
// prompt.
type ChatOptions struct {
	Env *cmdkit.Env
	// Model is -m/--model, the model to ask; "" is model.default.
	Model string
	// Prompt is the arguments, joined by spaces: a one-shot turn. ""
	// reads the prompt from stdin, unless Interactive.
	Prompt string
	// Interactive: no prompt, and a terminal on stdin and stdout; the
	// chat reads lines until /exit.
	Interactive bool
}

// NewCmdChat builds 'hermes chat'. Its action fills a ChatOptions from
// the command line and hands it to runF when runF is not nil (a test's
// look at what was parsed), else to chatRun.
func NewCmdChat(e *cmdkit.Env, runF func(context.Context, *ChatOptions) error) *cli.Command {
	opts := &ChatOptions{Env: e}
	return &cli.Command{
		Name:      "chat",
		Usage:     "talk to the model with the MCP servers' tools (interactive on a terminal; one-shot with PROMPT or stdin)",
		ArgsUsage: "[PROMPT]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "the model to ask (default: model.default)", Destination: &opts.Model},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			opts.Prompt = strings.Join(c.Args().Slice(), " ")
			opts.Interactive = opts.Prompt == "" && e.Input.Terminal() && e.P.Interactive()
			if opts.Prompt == "" && !opts.Interactive && e.Input.Terminal() {
				return cmdkit.Usagef("usage: hermes chat [-m MODEL] [PROMPT]: give a prompt, or run it with a terminal on stdin and stdout")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return chatRun(ctx, opts)
		},
	}
}

// chatRun reads a one-shot prompt from stdin when none was given, starts
// the chat and runs its one turn, or the interactive chat.
func chatRun(ctx context.Context, opts *ChatOptions) error {
	e, prompt := opts.Env, opts.Prompt
	if prompt == "" && !opts.Interactive {
		b, err := io.ReadAll(io.LimitReader(e.In, MaxStdinPrompt+1))
		if err != nil {
			return cmdkit.Failf("cannot read the prompt from stdin: %s", cmdkit.OneLine(err.Error()))
		}
		if len(b) > MaxStdinPrompt {
			return cmdkit.Usagef("the prompt on stdin is longer than %d KiB; pass a shorter one", MaxStdinPrompt>>10)
		}
		prompt = strings.TrimSpace(string(b))
		if prompt == "" {
			return cmdkit.Usagef("usage: hermes chat [-m MODEL] [PROMPT]: stdin was empty; give a prompt")
		}
	}
	s, err := StartChat(e, ctx, opts.Model)
	if err != nil {
		return err
	}
	defer s.close()
	if !opts.Interactive {
		return s.oneShot(ctx, prompt)
	}
	return s.interactive(ctx)
}

// ChatSession is one run of hermes chat: the registry, the model and the
// conversation.
type ChatSession struct {
	e     *cmdkit.Env
	m     *registry.Manager
	roots *roots.Set
	loop  *agent.Loop
	view  *ChatView
	// cfg is config.yaml as last read (at the start or /reload-mcp).
	cfg *config.Config
	// over is tools.search_over as last read; search is the tool search
	// the loop is offered through (nil when it is off).
	over   config.SearchOver
	search *toolview.Search

	// mu guards the running turn's cancel (the signal hook reads it).
	mu        sync.Mutex
	cancel    context.CancelFunc
	cancelled bool
	// endHooks ends what bindChatHooks bound (the state.db session).
	endHooks func()
}

// StartChat reads the model: block, builds the model client and connects
// every enabled server, with the requests servers make of the host
// (sampling, elicitation, roots) bound as in hermes mcp call.
func StartChat(e *cmdkit.Env, ctx context.Context, modelName string) (*ChatSession, error) {
	client, err := cmdkit.ModelClient(e.F.Model())
	if err != nil {
		return nil, err
	}
	if modelName == "" && client.Settings().Default == "" {
		return nil, cmdkit.Usagef("no model named: set model.default in config.yaml or name one with -m")
	}
	cfg, err := e.F.Config()
	if err != nil {
		return nil, cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	cmdkit.AdmitProject(e, cfg.Servers...)
	// Servers with a record of what they offered register their tools from
	// it and start on their first call; idle ones stop.
	m, set := e.F.Registry(app.Live, cfg.Servers)
	set.OnChange(func(ctx context.Context) { m.NotifyRootsChanged(ctx) })
	if err := m.Start(ctx); err != nil {
		m.Close()
		return nil, cmdkit.Failf("%s", cmdkit.ShownErr(err))
	}
	view := NewChatView(e)
	s := &ChatSession{e: e, m: m, roots: set, view: view, loop: &agent.Loop{
		Model:         client,
		Tools:         m,
		ModelName:     modelName,
		MaxToolRounds: client.Settings().MaxToolRounds,
		Observer:      view,
	}}
	s.cfg, s.over = cfg, SearchOver(e, view.Notice)
	s.loop.Tools, s.search = ChatTools(m, s.over)
	// The system message is built before the state.db session, which
	// records it.
	s.refreshSystem()
	s.endHooks = BindChatHooks(e, ctx, s.loop, m)
	for _, st := range m.Status() {
		if st.State != registry.StateConnected && st.State != registry.StateDisabled && st.Error != "" {
			view.Notice(fmt.Sprintf("MCP server '%s' is not connected: %s", st.Name, st.Error))
		}
	}
	return s, nil
}

func (s *ChatSession) close() {
	if s.endHooks != nil {
		s.endHooks()
	}
	s.view.progress.Close()
	s.e.OnSignal.Store(nil)
	s.m.Detach()
}

// oneShot runs one turn; a failed model call is a one-line error and
// exit code 1.
func (s *ChatSession) oneShot(ctx context.Context, prompt string) error {
	_, err := s.loop.Turn(ctx, prompt)
	s.view.endText()
	if err != nil {
		return cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
	}
	return nil
}

// interactive reads lines on the terminal until /exit, Ctrl-D or a
// Ctrl-C at the prompt. A Ctrl-C during a turn cancels it; a second one
// leaves.
func (s *ChatSession) interactive(ctx context.Context) error {
	e := s.e
	s.e.OnSignal.Store(&cmdkit.SignalHook{Fn: s.interrupt})
	banner := fmt.Sprintf("%s from %s", cmdkit.Plural(len(s.m.Tools()), "tool"), cmdkit.Plural(len(s.m.Status()), "MCP server"))
	if note := s.searchNote(); note != "" {
		banner += "; " + note
	}
	fmt.Fprintf(e.Err, "hermes chat: %s. /help lists the commands; Ctrl-D leaves.\n", termsafe.Escape(banner))
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{e.In, e.Out}, ChatPrompt)
	if fd, ok := OutFd(e.Out); ok {
		if w, h, err := term.GetSize(fd); err == nil {
			_ = t.SetSize(w, h)
		}
	}
	for {
		line, err := s.readLine(ctx, t)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				fmt.Fprintln(e.Err)
				return nil
			}
			return cmdkit.Failf("cannot read the terminal: %s", cmdkit.OneLine(err.Error()))
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "/") {
			if leave := s.command(ctx, line); leave {
				return nil
			}
			continue
		}
		s.runTurn(ctx, func(ctx context.Context) error {
			_, err := s.loop.Turn(ctx, line)
			return err
		})
		if ctx.Err() != nil {
			return nil
		}
	}
}

// readLine reads one chat line with line editing and history, holding
// the terminal (elicit.Prompter's turn): a server's question waits for
// the line, and no chat line is read while a question is asked.
func (s *ChatSession) readLine(ctx context.Context, t *term.Terminal) (string, error) {
	var line string
	var rerr error
	err := s.e.Prompt.Converse(ctx, func(elicit.Terminal) error {
		if fd, ok := InFd(s.e.In); ok {
			if old, err := term.MakeRaw(fd); err == nil {
				defer term.Restore(fd, old)
			}
		}
		line, rerr = t.ReadLine()
		return nil
	})
	if err != nil {
		return "", err
	}
	return line, rerr
}

// runTurn runs fn with a context a Ctrl-C cancels, and reports how it
// ended.
func (s *ChatSession) runTurn(ctx context.Context, fn func(context.Context) error) {
	tctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.cancel, s.cancelled = cancel, false
	s.mu.Unlock()
	err := fn(tctx)
	s.mu.Lock()
	cancelled := s.cancelled
	s.cancel, s.cancelled = nil, false
	s.mu.Unlock()
	cancel()
	s.view.endText()
	switch {
	case ctx.Err() != nil:
	case cancelled:
		fmt.Fprintln(s.e.Err, "  Cancelled.")
	case err != nil:
		s.view.fail(cmdkit.OneLine(err.Error()))
	}
}

// interrupt is the chat's SIGINT hook: the first Ctrl-C of a turn cancels
// it (the running model call ends, a running tool call gets
// notifications/cancelled); otherwise the signal leaves hermes as usual.
func (s *ChatSession) interrupt(sig os.Signal) bool {
	if sig != os.Interrupt {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil || s.cancelled {
		return false
	}
	s.cancelled = true
	s.cancel()
	s.view.progress.Clear()
	fmt.Fprintln(s.e.Err, "\n  Cancelling... (Ctrl-C again leaves)")
	return true
}

// ChatHelp lists the slash commands.
const ChatHelp = `  /tools          the tools offered to the model
  /mcp            the MCP servers, their states and sampling metrics
  /reload-mcp     read config.yaml again and reconnect what changed
  /model [NAME]   show the model, or ask NAME from now on
  /accept-changes SERVER [TOOL...]
                  accept tools whose definitions changed since approved
  /exit           leave (also Ctrl-D)
  /help           this list
  Ctrl-C cancels the running model or tool call; a second Ctrl-C leaves.`

// command runs a slash command; it reports whether the chat ends.
func (s *ChatSession) command(ctx context.Context, line string) bool {
	e := s.e
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/exit", "/quit":
		return true
	case "/help":
		fmt.Fprintln(e.Out, ChatHelp)
	case "/tools":
		s.printTools()
	case "/mcp":
		s.printServers()
	case "/reload-mcp":
		s.runTurn(ctx, s.reload)
	case "/accept-changes":
		s.acceptChanges(arg)
	case "/model":
		if arg != "" {
			s.loop.ModelName = arg
		}
		shown := s.loop.ModelName
		if shown == "" {
			shown = s.loop.Model.(*model.Client).Settings().Default + " (model.default)"
		}
		fmt.Fprintf(e.Out, "  Model: %s\n", termsafe.Escape(shown))
	default:
		fmt.Fprintf(e.Err, "  Unknown command %s; /help lists them\n", termsafe.Escape(name))
	}
	return false
}

// acceptChanges approves the changed tools of a server (all of them, or
// those named), so a withheld tool reaches the model from the next request.
func (s *ChatSession) acceptChanges(arg string) {
	e := s.e
	words := strings.Fields(arg)
	if len(words) == 0 {
		fmt.Fprintln(e.Err, "  usage: /accept-changes SERVER [TOOL...]")
		return
	}
	d := cmdkit.ManagerDrift(s.m, words[0])
	if d == nil || len(d.Changes) == 0 {
		fmt.Fprintf(e.Err, "  No tool of '%s' changed since it was approved\n", termsafe.Escape(words[0]))
		return
	}
	for _, n := range cmdkit.DriftNotes(d) {
		fmt.Fprintf(e.Err, "  %s %s: %s\n", termsafe.Escape(n.Tool), n.Change, termsafe.Escape(n.Summary))
	}
	if err := s.m.AcceptDrift(words[0], words[1:]...); err != nil {
		fmt.Fprintf(e.Err, "  ✗ %s\n", termsafe.Escape(cmdkit.OneLine(err.Error())))
		return
	}
	fmt.Fprintf(e.Err, "  ✓ Accepted; the model sees the tools of '%s' as they are now\n", termsafe.Escape(words[0]))
}

// printTools lists the tools offered to the model, per server: the names
// hermes tools shows.
func (s *ChatSession) printTools() {
	defs := s.m.Tools()
	if len(defs) == 0 {
		fmt.Fprintln(s.e.Out, "  No tools: no MCP server offers any (see /mcp)")
		return
	}
	last := ""
	for _, d := range defs {
		if d.Server != last {
			fmt.Fprintf(s.e.Out, "  mcp-%s\n", termsafe.Escape(d.Server))
			last = d.Server
		}
		fmt.Fprintf(s.e.Out, "      %s\n", termsafe.Escape(d.Name))
	}
	fmt.Fprintf(s.e.Out, "  %s\n", termsafe.Escape(s.offeredLine(len(defs))))
}

// offeredLine says how many tools there are and what the model is
// offered of them.
func (s *ChatSession) offeredLine(n int) string {
	if note := s.searchNote(); note != "" {
		return cmdkit.Plural(n, "tool") + "; " + note
	}
	return cmdkit.Plural(n, "tool") + " available to the model"
}

// CfgServer returns cfg's server name, nil without one (or without cfg).
func CfgServer(cfg *config.Config, name string) *config.Server {
	if cfg == nil {
		return nil
	}
	return cfg.Server(name)
}

// printServers lists the servers, their states, tools, sampling metrics
// and what each used of its sampling limits.
func (s *ChatSession) printServers() {
	metrics := sampling.LoadMetrics(s.e.Home)
	cfg := s.cfg // the config in use: as read at the start or the last /reload-mcp
	st := s.m.Status()
	if len(st) == 0 {
		fmt.Fprintln(s.e.Out, "  No MCP servers configured; add one with 'hermes mcp add'")
		return
	}
	for _, x := range st {
		line := fmt.Sprintf("  %s (%s): %s, %d/%d tools", x.Name, x.Transport, x.State, x.Enabled, x.Total)
		if x.Error != "" {
			line += ": " + x.Error
		}
		fmt.Fprintln(s.e.Out, termsafe.Escape(line))
		key := s.m.StateKey(x.Name)
		if mt, ok := metrics[key]; ok {
			fmt.Fprintf(s.e.Out, "      sampling: %d requests, %d errors, %d tokens, %d tool uses\n", mt.Requests, mt.Errors, mt.TokensUsed, mt.ToolUseCount)
		}
		if srv := CfgServer(cfg, x.Name); srv != nil {
			if p, err := sampling.ParsePolicy(srv.Sampling); err == nil && p.Enabled {
				_, line := cmdkit.SamplingUsage(s.e, context.Background(), p, key)
				fmt.Fprintf(s.e.Out, "      sampling limits: %s\n", termsafe.Escape(line))
			}
		}
	}
	if note := s.searchNote(); note != "" {
		fmt.Fprintf(s.e.Out, "  %s; %s\n", cmdkit.Plural(len(s.m.Tools()), "tool"), termsafe.Escape(note))
	}
}

// reload reads config.yaml again: the model: block, the servers
// (Manager.Reload) and each block that affects a call (approval:, roots:,
// tools.search_over, each server's sampling:, elicitation:, roots:,
// tools: and instructions:), rebuilds the system message, and prints
// what changed, a line per block. It runs between turns only.
func (s *ChatSession) reload(ctx context.Context) error {
	e := s.e
	cfg, err := e.F.Config()
	if err != nil {
		return fmt.Errorf("%s; nothing was reloaded", cmdkit.OneLine(err.Error()))
	}
	client, err := cmdkit.ModelClient(e.F.ReloadModel())
	if err != nil {
		return err
	}
	before := ToolNames(s.m)
	blocks := ServerBlockChanges(s.cfg, cfg)
	res, err := s.m.Reload(ctx, cfg.Servers)
	if err != nil {
		return err
	}
	s.cfg = cfg
	s.loop.Model = client
	s.loop.MaxToolRounds = client.Settings().MaxToolRounds
	if a, ok := s.loop.Approver.(*ChatApprover); ok {
		blocks = append(blocks, a.reload(cmdkit.ApprovalSettings(e))...)
	}
	if wd, err := e.F.WorkDir(); err == nil {
		home, _ := e.F.UserHome()
		if changed, err := s.roots.Reload(ctx, e.Home, wd, home, e.F.ConfigEnv()); err != nil {
			s.view.Notice(fmt.Sprintf("roots: not reloaded: %s", cmdkit.OneLine(err.Error())))
		} else if changed {
			blocks = append(blocks, "roots: changed (servers are told)")
		}
	}
	if over := SearchOver(e, s.view.Notice); over != s.over {
		s.over = over
		s.loop.Tools, s.search = ChatTools(s.m, over)
		blocks = append(blocks, "tools.search_over: changed")
	}
	if s.refreshSystem() {
		blocks = append(blocks, "system message: rebuilt (the servers or their instructions changed)")
	}
	after := ToolNames(s.m)
	var added, removed []string
	for _, n := range after {
		if !slices.Contains(before, n) {
			added = append(added, n)
		}
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			removed = append(removed, n)
		}
	}
	out := e.Out
	show := func(what string, list []string) {
		if len(list) > 0 {
			fmt.Fprintf(out, "  %s: %s\n", what, termsafe.Escape(strings.Join(list, ", ")))
		}
	}
	show("Servers added", res.Added)
	show("Servers removed", res.Removed)
	show("Servers reconnected", res.Reconnected)
	show("Tools added", added)
	show("Tools removed", removed)
	for _, l := range blocks {
		fmt.Fprintf(out, "  %s\n", termsafe.Escape(l))
	}
	if len(res.Added)+len(res.Removed)+len(res.Reconnected)+len(added)+len(removed)+len(blocks) == 0 {
		fmt.Fprintln(out, "  No changes")
	}
	fmt.Fprintf(out, "  %s\n", termsafe.Escape(s.offeredLine(len(after))))
	return nil
}

func ToolNames(m *registry.Manager) []string {
	var out []string
	for _, d := range m.Tools() {
		out = append(out, d.Name)
	}
	return out
}

func InFd(r io.Reader) (int, bool) {
	if f, ok := r.(interface{ Fd() uintptr }); ok {
		return int(f.Fd()), true
	}
	return 0, false
}

func OutFd(w io.Writer) (int, bool) {
	if f, ok := w.(*os.File); ok && f != nil && term.IsTerminal(int(f.Fd())) {
		return int(f.Fd()), true
	}
	return 0, false
}

// ChatView is what a person sees of the loop (agent.Observer): the
// model's text on stdout as it streams, escaped; tool calls, progress
// (a live line on a terminal) and notices on stderr.
type ChatView struct {
	e        *cmdkit.Env
	progress *ui.ProgressLine
	mu       sync.Mutex
	midLine  bool // stdout's last text did not end a line
}

func NewChatView(e *cmdkit.Env) *ChatView {
	return &ChatView{e: e, progress: ui.NewProgressLine(e.Err)}
}

// Text prints a delta of the model's text, escaped (its lines kept).
func (v *ChatView) Text(d string) {
	if d == "" {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	fmt.Fprint(v.e.Out, termsafe.EscapeText(d))
	v.midLine = !strings.HasSuffix(d, "\n")
}

// endText ends the model's text with a line break when it had none.
func (v *ChatView) endText() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.midLine {
		fmt.Fprintln(v.e.Out)
		v.midLine = false
	}
}

// MaxShownArgs bounds the arguments shown beside a tool's name.
const MaxShownArgs = 120

func (v *ChatView) ToolStart(c agent.ToolCall) {
	v.endText()
	args := cmdkit.OneLine(c.Arguments)
	if utf8.RuneCountInString(args) > MaxShownArgs {
		args = cmdkit.TruncateRunes(args, MaxShownArgs)
	}
	v.line(fmt.Sprintf("  → %s %s", c.Name, args))
}

func (v *ChatView) Progress(c agent.ToolCall, p registry.Progress) {
	v.progress.Show("  " + ui.ProgressText(c.Name, p.Progress, p.Total, p.Message))
}

func (v *ChatView) ToolEnd(c agent.ToolCall, r toolview.Reply) {
	if !r.Failed {
		v.line("  ✓ " + c.Name)
		return
	}
	v.line(fmt.Sprintf("  ✗ %s: %s", c.Name, cmdkit.TruncateRunes(cmdkit.OneLine(r.Error), 200)))
}

func (v *ChatView) Notice(l string) { v.line("  ⚠ " + l) }

func (v *ChatView) fail(msg string) { v.line("  ✗ " + msg) }

// line prints one escaped line on stderr, clearing the live line first.
func (v *ChatView) line(s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.progress.Clear()
	fmt.Fprintln(v.e.Err, termsafe.Escape(s))
}
