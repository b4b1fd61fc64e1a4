// Package agent is the host's agent loop: a conversation with a model
// (host/model) that is offered the registry's tools as functions, runs the
// calls the model makes (concurrently where the server allows it), feeds
// the rendered results back and repeats until the model answers in text,
// within a bound on tool rounds per turn.
//
// The loop knows nothing of terminals or storage. What a person sees goes
// through an Observer; what others build is reached through small
// interfaces, each optional (nil means "none"): an Approver asked before a
// tool runs, a Recorder that keeps the conversation (state.db), and a Drift
// hook that reports tool definitions that changed since they were
// approved.
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/toolview"
)

// DefaultMaxToolRounds is the bound on tool rounds per turn when Loop's
// MaxToolRounds is 0 (config key model.max_tool_rounds).
const DefaultMaxToolRounds = model.DefaultMaxToolRounds

// Model is the model the loop talks to: host/model's *Client.
type Model interface {
	Chat(ctx context.Context, req model.Request) (*model.Response, error)
}

// Tools is the registry as the loop uses it: host/registry's *Manager.
type Tools interface {
	// Tools are the tools offered to the model, exactly as `hermes tools`
	// shows them.
	Tools() []toolview.ToolDef
	// Call runs the tool the model knows as name with its arguments
	// object as the model wrote it, and returns the reply: the JSON text
	// handed back to the model (a failure is rendered too; err says it
	// failed) and whether the call failed (the result's isError flag). A
	// progress callback travels in ctx (registry.WithProgress).
	Call(ctx context.Context, name string, args json.RawMessage) (toolview.Reply, error)
	// ParallelSafe reports whether calls of name may run beside others
	// (its server has supports_parallel_tool_calls).
	ParallelSafe(name string) bool
}

// ApprovalRequest is one tool call waiting for a decision. It names the
// call only: where it goes and what the tool is marked are the
// Approver's to look up in the registry's own record of the tool
// (registry.Manager.Resolve), never what the loop was offered.
type ApprovalRequest struct {
	// Name is the model-visible name (mcp_<server>_<tool>).
	Name string
	// RawArguments are the call's arguments as the model wrote them, a
	// JSON object ("{}" when the model sent none). The loop does not
	// decode them: an approver that reads them does.
	RawArguments string
}

// Decision is an Approver's answer.
type Decision struct {
	// Allow lets the call run.
	Allow bool
	// Reason is told to the model when the call is denied ("" gives a
	// generic one).
	Reason string
}

