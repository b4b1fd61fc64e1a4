package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/host/agent"
	"github.com/hermes-agent/hermes/host/approval"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/statedb"
)

// BindChatHooks binds the loop's optional parts: the conversation is
// written to state.db (a terminal session, which hermes mcp serve lists
// while it lasts), tool calls go through the approval gate (asking here
// and recording a pending approval serve can answer), and the registry's
// drift report is shown. It returns what ends them: the session is ended
// and the database closed.
//
// When state.db cannot be opened, the chat goes on unrecorded, and a call
// that needs approval is denied (an approval that serve cannot see is
// not the one the person configured); the notice says why.
func BindChatHooks(e *cmdkit.Env, ctx context.Context, l *agent.Loop, m *registry.Manager) (end func()) {
	l.Drift = ChatDrift{m}
	gateOnly := func(err error) func() {
		l.Observer.Notice(fmt.Sprintf("The conversation is not recorded and calls that need approval are denied: %s", cmdkit.OneLine(err.Error())))
		a := &ChatApprover{m: m, err: err, log: e.Log}
		if raw, path, lerr := config.LoadApproval(e.Home, e.F.ConfigEnv()); lerr == nil {
			if s, perr := approval.ParseSettings(raw, path); perr == nil {
				a.settings = s
				a.gate = approval.New(nil, s, nil, e.Log)
			}
		}
		l.Approver = a
		return func() {}
	}
	w, err := statedb.OpenWriter(ctx, e.F.Home.StateDB())
	if err != nil {
		return gateOnly(err)
	}
	wd, _ := e.F.WorkDir()
	sess, err := w.CreateSession(ctx, statedb.Session{Model: l.ModelName, Cwd: wd, SystemPrompt: l.System})
	if err != nil {
		w.Close()
		return gateOnly(err)
	}
	a := &ChatApprover{m: m, w: w, prompter: e.Prompt, log: e.Log, key: statedb.TerminalSessionKey(sess.ID)}
	settings, err := cmdkit.ApprovalSettings(e)
	if err != nil {
		// approval: of config.yaml is wrong: say so once, and use the
		// defaults (destructive tools still ask).
		l.Observer.Notice(cmdkit.OneLine(err.Error()))
		settings = approval.DefaultSettings()
	}
	a.settings = settings
	a.gate = approval.New(w, settings, a.prompter, e.Log)
	l.Approver = a
	l.Recorder = &ChatRecorder{w: w, session: sess.ID, names: map[string]string{}}
	return func() {
		if err := w.EndSession(context.WithoutCancel(ctx), sess.ID, "user_exit"); err != nil {
			e.Log.Warn("cannot end the chat session in state.db", "error", err.Error())
		}
		w.Close()
	}
}

// ChatApprover is the approval gate as the loop asks it. What the call
// reaches and how its tool is marked come from the registry's own record
// of the tool (Manager.Resolve: its server and MCP name, its annotations
// as listed now and as approved), never from what the model was offered.
type ChatApprover struct {
	m        *registry.Manager
	w        *statedb.Writer // nil when state.db cannot be opened (err)
	prompter elicit.Prompter
	log      hclog.Logger
	key      string
	// err, when set, is why no approval can be recorded: a call that
	// needs one is denied.
	err error

	// mu guards the gate and its settings, which /reload-mcp replaces.
	mu       sync.Mutex
	gate     *approval.Gate
	settings approval.Settings
}

