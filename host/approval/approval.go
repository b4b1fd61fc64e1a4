// Package approval is the gate a tool call passes before it runs: a call
// of a tool whose annotations say destructiveHint: true, or whose
// model-visible name matches a glob of approval.require (config.yaml),
// waits for a person's decision. The gate asks in the terminal (through
// the CLI's elicit.Prompter, so an approval and an elicitation take turns
// and never talk over each other) and, at the same moment, records a
// pending approval in state.db's mcp_approvals table, which an MCP client
// of `hermes mcp serve` lists (permissions_list_open) and answers
// (permissions_respond). Whichever answers first wins, atomically: every
// answer is statedb.Respond, one conditional UPDATE, and the loser learns
// the decision that stood. When serve answered, the terminal question is
// withdrawn with a line saying so. Nobody answering within
// approval.timeout (DefaultTimeout) denies; without a terminal the row
// waits for serve until then.
//
// allow-always is remembered per server and tool in state.db
// (mcp_tool_grants, statedb.Grants): it survives restarts, holds for every
// hermes process of that HERMES_HOME, `hermes mcp get NAME` shows it and
// `hermes mcp get NAME --revoke TOOL` (or --revoke all) forgets it. A
// remembered tool no longer asks.
//
// The API the agent loop calls before running a tool:
//
//	rec, err := registry.Resolve("mcp_fs_delete") // the registry's record, not the caller's
//	gate := approval.New(writer, settings, prompter, logger)
//	d, err := gate.Decide(ctx, approval.Request{Server: rec.Server, Tool: rec.Tool,
//		Name: rec.Name, Arguments: args, Annotations: rec.Annotations, Approved: rec.Approved})
//	if err != nil { ... }          // state.db failed, or ctx ended (the row is denied)
//	if !d.Allowed { ... }          // tell the model d.Reason instead of running the tool
//
// The arguments are shown key by key, each value bounded
// (MaxValueShown, MaxArgumentsShown), every cut said with its size and
// the keys it hid.
//
// The package does not run tools, talk to servers or read config.yaml
// itself (ParseSettings takes the block config.LoadApproval returns).
package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/fields"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/statedb"
)

// DefaultTimeout is how long a decision is waited for (approval.timeout)
// before the call is denied.
const DefaultTimeout = 120 * time.Second

// MaxTimeout bounds approval.timeout.
const MaxTimeout = 24 * time.Hour

// PollInterval is how often a waiting gate reads its approval's row to
// see a decision made through hermes mcp serve.
const PollInterval = 100 * time.Millisecond

// Settings are config.yaml's approval: block.
type Settings struct {
	// Require are globs (path.Match) over model-visible tool names whose
	// calls need a decision besides destructive tools (approval.require).
	Require []string
	// Timeout denies a call nobody decided on (approval.timeout).
	Timeout time.Duration
}

// DefaultSettings are the settings without an approval: block.
func DefaultSettings() Settings { return Settings{Timeout: DefaultTimeout} }

// ParseSettings reads the approval: block (config.LoadApproval's; nil is
// the defaults). file names config.yaml in errors, which are one line
// each and say what to write instead.
func ParseSettings(raw map[string]any, file string) (Settings, error) {
	s := DefaultSettings()
	for k, v := range raw {
		switch k {
		case "require":
			var list []string
			if one, ok := v.(string); ok {
				list = []string{one}
			} else {
				var ferr *fields.Error
				if list, ferr = fields.TextList("approval.require", v); ferr != nil {
					return s, fmt.Errorf("%s; write approval.require as a list of globs of tool names, e.g. [\"mcp_fs_*\"]", ferr.In(file))
				}
			}
			for _, g := range list {
				if _, err := path.Match(g, ""); err != nil || g == "" {
					return s, fmt.Errorf("%s: approval.require: %q is not a glob of tool names (* ? [a-z] as in path.Match); fix config.yaml", file, g)
				}
			}
			s.Require = list
		case "timeout":
			d, ok := timeout(v)
			if !ok {
				return s, fmt.Errorf("%s: approval.timeout: want seconds between 1 and %d (or a duration such as \"2m\"), got %s; fix config.yaml", file, int(MaxTimeout.Seconds()), fields.Show(v))
			}
			s.Timeout = d
		default:
			return s, fmt.Errorf("%s: approval.%s is not a setting (the settings are require and timeout); remove it from config.yaml", file, k)
		}
	}
	return s, nil
}

