package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/agent"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/toolview"
)

// scripted is a model that answers from a script and keeps each request.
type scripted struct {
	mu      sync.Mutex
	replies []*model.Response
	reqs    []model.Request
	err     error
}

func (s *scripted) Chat(ctx context.Context, req model.Request) (*model.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Messages = append([]model.Message(nil), req.Messages...)
	s.reqs = append(s.reqs, req)
	if s.err != nil {
		return nil, s.err
	}
	if len(s.replies) == 0 {
		return &model.Response{Text: "(script ended)"}, nil
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	if req.OnText != nil && r.Text != "" {
		for _, w := range strings.SplitAfter(r.Text, " ") {
			req.OnText(w)
		}
	}
	return r, nil
}

func calls(cs ...string) *model.Response {
	r := &model.Response{FinishReason: "tool_calls"}
	for i := 0; i+1 < len(cs); i += 2 {
		r.ToolCalls = append(r.ToolCalls, model.ToolCall{ID: fmt.Sprintf("call_%d", i/2), Name: cs[i], Arguments: cs[i+1]})
	}
	return r
}

// tools is a registry with a few tools; call runs fn.
type tools struct {
	defs     []toolview.ToolDef
	parallel map[string]bool
	fn       func(ctx context.Context, name string, args map[string]any) (string, error)
	mu       sync.Mutex
	called   []string
}

func (t *tools) Tools() []toolview.ToolDef     { return t.defs }
func (t *tools) ParallelSafe(name string) bool { return t.parallel[name] }
func (t *tools) Call(ctx context.Context, name string, raw json.RawMessage) (toolview.Reply, error) {
	t.mu.Lock()
	t.called = append(t.called, name)
	t.mu.Unlock()
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return toolview.Reply{}, fmt.Errorf("the loop handed on arguments that are not an object: %s", raw)
	}
	text, err := t.fn(ctx, name, args)
	return toolview.Reply{Text: text, Failed: err != nil}, err
}

func newTools(fn func(ctx context.Context, name string, args map[string]any) (string, error), parallel ...string) *tools {
	t := &tools{fn: fn, parallel: map[string]bool{}}
	for _, n := range []string{"mcp_a_echo", "mcp_a_slow", "mcp_b_echo", "mcp_b_other"} {
		server, tool, _ := strings.Cut(strings.TrimPrefix(n, "mcp_"), "_")
		t.defs = append(t.defs, toolview.ToolDef{Name: n, Description: "d " + n, Server: server, OriginalName: tool,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{}}})
	}
	for _, p := range parallel {
		t.parallel[p] = true
	}
	return t
}

func echo(_ context.Context, name string, args map[string]any) (string, error) {
	return fmt.Sprintf(`{"result":"%s:%v"}`, name, args["message"]), nil
}

// observer keeps what a person would see.
type observer struct {
	mu      sync.Mutex
	text    strings.Builder
	started []string
	ended   []string
	notices []string
	prog    []registry.Progress
}

func (o *observer) Text(d string) { o.mu.Lock(); o.text.WriteString(d); o.mu.Unlock() }
func (o *observer) ToolStart(c agent.ToolCall) {
	o.mu.Lock()
	o.started = append(o.started, c.Name)
	o.mu.Unlock()
}
func (o *observer) Progress(c agent.ToolCall, p registry.Progress) {
	o.mu.Lock()
	o.prog = append(o.prog, p)
	o.mu.Unlock()
}
func (o *observer) ToolEnd(c agent.ToolCall, r toolview.Reply) {
	o.mu.Lock()
	o.ended = append(o.ended, fmt.Sprintf("%s %v", c.Name, r.Failed))
	o.mu.Unlock()
}
func (o *observer) Notice(l string) { o.mu.Lock(); o.notices = append(o.notices, l); o.mu.Unlock() }

// wait fails the test when ch is not closed within a bound far beyond
// any machine's pace (it guards against a deadlock, not a slow run).
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s never happened", what)
	}
}