// reload replaces the gate when config.yaml's approval: block changed and
// returns a line per setting that changed. A block that cannot be read
// keeps the gate as it was, and the line says so.
func (a *ChatApprover) reload(settings approval.Settings, err error) []string {
	if err != nil {
		return []string{fmt.Sprintf("approval: not reloaded, the settings before stay: %s", cmdkit.OneLine(err.Error()))}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var lines []string
	if !slices.Equal(a.settings.Require, settings.Require) {
		now := "none"
		if len(settings.Require) > 0 {
			now = strings.Join(settings.Require, ", ")
		}
		lines = append(lines, fmt.Sprintf("approval: require changed (now %s)", now))
	}
	if a.settings.Timeout != settings.Timeout {
		lines = append(lines, fmt.Sprintf("approval: timeout changed (now %s)", settings.Timeout))
	}
	if len(lines) == 0 && a.gate != nil {
		return nil
	}
	a.settings = settings
	if a.err != nil {
		a.gate = approval.New(nil, settings, nil, a.log)
	} else {
		a.gate = approval.New(a.w, settings, a.prompter, a.log)
	}
	return lines
}

func (a *ChatApprover) current() *approval.Gate {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gate
}

func (a *ChatApprover) Decide(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	gate := a.current()
	rec, err := a.m.Resolve(r.Name)
	if err != nil {
		// The registry would refuse the call too: say why, run nothing.
		return agent.Decision{Reason: cmdkit.OneLine(err.Error())}, nil
	}
	req := approval.Request{Server: rec.Server, Tool: rec.Tool, Name: rec.Name, Arguments: json.RawMessage(r.RawArguments),
		Annotations: rec.Annotations, Approved: rec.Approved, SessionKey: a.key, GrantKey: rec.StateKey}
	if a.err != nil {
		if gate == nil || gate.Required(req) {
			return agent.Decision{Reason: "the call needs approval, which cannot be recorded: " + cmdkit.OneLine(a.err.Error())}, nil
		}
		return agent.Decision{Allow: true}, nil
	}
	d, err := gate.Decide(ctx, req)
	if err != nil {
		return agent.Decision{}, err
	}
	return agent.Decision{Allow: d.Allowed, Reason: d.Reason}, nil
}

// ChatRecorder writes the conversation's messages to state.db.
type ChatRecorder struct {
	w       *statedb.Writer
	session string
	mu      sync.Mutex
	names   map[string]string // tool call id → model-visible name
}

func (r *ChatRecorder) Record(ctx context.Context, m model.Message) error {
	nm := statedb.NewMessage{Role: m.Role, Content: statedb.EncodeText(m.Text), ToolCallID: m.ToolCallID}
	r.mu.Lock()
	for _, c := range m.ToolCalls {
		nm.ToolCalls = append(nm.ToolCalls, statedb.ToolCall{ID: c.ID, Type: "function",
			Function: statedb.ToolCallFunction{Name: c.Name, Arguments: c.Arguments}})
		r.names[c.ID] = c.Name
	}
	if m.ToolCallID != "" {
		nm.ToolName = r.names[m.ToolCallID]
		delete(r.names, m.ToolCallID)
	}
	r.mu.Unlock()
	_, err := r.w.AppendMessage(ctx, r.session, nm)
	return err
}

// ChatDrift is the registry's drift report as the loop shows it: a line
// per tool whose definition changed since it was approved (the loop shows
// each line once).
type ChatDrift struct{ m *registry.Manager }

func (d ChatDrift) DriftReport(context.Context) []string {
	var out []string
	for _, dr := range d.m.Drift() {
		if dr.Unreadable != "" {
			out = append(out, dr.Unreadable)
		}
		for _, n := range cmdkit.DriftNotes(&dr) {
			l := fmt.Sprintf("Tool %s of MCP server '%s' %s since it was approved: %s", n.Tool, dr.Server, n.Change, n.Summary)
			if n.Withheld {
				l += "; it is withheld from the model until you accept it: /accept-changes " + dr.Server
			}
			out = append(out, l)
		}
	}
	return out
}

// SearchTools is the registry as the loop sees it when tools.search_over
// is set: past the threshold the model is offered search_tools and
// load_tools and the definitions it loaded instead of every definition
// (host/toolview's Search), and their calls are answered here.
type SearchTools struct {
	m *registry.Manager
	s *toolview.Search
}

func (t SearchTools) Tools() []toolview.ToolDef { return t.s.Offer(t.m.Tools()) }

func (t SearchTools) Call(ctx context.Context, name string, args json.RawMessage) (toolview.Reply, error) {
	all := t.m.Tools()
	if t.s.Handles(name) {
		return t.s.Reply(all, name, args)
	}
	// The loop refuses what it did not offer; a tool not loaded is
	// refused here too, whoever calls.
	if t.s.Active(all) && !t.s.Offers(all, name) {
		msg := toolview.NotLoaded(name)
		return toolview.Failure(msg), errors.New(msg)
	}
	return t.m.Call(ctx, name, args)
}

func (t SearchTools) ParallelSafe(name string) bool {
	return !t.s.Handles(name) && t.m.ParallelSafe(name)
}

// ChatTools returns what the loop is offered for tools.search_over o:
// the registry, or with o set, the registry behind tool search (search
// is then that tool search, nil otherwise).
func ChatTools(m *registry.Manager, o config.SearchOver) (tools agent.Tools, search *toolview.Search) {
	if o.Off() {
		return m, nil
	}
	s := toolview.NewSearch(o.Tools, o.Tokens)
	return SearchTools{m: m, s: s}, s
}

// SearchOver reads tools.search_over; one that cannot be read is said
// once and tool search is off (every definition is offered).
func SearchOver(e *cmdkit.Env, notice func(string)) config.SearchOver {
	o, err := config.LoadSearchOver(e.Home)
	if err != nil {
		notice(cmdkit.OneLine(err.Error()) + "; every tool definition is offered")
		return config.SearchOver{}
	}
	return o
}