func timeout(v any) (time.Duration, bool) {
	var d time.Duration
	if f, ok := fields.Number(v); ok {
		d = time.Duration(f * float64(time.Second))
	} else if t, ok := v.(string); ok {
		var err error
		if d, err = time.ParseDuration(strings.TrimSpace(t)); err != nil {
			return 0, false
		}
	} else {
		return 0, false
	}
	return d, d >= time.Second && d <= MaxTimeout
}

// Request is one tool call waiting for a decision.
type Request struct {
	// Server is the server's name in config.yaml.
	Server string
	// Tool is the tool's name as the server names it.
	Tool string
	// Name is the model-visible name (mcp_<server>_<tool>), which
	// approval.require's globs match.
	Name string
	// Arguments are the call's arguments as JSON (shown escaped and
	// bounded).
	Arguments json.RawMessage
	// Annotations are the tool's annotations as the server lists them
	// now; Approved those of the definition the person approved (the
	// drift baseline), nil when none was. Either marking the tool
	// destructive asks: a server cannot drop destructiveHint after
	// approval to skip the question. Both come from the registry's record
	// of the tool (registry.Manager.Resolve), never from the caller.
	Annotations mcpvalue.Annotations
	Approved    *mcpvalue.Annotations
	// GrantKey is what allow-always grants of the server are kept under
	// (config.Server.StateKey); "" is Server.
	GrantKey string
	// SessionKey is the conversation's key in the approval row (for a
	// terminal conversation statedb.TerminalSessionKey); may be "".
	SessionKey string
}

// grantKey is the key of the server's allow-always grants.
func (r Request) grantKey() string {
	if r.GrantKey != "" {
		return r.GrantKey
	}
	return r.Server
}

// Source says who made a decision.
type Source string

// The sources of a Decision.
const (
	// ByPolicy: the call needed no approval.
	ByPolicy Source = "policy"
	// ByRemembered: an earlier allow-always of the tool.
	ByRemembered Source = "remembered"
	// ByTerminal: the person at the terminal.
	ByTerminal Source = "terminal"
	// ByServe: an MCP client of hermes mcp serve (or another process
	// writing state.db).
	ByServe Source = "serve"
	// ByTimeout: nobody within approval.timeout.
	ByTimeout Source = "timeout"
	// ByCancel: the caller's context ended while waiting.
	ByCancel Source = "cancel"
)

// Decision is the gate's answer for one call.
type Decision struct {
	// Allowed says whether the call may run.
	Allowed bool
	// Verdict is the decision recorded: statedb.DecisionAllowOnce,
	// DecisionAllowAlways or DecisionDeny; "" when none was needed.
	Verdict string
	// By says who decided.
	By Source
	// ApprovalID is the mcp_approvals row, "" when none was recorded.
	ApprovalID string
	// Reason is one line for the model when the call is denied.
	Reason string
}

// Gate decides tool calls. Its methods are safe for concurrent use; each
// call waiting for a decision has its own approval row and takes its turn
// at the terminal.
type Gate struct {
	db       *statedb.Writer
	settings Settings
	prompter elicit.Prompter
	log      hclog.Logger
	poll     time.Duration
}

// New returns a gate that records approvals in w's state.db (w must not
// be nil: the conversation's writer serves) and asks through p (nil: no
// terminal, only serve can answer). The CLI binds it to config.yaml's
// approval: block and the run's terminal prompter (host/cli's
// approvalGate).
func New(w *statedb.Writer, s Settings, p elicit.Prompter, log hclog.Logger) *Gate {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	return &Gate{db: w, settings: s, prompter: p, log: log, poll: PollInterval}
}

// Required reports whether a call of r needs a decision: the tool is
// marked destructive (destructiveHint: true and not readOnlyHint: true)
// as it is listed now or as it was approved, or its model-visible name
// matches a glob of approval.require.
func (g *Gate) Required(r Request) bool {
	if marksDestructive(r.Annotations) || (r.Approved != nil && marksDestructive(*r.Approved)) {
		return true
	}
	for _, glob := range g.settings.Require {
		if ok, _ := path.Match(glob, r.Name); ok {
			return true
		}
	}
	return false
}

// marksDestructive reports whether a marks a tool destructive.
// destructiveHint means something only for a tool that is not read-only
// (MCP's ToolAnnotations): mcp-go's servers send destructiveHint: true on
// every tool unless it is marked read-only.
func marksDestructive(a mcpvalue.Annotations) bool {
	readOnly := a.ReadOnly != nil && *a.ReadOnly
	return a.Destructive != nil && *a.Destructive && !readOnly
}