// Approver is asked before a tool of the registry runs (host/approval
// implements it behind an adapter); the calls of tool search's own tools
// (search_tools, load_tools) run tools of no server and are not asked
// about. An error denies the call and is told to the model. Nil approves
// every call.
type Approver interface {
	Decide(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// Recorder keeps the conversation (state.db, in the schema `hermes mcp
// serve` reads). Record is called once per message as it joins the
// conversation: the user's prompt, each assistant answer (text and tool
// calls), each tool result. An error is reported once through the Observer
// and the conversation goes on. Nil records nothing.
type Recorder interface {
	Record(ctx context.Context, m model.Message) error
}

// Drift reports tool definitions that changed since they were approved.
// The loop calls it before each model request and shows every line it has
// not shown before; the registry itself withholds what must be withheld.
// Nil reports nothing.
type Drift interface {
	DriftReport(ctx context.Context) []string
}

// ToolCall is one call the model made, as the loop runs it.
type ToolCall struct {
	// ID is the model's id of the call; Name the model-visible tool name.
	ID, Name string
	// Arguments is the JSON text the model wrote.
	Arguments string
}

// Observer is what a person sees of a turn; the CLI's renderer escapes.
// Its methods may be called from several goroutines (parallel calls).
type Observer interface {
	// Text receives the model's text as it streams in.
	Text(delta string)
	// ToolStart is called when a call starts (after approval).
	ToolStart(c ToolCall)
	// Progress is a progress notification of a running call.
	Progress(c ToolCall, p registry.Progress)
	// ToolEnd is called when a call ended: r.Text is what the model gets,
	// r.Failed says the call did not produce a tool result or was an
	// error, and r.Error then says why.
	ToolEnd(c ToolCall, r toolview.Reply)
	// Notice is a line for the person (drift, a recorder failure).
	Notice(line string)
}

// Loop is one conversation. Set the fields, then call Turn for each user
// prompt; it is not safe for concurrent Turns. Model and Tools are
// required; the rest may be nil or zero.
type Loop struct {
	Model Model
	Tools Tools
	// ModelName is the model to ask ("" is model.default). It may change
	// between turns (/model).
	ModelName string
	// System is the system prompt ("" sends none).
	System string
	// MaxToolRounds bounds the rounds of tool calls in one turn; 0 is
	// DefaultMaxToolRounds.
	MaxToolRounds int
	Approver      Approver
	Recorder      Recorder
	Drift         Drift
	Observer      Observer

	messages   []model.Message
	shownDrift map[string]bool
	recordErr  bool
}

// SetSystem replaces the system prompt between turns (the servers
// changed): a conversation already under way has its system message
// replaced, or gets one first, so the next request carries the new text.
// It is not recorded again. "" removes it.
func (l *Loop) SetSystem(text string) {
	l.System = text
	if len(l.messages) == 0 {
		return
	}
	has := l.messages[0].Role == "system"
	switch {
	case text == "" && has:
		l.messages = l.messages[1:]
	case text == "":
	case has:
		l.messages[0].Text = text
	default:
		l.messages = append([]model.Message{{Role: "system", Text: text}}, l.messages...)
	}
}

// Messages returns the conversation so far (a copy).
func (l *Loop) Messages() []model.Message { return append([]model.Message(nil), l.messages...) }

// RoundsError is a turn that hit MaxToolRounds.
type RoundsError struct{ Rounds int }

func (e *RoundsError) Error() string {
	return fmt.Sprintf("the model asked for tools %d rounds in one turn and stopped there (limit model.max_tool_rounds = %d); raise it in config.yaml or ask for less at once", e.Rounds, e.Rounds)
}

// Turn sends prompt and runs tool rounds until the model answers in text;
// it returns that text. A model failure is returned as is (*model.Error);
// a cancelled ctx ends the turn with ctx's error, and the conversation
// stays valid for the next turn (cancelled calls are answered as such).
func (l *Loop) Turn(ctx context.Context, prompt string) (string, error) {
	if len(l.messages) == 0 && l.System != "" {
		// Not recorded: the Recorder's store keeps the system prompt
		// with the session (statedb's Session.SystemPrompt), not as a
		// message of the conversation.
		l.messages = append(l.messages, model.Message{Role: "system", Text: l.System})
	}
	l.add(ctx, model.Message{Role: "user", Text: prompt})
	max := l.MaxToolRounds
	if max <= 0 {
		max = DefaultMaxToolRounds
	}
	for round := 0; ; round++ {
		l.reportDrift(ctx)
		defs := l.Tools.Tools()
		offered := make(map[string]bool, len(defs))
		for _, d := range defs {
			offered[d.Name] = true
		}
		req := model.Request{Model: l.ModelName, Messages: l.messages, Tools: functions(defs)}
		if l.Observer != nil {
			req.OnText = l.Observer.Text
		}
		res, err := l.Model.Chat(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", err
		}
		l.add(ctx, model.Message{Role: "assistant", Text: res.Text, ToolCalls: res.ToolCalls})
		if len(res.ToolCalls) == 0 {
			return res.Text, nil
		}
		if round >= max {
			l.answerAll(ctx, res.ToolCalls, fmt.Sprintf("not run: the turn reached model.max_tool_rounds (%d)", max))
			return res.Text, &RoundsError{Rounds: max}
		}
		results := l.runCalls(ctx, res.ToolCalls, offered)
		for i, c := range res.ToolCalls {
			l.add(ctx, model.Message{Role: "tool", ToolCallID: c.ID, Text: results[i]})
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
}

// add appends m to the conversation and records it.
func (l *Loop) add(ctx context.Context, m model.Message) {
	l.messages = append(l.messages, m)
	if l.Recorder == nil {
		return
	}
	// A cancelled turn's last messages are still recorded.
	if err := l.Recorder.Record(context.WithoutCancel(ctx), m); err != nil && !l.recordErr {
		l.recordErr = true
		l.notice(fmt.Sprintf("the conversation is not being recorded: %v", err))
	}
}

func (l *Loop) notice(s string) {
	if l.Observer != nil {
		l.Observer.Notice(s)
	}
}

func (l *Loop) reportDrift(ctx context.Context) {
	if l.Drift == nil {
		return
	}
	for _, line := range l.Drift.DriftReport(ctx) {
		if l.shownDrift == nil {
			l.shownDrift = map[string]bool{}
		}
		if !l.shownDrift[line] {
			l.shownDrift[line] = true
			l.notice(line)
		}
	}
}

// answerAll answers every call with the same error (calls the loop did not
// run), so that the conversation stays valid.
func (l *Loop) answerAll(ctx context.Context, calls []model.ToolCall, msg string) {
	for _, c := range calls {
		l.add(ctx, model.Message{Role: "tool", ToolCallID: c.ID, Text: toolview.ErrorResult(msg)})
	}
}

// runCalls runs one round's calls and returns their results in the
// model's order. Calls of parallel-safe servers run together; the others
// run one at a time, in order, beside them. offered are the names of the
// tools the round's request offered the model: a call of any other name
// is refused.
func (l *Loop) runCalls(ctx context.Context, calls []model.ToolCall, offered map[string]bool) []string {
	results := make([]string, len(calls))
	var wg sync.WaitGroup
	var serial []int
	for i, c := range calls {
		if l.Tools.ParallelSafe(c.Name) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = l.runCall(ctx, c, offered)
			}()
			continue
		}
		serial = append(serial, i)
	}
	for _, i := range serial {
		results[i] = l.runCall(ctx, calls[i], offered)
	}
	wg.Wait()
	return results
}

// cancelledResult is what the model is told of a call the person
// cancelled.
// It is built on first use: ErrorResult redacts, which compiles patterns.
var cancelledResult = sync.OnceValue(func() string { return toolview.ErrorResult(cancelledMsg) })

// cancelledMsg is what a person is shown of a call they cancelled.
const cancelledMsg = "the call was cancelled by the user"

// runCall runs one call: the tool checked to be one offered this round,
// arguments parsed, approval asked, the tool run.
func (l *Loop) runCall(ctx context.Context, mc model.ToolCall, offered map[string]bool) string {
	c := ToolCall{ID: mc.ID, Name: mc.Name, Arguments: mc.Arguments}
	if ctx.Err() != nil {
		return cancelledResult()
	}
	if !offered[mc.Name] {
		return l.fail(c, notOffered(mc.Name, offered))
	}
	args, err := argumentsObject(mc.Arguments)
	if err != nil {
		return l.fail(c, fmt.Sprintf("the arguments of %s are not a JSON object (%v); call it again with an object", mc.Name, err))
	}
	if l.Approver != nil && !searchTool(mc.Name) {
		raw := mc.Arguments
		if raw == "" {
			raw = "{}"
		}
		d, err := l.Approver.Decide(ctx, ApprovalRequest{Name: mc.Name, RawArguments: raw})
		switch {
		case ctx.Err() != nil:
			return cancelledResult()
		case err != nil:
			return l.fail(c, fmt.Sprintf("the call of %s was not approved: %v", mc.Name, err))
		case !d.Allow:
			reason := d.Reason
			if reason == "" {
				reason = "the user denied it"
			}
			return l.fail(c, fmt.Sprintf("the call of %s was not approved: %s", mc.Name, reason))
		}
	}
	if l.Observer != nil {
		l.Observer.ToolStart(c)
		ctx = registry.WithProgress(ctx, func(p registry.Progress) { l.Observer.Progress(c, p) })
	}
	r, err := l.Tools.Call(ctx, mc.Name, args)
	if err != nil {
		r.Failed = true
		if ctx.Err() != nil {
			r = toolview.Reply{Text: cancelledResult(), Failed: true, Error: cancelledMsg}
		}
	}
	l.end(c, r)
	return r.Text
}

// fail ends the call c with msg, told to the model, and returns what the
// model gets.
func (l *Loop) fail(c ToolCall, msg string) string {
	r := toolview.Failure(msg)
	l.end(c, r)
	return r.Text
}

func (l *Loop) end(c ToolCall, r toolview.Reply) {
	if l.Observer != nil {
		l.Observer.ToolEnd(c, r)
	}
}

// notOffered is what the model is told of a call of a tool the round did
// not offer: with tool search, to load it first.
func notOffered(name string, offered map[string]bool) string {
	if offered[toolview.LoadToolsName] {
		return toolview.NotLoaded(name)
	}
	shown := name
	if r := []rune(name); len(r) > 100 {
		shown = string(r[:100]) + "…"
	}
	return fmt.Sprintf("no tool %s is offered; call one of the tools you were given", shown)
}

// searchTool reports whether name is one of tool search's own tools.
func searchTool(name string) bool {
	return name == toolview.SearchToolsName || name == toolview.LoadToolsName
}

// parseArguments reads the model's arguments: an object, or nothing.
func parseArguments(s string) (map[string]any, error) {
	if s == "" {
		return map[string]any{}, nil
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(s), &args); err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// argumentsObject returns the model's arguments as the JSON object they
// are ({} for none or null), checked without decoding them; when they are
// not one, the error is what decoding them says.
func argumentsObject(s string) (json.RawMessage, error) {
	raw := bytes.TrimSpace([]byte(s))
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return json.RawMessage("{}"), nil
	case raw[0] == '{' && json.Valid(raw):
		return raw, nil
	}
	if _, err := parseArguments(s); err != nil {
		return nil, err
	}
	return json.RawMessage("{}"), nil
}

// functions are the tools as the model is offered them.
func functions(defs []toolview.ToolDef) []model.Tool {
	out := make([]model.Tool, 0, len(defs))
	for _, d := range defs {
		out = append(out, model.Tool{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	return out
}
