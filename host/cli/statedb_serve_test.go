package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/mcpvalue"

	"github.com/hermes-agent/hermes/host/approval"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/hermes-agent/hermes/statedb"
	"github.com/mark3labs/mcp-go/mcp"
)

// hostStateDB is a HERMES_HOME whose state.db the host side created and
// writes (statedb.Writer), as hermes chat does.
func hostStateDB(t *testing.T) (string, *statedb.Writer) {
	t.Helper()
	testbin.Path(t, "hermes-bridge-messaging")
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := statedb.OpenWriter(context.Background(), filepath.Join(home, statedb.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return home, w
}

// TestStateDBHostWritesBridgeReads: a terminal conversation written with
// the host's writer is read by the real bridge plugin through `hermes mcp
// serve`: conversations_list lists it under its terminal key,
// messages_read decodes its multipart content, and a pending events_wait
// wakes for a message appended while it waits (events_poll then has it
// too).
func TestStateDBHostWritesBridgeReads(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	home, w := hostStateDB(t)
	s, err := w.CreateSession(ctx, statedb.Session{Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	key := statedb.TerminalSessionKey(s.ID)
	parts, _ := statedb.EncodeParts([]any{statedb.TextPart("first line"), map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.test/a.png"}}, statedb.TextPart("second line")})
	for _, m := range []statedb.NewMessage{
		{Role: "user", Content: "hello from the terminal"},
		{Role: "assistant", ToolCalls: []statedb.ToolCall{{ID: "c1", Type: "function", Function: statedb.ToolCallFunction{Name: "mcp_fs_read", Arguments: "{}"}}}},
		{Role: "tool", ToolCallID: "c1", ToolName: "mcp_fs_read", Content: "tool output"},
		{Role: "assistant", Content: parts},
	} {
		if _, err := w.AppendMessage(ctx, s.ID, m); err != nil {
			t.Fatal(err)
		}
	}
	sc := startServeStdio(t, hermesTestEnv(t, home))

	var list struct {
		Conversations []map[string]any
	}
	if err := json.Unmarshal([]byte(text(t, sc.call(t, ctx, "conversations_list", nil))), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Conversations) != 1 || list.Conversations[0]["session_key"] != key || list.Conversations[0]["platform"] != "cli" ||
		list.Conversations[0]["session_id"] != s.ID {
		t.Fatalf("conversations_list = %+v, want the terminal session under %s", list.Conversations, key)
	}
	var read struct {
		Count    int
		Messages []struct {
			ID, Role, Content string
		}
	}
	out := text(t, sc.call(t, ctx, "messages_read", map[string]any{"session_key": key}))
	if err := json.Unmarshal([]byte(out), &read); err != nil {
		t.Fatal(err)
	}
	if read.Count != 2 || read.Messages[0].Content != "hello from the terminal" || read.Messages[1].Role != "assistant" ||
		read.Messages[1].Content != "first line\nsecond line" {
		t.Fatalf("messages_read = %s", out)
	}
	att := text(t, sc.call(t, ctx, "attachments_fetch", map[string]any{"session_key": key, "message_id": read.Messages[1].ID}))
	if !strings.Contains(att, "https://example.test/a.png") {
		t.Fatalf("attachments_fetch = %s", att)
	}

	got := make(chan string, 1)
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "events_wait"
		req.Params.Arguments = map[string]any{"after_cursor": 0, "session_key": key, "timeout_ms": 60000}
		r, err := sc.CallTool(ctx, req)
		if err != nil || r.IsError {
			t.Errorf("events_wait: %v %+v", err, r)
			got <- ""
			return
		}
		got <- text(t, r)
	}()
	if _, err := w.AppendMessage(ctx, s.ID, statedb.NewMessage{Role: "assistant", Content: "appended while waiting"}); err != nil {
		t.Fatal(err)
	}
	ev := <-got
	var event struct {
		Event map[string]any
	}
	if err := json.Unmarshal([]byte(ev), &event); err != nil || event.Event["type"] != "message" || event.Event["session_key"] != key ||
		event.Event["content"] != "appended while waiting" {
		t.Fatalf("events_wait = %s (%v)", ev, err)
	}
	poll := text(t, sc.call(t, ctx, "events_poll", map[string]any{"session_key": key}))
	if !strings.Contains(poll, "appended while waiting") {
		t.Fatalf("events_poll = %s", poll)
	}
}

// scriptedTerminal is the person at the terminal for the gate: Ask waits
// for an answer or the question's withdrawal.
type scriptedTerminal struct {
	mu      sync.Mutex
	said    []string
	asked   chan struct{}
	answers chan string
}

func (p *scriptedTerminal) Converse(ctx context.Context, fn func(elicit.Terminal) error) error {
	return fn(p)
}
func (p *scriptedTerminal) Say(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.said = append(p.said, text)
}
func (p *scriptedTerminal) Ask(ctx context.Context, prompt string) (string, error) {
	p.asked <- struct{}{}
	select {
	case a, ok := <-p.answers:
		if !ok {
			return "", io.EOF
		}
		return a, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
func (p *scriptedTerminal) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.said, "\n")
}

// openApproval waits until permissions_list_open lists one approval and
// returns it.
func openApproval(t *testing.T, ctx context.Context, sc *serveClient) map[string]any {
	t.Helper()
	var open struct {
		Count     int
		Approvals []map[string]any
	}
	testwait.For(t, 60*time.Second, "permissions_list_open to list the gate's approval", func() bool {
		if err := json.Unmarshal([]byte(text(t, sc.call(t, ctx, "permissions_list_open", nil))), &open); err != nil {
			t.Fatal(err)
		}
		return open.Count == 1
	})
	return open.Approvals[0]
}

// TestApprovalAnsweredThroughServe: a destructive call waits at the gate
// (asking a terminal that does not answer); an MCP client of a second
// process, `hermes mcp serve`, lists the approval and allows it: the gate
// proceeds with that decision, the terminal question is withdrawn with a
// line saying so, and a second permissions_respond learns the approval
// was already decided.
func TestApprovalAnsweredThroughServe(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	home, w := hostStateDB(t)
	sc := startServeStdio(t, hermesTestEnv(t, home))
	person := &scriptedTerminal{asked: make(chan struct{}, 4), answers: make(chan string)}
	gate := approval.New(w, approval.DefaultSettings(), person, nil)
	destructive := true
	type result struct {
		d   approval.Decision
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := gate.Decide(ctx, approval.Request{Server: "fs", Tool: "delete_file", Name: "mcp_fs_delete_file",
			Arguments: json.RawMessage(`{"path":"notes.txt"}`), Annotations: mcpvalue.Annotations{Destructive: &destructive},
			SessionKey: "agent:main:cli:dm:x"})
		done <- result{d, err}
	}()
	a := openApproval(t, ctx, sc)
	if a["kind"] != "tool" || !strings.Contains(a["description"].(string), "mcp_fs_delete_file") ||
		!strings.Contains(a["description"].(string), `path: "notes.txt"`) || a["session_key"] != "agent:main:cli:dm:x" {
		t.Fatalf("approval listed as %+v", a)
	}
	<-person.asked
	res := sc.call(t, ctx, "permissions_respond", map[string]any{"id": a["id"], "decision": "allow-once"})
	if res.IsError || !strings.Contains(text(t, res), `"resolved": true`) {
		t.Fatalf("permissions_respond = %s", text(t, res))
	}
	r := <-done
	if r.err != nil || !r.d.Allowed || r.d.By != approval.ByServe || r.d.Verdict != "allow-once" {
		t.Fatalf("gate decided %+v (%v)", r.d, r.err)
	}
	if !strings.Contains(person.text(), "Answered through hermes mcp serve: allow-once (this question is withdrawn).") {
		t.Fatalf("terminal showed:\n%s", person.text())
	}
	res = sc.call(t, ctx, "permissions_respond", map[string]any{"id": a["id"], "decision": "deny"})
	if !res.IsError || !strings.Contains(text(t, res), "already decided (allow-once)") {
		t.Fatalf("second permissions_respond = %s", text(t, res))
	}
}

// TestApprovalBothAnswerAtOnce: the person and a client of `hermes mcp
// serve` answer one approval at the same moment, several times: exactly
// one answer stands each time, the gate acts on it, and an allow-always
// that stood is remembered for a new gate and shown by `hermes mcp get`.
func TestApprovalBothAnswerAtOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	home, w := hostStateDB(t)
	writeConfig(t, home, "mcp_servers:\n  fs:\n    command: /bin/true\n")
	sc := startServeStdio(t, hermesTestEnv(t, home))
	destructive := true
	for round := range 3 {
		tool := "tool" + string(rune('a'+round))
		person := &scriptedTerminal{asked: make(chan struct{}, 4), answers: make(chan string, 1)}
		gate := approval.New(w, approval.DefaultSettings(), person, nil)
		done := make(chan approval.Decision, 1)
		go func() {
			d, err := gate.Decide(ctx, approval.Request{Server: "fs", Tool: tool, Name: "mcp_fs_" + tool,
				Annotations: mcpvalue.Annotations{Destructive: &destructive}})
			if err != nil {
				t.Error(err)
			}
			done <- d
		}()
		a := openApproval(t, ctx, sc)
		<-person.asked
		person.answers <- "d"                                                                                    // the person denies ...
		res := sc.call(t, ctx, "permissions_respond", map[string]any{"id": a["id"], "decision": "allow-always"}) // ... as serve allows always
		d := <-done
		switch d.By {
		case approval.ByTerminal:
			if d.Allowed || !res.IsError || !strings.Contains(text(t, res), "already decided (deny)") {
				t.Fatalf("round %d: the terminal's deny stood, serve got %s", round, text(t, res))
			}
		case approval.ByServe:
			if !d.Allowed || d.Verdict != "allow-always" || res.IsError {
				t.Fatalf("round %d: serve's allow-always stood (%s), gate decided %+v", round, text(t, res), d)
			}
			again, err := approval.New(w, approval.DefaultSettings(), nil, nil).Decide(ctx, approval.Request{Server: "fs", Tool: tool, Name: "mcp_fs_" + tool,
				Annotations: mcpvalue.Annotations{Destructive: &destructive}})
			if err != nil || again.By != approval.ByRemembered {
				t.Fatalf("round %d: allow-always not remembered: %+v %v", round, again, err)
			}
			got := runHermes(t, home, "mcp", "get", "fs")
			if !strings.Contains(got.stdout+got.stderr, "Always allowed (no approval asked): "+tool) {
				t.Fatalf("hermes mcp get fs:\n%s%s", got.stdout, got.stderr)
			}
			got = runHermes(t, home, "mcp", "get", "fs", "--revoke", tool)
			if strings.Contains(got.stdout, "Always allowed") {
				t.Fatalf("after --revoke:\n%s", got.stdout)
			}
		default:
			t.Fatalf("round %d: decided by %s", round, d.By)
		}
	}
}