// Grants lists the remembered allow-always of server's tools.
func (g *Gate) Grants(ctx context.Context, server string) ([]statedb.Grant, error) {
	return statedb.Grants(ctx, g.db.DB(), server)
}

// Revoke forgets the allow-always of server's tools (all when none is
// named) and returns how many were forgotten.
func (g *Gate) Revoke(ctx context.Context, server string, tools ...string) (int64, error) {
	return statedb.RevokeGrants(ctx, g.db.DB(), server, tools...)
}

// errAnswered cancels the terminal question when the row was decided
// elsewhere or by the timeout; the question prints Line.
type errAnswered struct{ Line string }

func (e *errAnswered) Error() string { return e.Line }

// termResult is what the terminal question ended with.
type termResult struct {
	decision string // "" when the person did not answer
	won      bool   // the person's answer stood
}

// Decide returns the decision for r, waiting for one when r needs it. An
// error means state.db could not record or read the approval (the call
// must not run), or ctx ended while waiting (the approval is then denied,
// so no later answer runs it).
func (g *Gate) Decide(ctx context.Context, r Request) (Decision, error) {
	if !g.Required(r) {
		return Decision{Allowed: true, By: ByPolicy}, nil
	}
	db := g.db.DB()
	grants, err := statedb.Grants(ctx, db, r.grantKey())
	if err != nil {
		return Decision{}, fmt.Errorf("approval of %s: %w", r.Name, err)
	}
	for _, gr := range grants {
		if gr.Tool == r.Tool {
			return Decision{Allowed: true, Verdict: statedb.DecisionAllowAlways, By: ByRemembered, ApprovalID: gr.ApprovalID}, nil
		}
	}
	desc := describe(r)
	a, err := statedb.CreateApproval(ctx, db, statedb.Approval{Kind: statedb.KindTool, Description: desc, SessionKey: r.SessionKey})
	if err != nil {
		return Decision{}, fmt.Errorf("approval of %s: %w", r.Name, err)
	}
	g.log.Info("tool call waits for approval", "tool", r.Name, "approval", a.ID, "timeout", g.settings.Timeout)

	tctx, cancelTerm := context.WithCancelCause(ctx)
	defer cancelTerm(nil)
	termDone := make(chan termResult, 1)
	asking := g.prompter != nil
	if asking {
		go func() { termDone <- g.ask(tctx, r, a.ID, desc) }()
	}
	deadline := time.NewTimer(g.settings.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(g.poll)
	defer tick.Stop()

	// stopTerm withdraws the terminal question (with line, when the
	// question was on screen) and returns what it ended with.
	stopTerm := func(line string) termResult {
		if !asking {
			return termResult{}
		}
		cancelTerm(&errAnswered{Line: line})
		asking = false
		return <-termDone
	}
	finish := func(verdict string, by Source) (Decision, error) {
		d := Decision{Allowed: verdict != statedb.DecisionDeny, Verdict: verdict, By: by, ApprovalID: a.ID}
		if !d.Allowed {
			switch by {
			case ByTimeout:
				d.Reason = fmt.Sprintf("The call of %s was denied: nobody approved it within %s (approval.timeout).", r.Name, g.settings.Timeout)
			default:
				d.Reason = fmt.Sprintf("The user denied the call of %s.", r.Name)
			}
		}
		if verdict == statedb.DecisionAllowAlways {
			if err := statedb.AddGrant(context.WithoutCancel(ctx), db, statedb.Grant{Server: r.grantKey(), Tool: r.Tool, ApprovalID: a.ID}); err != nil {
				g.log.Warn("allow-always not remembered", "tool", r.Name, "error", err)
			}
		}
		g.log.Info("tool call decided", "tool", r.Name, "approval", a.ID, "decision", verdict, "by", string(by))
		return d, nil
	}
	for {
		select {
		case res := <-termDone:
			asking = false
			if res.decision != "" {
				by := ByTerminal
				if !res.won {
					by = ByServe
				}
				return finish(res.decision, by)
			}
			// No person after all (no terminal, input ended): serve
			// may still answer, until the timeout.
		case <-tick.C:
			cur, found, err := statedb.GetApproval(ctx, db, a.ID)
			if err != nil {
				g.log.Warn("reading the approval failed; retrying", "approval", a.ID, "error", err)
				continue
			}
			if !found || cur.Decision == "" {
				continue
			}
			res := stopTerm(fmt.Sprintf("  Answered through hermes mcp serve: %s (this question is withdrawn).", cur.Decision))
			if res.won {
				return finish(res.decision, ByTerminal)
			}
			return finish(cur.Decision, ByServe)
		case <-deadline.C:
			_, err := statedb.Respond(context.WithoutCancel(ctx), db, a.ID, statedb.DecisionDeny)
			var nf *statedb.NotFoundError
			switch {
			case err == nil:
				stopTerm(fmt.Sprintf("  No answer within %s (approval.timeout): denied.", g.settings.Timeout))
				return finish(statedb.DecisionDeny, ByTimeout)
			case errors.As(err, &nf) && nf.Decided:
				res := stopTerm(fmt.Sprintf("  Answered through hermes mcp serve: %s (this question is withdrawn).", nf.Decision))
				if res.won {
					return finish(res.decision, ByTerminal)
				}
				return finish(nf.Decision, ByServe)
			default:
				stopTerm("  The approval could not be recorded: denied.")
				return Decision{}, fmt.Errorf("approval of %s: deny after approval.timeout: %w", r.Name, err)
			}
		case <-ctx.Done():
			stopTerm("")
			if _, err := statedb.Respond(context.WithoutCancel(ctx), db, a.ID, statedb.DecisionDeny); err == nil {
				g.log.Info("tool call cancelled while waiting for approval: denied", "tool", r.Name, "approval", a.ID)
			}
			return Decision{Verdict: statedb.DecisionDeny, By: ByCancel, ApprovalID: a.ID, Reason: "The call was cancelled."}, ctx.Err()
		}
	}
}

// ask puts the question to the person and records their answer. It ends
// when they answered, when no person can answer, or when tctx is
// cancelled (the row was decided elsewhere or timed out: it prints the
// cause's line).
func (g *Gate) ask(tctx context.Context, r Request, id, desc string) termResult {
	var res termResult
	err := g.prompter.Converse(tctx, func(t elicit.Terminal) error {
		t.Say("")
		t.Say(fmt.Sprintf("Approval needed (%s):", approvalWhy(g, r)))
		for _, line := range strings.Split(desc, "\n") {
			t.Say("  " + line)
		}
		// The row's id is not shown: a client of hermes mcp serve lists the
		// open approvals (permissions_list_open), so the id was a 24-hex line
		// under every prompt that a person never needs.
		for {
			line, err := t.Ask(tctx, "  Allow? [o]nce, [a]lways, [d]eny: ")
			if err != nil {
				var ans *errAnswered
				if errors.As(context.Cause(tctx), &ans) && ans.Line != "" {
					t.Say(ans.Line)
				} else if errors.Is(err, io.EOF) {
					t.Say("  No answer from the terminal; waiting for hermes mcp serve until approval.timeout.")
				}
				return nil
			}
			var decision string
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "o", "once", "y", "yes":
				decision = statedb.DecisionAllowOnce
			case "a", "always":
				decision = statedb.DecisionAllowAlways
			case "d", "deny", "n", "no":
				decision = statedb.DecisionDeny
			default:
				t.Say("  Type o, a or d.")
				continue
			}
			_, err = statedb.Respond(context.WithoutCancel(tctx), g.db.DB(), id, decision)
			var nf *statedb.NotFoundError
			switch {
			case err == nil:
				res = termResult{decision: decision, won: true}
			case errors.As(err, &nf) && nf.Decided:
				t.Say(fmt.Sprintf("  Already answered through hermes mcp serve: %s; that decision stands.", nf.Decision))
				res = termResult{decision: nf.Decision}
			default:
				g.log.Warn("recording the terminal's answer failed", "approval", id, "error", err)
				t.Say("  The answer could not be recorded; waiting for hermes mcp serve.")
			}
			return nil
		}
	})
	if err != nil && !errors.Is(err, elicit.ErrNoPerson) && tctx.Err() == nil {
		g.log.Warn("asking for approval failed", "approval", id, "error", err)
	}
	return res
}

func approvalWhy(g *Gate, r Request) string {
	switch {
	case marksDestructive(r.Annotations):
		return "the tool is marked destructive"
	case r.Approved != nil && marksDestructive(*r.Approved):
		return "the tool was approved as destructive; its listing no longer says so"
	}
	return "approval.require lists it"
}