func TestTurnFeedsResultsBackAndStreams(t *testing.T) {
	m := &scripted{replies: []*model.Response{
		calls("mcp_a_echo", `{"message":"one"}`, "mcp_b_echo", `{"message":"two"}`),
		{Text: "both said hello", FinishReason: "stop"},
	}}
	tl := newTools(echo)
	obs := &observer{}
	l := &agent.Loop{Model: m, Tools: tl, Observer: obs, ModelName: "m1", System: "be brief"}
	text, err := l.Turn(context.Background(), "call both")
	if err != nil || text != "both said hello" {
		t.Fatalf("turn: %q %v", text, err)
	}
	if obs.text.String() != "both said hello" {
		t.Errorf("streamed %q", obs.text.String())
	}
	if len(m.reqs) != 2 {
		t.Fatalf("want 2 model requests, got %d", len(m.reqs))
	}
	first := m.reqs[0]
	if first.Model != "m1" || len(first.Tools) != 4 || first.Tools[0].Name != "mcp_a_echo" || first.Tools[0].Description != "d mcp_a_echo" {
		t.Errorf("first request: %+v", first)
	}
	msgs := m.reqs[1].Messages
	roles := []string{}
	for _, mm := range msgs {
		roles = append(roles, mm.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,tool" {
		t.Fatalf("roles %v", roles)
	}
	if msgs[3].ToolCallID != "call_0" || msgs[3].Text != `{"result":"mcp_a_echo:one"}` ||
		msgs[4].ToolCallID != "call_1" || msgs[4].Text != `{"result":"mcp_b_echo:two"}` {
		t.Errorf("tool messages: %+v %+v", msgs[3], msgs[4])
	}
	// A second turn continues the conversation.
	m.replies = []*model.Response{{Text: "again"}}
	if _, err := l.Turn(context.Background(), "more"); err != nil {
		t.Fatal(err)
	}
	if n := len(m.reqs[2].Messages); n != 7 {
		t.Errorf("second turn sent %d messages, want 7", n)
	}
}

// Calls of parallel-safe servers run at the same time: each of the two
// waits until the other has started, which only concurrent calls can do.
// The calls of other servers run one at a time.
func TestParallelSafeCallsRunTogether(t *testing.T) {
	var started sync.WaitGroup
	started.Add(2)
	both := make(chan struct{})
	go func() { started.Wait(); close(both) }()
	var mu sync.Mutex
	running, maxSerial := 0, 0
	fn := func(ctx context.Context, name string, args map[string]any) (string, error) {
		if strings.HasPrefix(name, "mcp_b_") {
			started.Done()
			select {
			case <-both:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			return `{"result":"ok"}`, nil
		}
		mu.Lock()
		running++
		maxSerial = max(maxSerial, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		return `{"result":"ok"}`, nil
	}
	m := &scripted{replies: []*model.Response{
		calls("mcp_b_echo", `{}`, "mcp_a_echo", `{}`, "mcp_b_other", `{}`, "mcp_a_slow", `{}`),
		{Text: "done"},
	}}
	l := &agent.Loop{Model: m, Tools: newTools(fn, "mcp_b_echo", "mcp_b_other")}
	done := make(chan struct{})
	var text string
	var err error
	go func() { text, err = l.Turn(context.Background(), "go"); close(done) }()
	wait(t, done, "the turn's end (parallel calls did not run together)")
	if err != nil || text != "done" {
		t.Fatalf("%q %v", text, err)
	}
	if maxSerial != 1 {
		t.Errorf("serial calls overlapped: %d at once", maxSerial)
	}
}

func TestMaxToolRounds(t *testing.T) {
	m := &scripted{}
	for range 5 {
		m.replies = append(m.replies, calls("mcp_a_echo", `{"message":"x"}`))
	}
	tl := newTools(echo)
	l := &agent.Loop{Model: m, Tools: tl, MaxToolRounds: 2}
	_, err := l.Turn(context.Background(), "loop")
	var re *agent.RoundsError
	if !errors.As(err, &re) || re.Rounds != 2 || !strings.Contains(err.Error(), "model.max_tool_rounds") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want a RoundsError naming the key, got %v", err)
	}
	if len(tl.called) != 2 || len(m.reqs) != 3 {
		t.Errorf("ran %d calls over %d requests", len(tl.called), len(m.reqs))
	}
	// Every call of the conversation is answered: the next turn is valid.
	msgs := l.Messages()
	last := msgs[len(msgs)-1]
	if last.Role != "tool" || !strings.Contains(last.Text, "not run") {
		t.Errorf("last message %+v", last)
	}
}

type approver struct {
	mu   sync.Mutex
	seen []agent.ApprovalRequest
}

func (a *approver) Decide(_ context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	a.mu.Lock()
	a.seen = append(a.seen, r)
	a.mu.Unlock()
	switch r.Name {
	case "mcp_b_other":
		return agent.Decision{Reason: "not today"}, nil
	case "mcp_a_slow":
		return agent.Decision{}, errors.New("approval timed out")
	}
	return agent.Decision{Allow: true}, nil
}

type recorder struct {
	msgs []model.Message
	fail bool
}

func (r *recorder) Record(_ context.Context, m model.Message) error {
	if r.fail {
		return errors.New("database is locked")
	}
	r.msgs = append(r.msgs, m)
	return nil
}

type drift []string

func (d drift) DriftReport(context.Context) []string { return d }

func TestApproverRecorderDrift(t *testing.T) {
	m := &scripted{replies: []*model.Response{
		calls("mcp_a_echo", `{"message":"hi"}`, "mcp_b_other", `{}`, "mcp_a_slow", `{}`),
		{Text: "ok"},
	}}
	tl := newTools(echo)
	ap := &approver{}
	rec := &recorder{}
	obs := &observer{}
	l := &agent.Loop{Model: m, Tools: tl, Approver: ap, Recorder: rec, Observer: obs,
		Drift: drift{"tool mcp_a_echo changed its description"}}
	if _, err := l.Turn(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if len(tl.called) != 1 || tl.called[0] != "mcp_a_echo" {
		t.Errorf("called %v; only the approved call should run", tl.called)
	}
	if len(ap.seen) != 3 || ap.seen[0].Name != "mcp_a_echo" || ap.seen[0].RawArguments != `{"message":"hi"}` {
		t.Errorf("approval requests %+v", ap.seen)
	}
	msgs := l.Messages()
	if !strings.Contains(msgs[3].Text, "not today") || !strings.Contains(msgs[4].Text, "approval timed out") {
		t.Errorf("denials told to the model: %q %q", msgs[3].Text, msgs[4].Text)
	}
	if len(rec.msgs) != len(msgs) {
		t.Errorf("recorded %d of %d messages", len(rec.msgs), len(msgs))
	}
	if len(obs.notices) != 1 || !strings.Contains(obs.notices[0], "changed its description") {
		t.Errorf("drift shown %v (once, though asked twice)", obs.notices)
	}

	failing := &recorder{fail: true}
	obs = &observer{}
	m.replies = []*model.Response{{Text: "a"}}
	l = &agent.Loop{Model: m, Tools: tl, Recorder: failing, Observer: obs}
	l.Turn(context.Background(), "1")
	m.replies = []*model.Response{{Text: "b"}}
	l.Turn(context.Background(), "2")
	if len(obs.notices) != 1 || !strings.Contains(obs.notices[0], "database is locked") {
		t.Errorf("recorder failure notices %v", obs.notices)
	}
}

func TestCancelledCallKeepsTheConversationValid(t *testing.T) {
	inCall := make(chan struct{})
	fn := func(ctx context.Context, name string, args map[string]any) (string, error) {
		close(inCall)
		<-ctx.Done()
		return toolview.ErrorResult("MCP call interrupted"), ctx.Err()
	}
	m := &scripted{replies: []*model.Response{calls("mcp_a_slow", `{}`)}}
	l := &agent.Loop{Model: m, Tools: newTools(fn)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-inCall; cancel() }()
	_, err := l.Turn(ctx, "slow")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	msgs := l.Messages()
	last := msgs[len(msgs)-1]
	if last.Role != "tool" || last.ToolCallID != "call_0" || !strings.Contains(last.Text, "cancelled by the user") {
		t.Errorf("last message %+v", last)
	}
}

func TestBadArgumentsAndModelErrors(t *testing.T) {
	m := &scripted{replies: []*model.Response{calls("mcp_a_echo", `{"message":`), {Text: "sorry"}}}
	tl := newTools(echo)
	obs := &observer{}
	l := &agent.Loop{Model: m, Tools: tl, Observer: obs}
	if _, err := l.Turn(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if len(tl.called) != 0 || !strings.Contains(l.Messages()[2].Text, "not a JSON object") {
		t.Errorf("bad arguments: called %v, told %q", tl.called, l.Messages()[2].Text)
	}
	if len(obs.ended) != 1 || obs.ended[0] != "mcp_a_echo true" {
		t.Errorf("ended %v", obs.ended)
	}
	want := &model.Error{Kind: model.KindRateLimited}
	m.err = want
	if _, err := l.Turn(context.Background(), "y"); !errors.Is(err, want) {
		t.Errorf("model error %v", err)
	}
}

func TestProgressReachesTheObserver(t *testing.T) {
	fn := func(ctx context.Context, name string, args map[string]any) (string, error) {
		// What the registry does with the context's callback.
		p := registry.ProgressFrom(ctx)
		p(registry.Progress{Progress: 1, Total: 2, Message: "half"})
		return `{"result":"ok"}`, nil
	}
	m := &scripted{replies: []*model.Response{calls("mcp_a_slow", `{}`), {Text: "ok"}}}
	obs := &observer{}
	l := &agent.Loop{Model: m, Tools: newTools(fn), Observer: obs}
	if _, err := l.Turn(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if len(obs.prog) != 1 || obs.prog[0].Message != "half" || len(obs.started) != 1 {
		t.Errorf("progress %+v started %v", obs.prog, obs.started)
	}
}

// A call of a tool the round did not offer is refused before anything
// else: the approver is not asked, the tool does not run, and the model
// is told what to do (with tool search, to load it first).
func TestCallOfToolNotOfferedIsRefused(t *testing.T) {
	tl := newTools(echo)
	all := tl.defs
	tl.defs = all[:1] // only mcp_a_echo is offered
	m := &scripted{replies: []*model.Response{
		calls("mcp_b_other", `{}`, "mcp_a_echo", `{"message":"hi"}`),
		{Text: "ok"},
	}}
	ap := &approver{}
	obs := &observer{}
	l := &agent.Loop{Model: m, Tools: tl, Approver: ap, Observer: obs}
	if _, err := l.Turn(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if len(tl.called) != 1 || tl.called[0] != "mcp_a_echo" {
		t.Errorf("called %v; the tool not offered must not run", tl.called)
	}
	if len(ap.seen) != 1 || ap.seen[0].Name != "mcp_a_echo" {
		t.Errorf("approver asked about %+v", ap.seen)
	}
	if got := l.Messages()[2].Text; !strings.Contains(got, "no tool mcp_b_other is offered") {
		t.Errorf("the model was told %q", got)
	}
	if len(obs.started) != 1 || len(obs.ended) != 2 || !slices.Contains(obs.ended, "mcp_b_other true") {
		t.Errorf("started %v ended %v", obs.started, obs.ended)
	}

	// With tool search the model is told to load the tool.
	tl.defs = append(toolview.SearchToolDefs(), all[0])
	tl.called = nil
	m.replies = []*model.Response{calls("mcp_b_other", `{}`), {Text: "ok"}}
	if _, err := l.Turn(context.Background(), "y"); err != nil {
		t.Fatal(err)
	}
	msgs := l.Messages()
	if got := msgs[len(msgs)-2].Text; !strings.Contains(got, "tool mcp_b_other is not loaded: call load_tools with its name first") {
		t.Errorf("with tool search the model was told %q", got)
	}
	if len(tl.called) != 0 {
		t.Errorf("called %v", tl.called)
	}
}

// SetSystem between turns replaces the system message the next request
// carries (the servers changed at /reload-mcp), or adds one first; the
// system message is never recorded as a message.
func TestSetSystemReplacesTheSystemMessage(t *testing.T) {
	m := &scripted{}
	rec := &recorder{}
	l := &agent.Loop{Model: m, Tools: newTools(echo), System: "old", Recorder: rec}
	if _, err := l.Turn(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	l.SetSystem("new")
	if _, err := l.Turn(context.Background(), "two"); err != nil {
		t.Fatal(err)
	}
	msgs := m.reqs[1].Messages
	if msgs[0].Role != "system" || msgs[0].Text != "new" || len(msgs) != 4 {
		t.Fatalf("after SetSystem: %+v", msgs)
	}
	// The system prompt is kept with the recorded session, not as a
	// message of the conversation.
	for _, r := range rec.msgs {
		if r.Role == "system" {
			t.Fatalf("the system message was recorded: %+v", rec.msgs)
		}
	}
	if len(rec.msgs) != 4 {
		t.Fatalf("recorded %d messages, want the 4 of the two turns", len(rec.msgs))
	}

	m2 := &scripted{}
	l2 := &agent.Loop{Model: m2, Tools: newTools(echo)}
	if _, err := l2.Turn(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	l2.SetSystem("added")
	if _, err := l2.Turn(context.Background(), "two"); err != nil {
		t.Fatal(err)
	}
	if msgs := m2.reqs[1].Messages; msgs[0].Role != "system" || msgs[0].Text != "added" || msgs[1].Text != "one" {
		t.Fatalf("SetSystem on a conversation without one: %+v", msgs)
	}
}

// flagTools answers every call with reply, as the registry does: its
// Failed is the result's isError flag.
type flagTools struct {
	reply toolview.Reply
	args  []string
}

func (t *flagTools) Tools() []toolview.ToolDef {
	return []toolview.ToolDef{{Name: "mcp_a_echo", Server: "a", OriginalName: "echo", Parameters: map[string]any{"type": "object"}}}
}
func (t *flagTools) ParallelSafe(string) bool { return false }
func (t *flagTools) Call(_ context.Context, _ string, args json.RawMessage) (toolview.Reply, error) {
	t.args = append(t.args, string(args))
	return t.reply, nil
}

// Whether a call failed is the result's flag, not what its text looks
// like: a tool's isError result fails, a successful result whose text is
// an {"error": ...} object does not. The arguments reach the registry as
// the model wrote them.
func TestToolEndUsesResultFlag(t *testing.T) {
	for _, tt := range []struct {
		reply  toolview.Reply
		failed string
	}{
		{toolview.Reply{Text: `{"error":"no such file"}`, Failed: true, Error: "no such file"}, "mcp_a_echo true"},
		{toolview.Reply{Text: `{"error":"a value the tool returned"}`}, "mcp_a_echo false"},
	} {
		tl := &flagTools{reply: tt.reply}
		obs := &observer{}
		m := &scripted{replies: []*model.Response{
			calls("mcp_a_echo", `{"path": "x.txt", "n": 1.50}`),
			{Text: "done"},
		}}
		l := &agent.Loop{Model: m, Tools: tl, Observer: obs}
		if _, err := l.Turn(context.Background(), "x"); err != nil {
			t.Fatal(err)
		}
		if len(obs.ended) != 1 || obs.ended[0] != tt.failed {
			t.Errorf("reply %+v: ended %v, want %q", tt.reply, obs.ended, tt.failed)
		}
		if len(tl.args) != 1 || tl.args[0] != `{"path": "x.txt", "n": 1.50}` {
			t.Errorf("arguments handed on as %q", tl.args)
		}
	}
}
