package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/hermes-agent/hermes/statedb"
)

var ctx = context.Background()

func writer(t *testing.T) *statedb.Writer {
	t.Helper()
	w, err := statedb.OpenWriter(ctx, filepath.Join(t.TempDir(), statedb.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// person is a scripted terminal: Ask waits for a line from answers (or
// ctx's end), and everything said is kept.
type person struct {
	mu      sync.Mutex
	said    []string
	asked   chan string // each prompt, as it is asked
	answers chan string // closed: the input ended
}

func newPerson() *person {
	return &person{asked: make(chan string, 16), answers: make(chan string, 16)}
}

func (p *person) Converse(ctx context.Context, fn func(elicit.Terminal) error) error { return fn(p) }
func (p *person) Say(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.said = append(p.said, text)
}
func (p *person) Ask(ctx context.Context, prompt string) (string, error) {
	p.asked <- prompt
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
func (p *person) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.said, "\n")
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func destructive(name string) Request {
	return Request{Server: "fs", Tool: name, Name: "mcp_fs_" + name, Arguments: json.RawMessage("{\"path\": \"/tmp/x\x1b[31m\"}"),
		Annotations: mcpvalue.Annotations{Destructive: yes()}}
}

// TestRequired: destructive tools and approval.require's globs over
// model-visible names need a decision; others do not and are never
// recorded.
func TestRequired(t *testing.T) {
	w := writer(t)
	g := New(w, Settings{Require: []string{"mcp_git_push*", "mcp_*_exec"}}, nil, nil)
	for _, tc := range []struct {
		r    Request
		want bool
	}{
		{destructive("delete"), true},
		{Request{Server: "fs", Tool: "read", Name: "mcp_fs_read", Annotations: mcpvalue.Annotations{Destructive: no()}}, false},
		{Request{Server: "fs", Tool: "read", Name: "mcp_fs_read"}, false},
		// mcp-go's servers send destructiveHint: true beside readOnlyHint:
		// true; a read-only tool destroys nothing.
		{Request{Server: "fs", Tool: "read", Name: "mcp_fs_read", Annotations: mcpvalue.Annotations{Destructive: yes(), ReadOnly: yes()}}, false},
		{Request{Server: "git", Tool: "push", Name: "mcp_git_push_tags"}, true},
		{Request{Server: "sh", Tool: "exec", Name: "mcp_sh_exec"}, true},
		{Request{Server: "git", Tool: "push", Name: "git_push"}, false},
		// Approved as destructive, listed read-only now: a server cannot
		// drop the marking after approval to skip the question.
		{Request{Server: "fs", Tool: "rm", Name: "mcp_fs_rm", Annotations: mcpvalue.Annotations{Destructive: yes(), ReadOnly: yes()},
			Approved: &mcpvalue.Annotations{Destructive: yes()}}, true},
		{Request{Server: "fs", Tool: "rm", Name: "mcp_fs_rm", Approved: &mcpvalue.Annotations{Destructive: yes(), ReadOnly: no()}}, true},
		// Approved read-only, destructive now: asks too.
		{Request{Server: "fs", Tool: "rm", Name: "mcp_fs_rm", Annotations: mcpvalue.Annotations{Destructive: yes()},
			Approved: &mcpvalue.Annotations{Destructive: yes(), ReadOnly: yes()}}, true},
		{Request{Server: "fs", Tool: "ls", Name: "mcp_fs_ls", Annotations: mcpvalue.Annotations{ReadOnly: yes()},
			Approved: &mcpvalue.Annotations{Destructive: yes(), ReadOnly: yes()}}, false},
	} {
		if got := g.Required(tc.r); got != tc.want {
			t.Errorf("Required(%s) = %v, want %v", tc.r.Name, got, tc.want)
		}
	}
	d, err := g.Decide(ctx, Request{Server: "fs", Tool: "read", Name: "mcp_fs_read"})
	if err != nil || !d.Allowed || d.By != ByPolicy || d.ApprovalID != "" {
		t.Fatalf("not required: %+v %v", d, err)
	}
	if open, _ := statedb.OpenApprovals(ctx, w.DB()); len(open) != 0 {
		t.Fatalf("a call that needs no approval recorded %+v", open)
	}
}

// TestTerminalAllowAlways: the person answers "a"; the call runs, the row
// records allow-always, and a new Gate (a new process) lets the tool run
// without asking; revoking asks again.
func TestTerminalAllowAlways(t *testing.T) {
	w := writer(t)
	p := newPerson()
	g := New(w, DefaultSettings(), p, nil)
	p.answers <- "maybe"
	p.answers <- "a"
	d, err := g.Decide(ctx, destructive("delete"))
	if err != nil || !d.Allowed || d.By != ByTerminal || d.Verdict != statedb.DecisionAllowAlways {
		t.Fatalf("decision %+v %v", d, err)
	}
	said := p.text()
	if !strings.Contains(said, "mcp_fs_delete") || !strings.Contains(said, `\x1b[31m`) || strings.Contains(said, "\x1b") || !strings.Contains(said, "Type o, a or d.") {
		t.Fatalf("terminal showed:\n%s", said)
	}
	row, _, _ := statedb.GetApproval(ctx, w.DB(), d.ApprovalID)
	if row.Decision != statedb.DecisionAllowAlways || !strings.Contains(row.Description, `\x1b[31m`) {
		t.Fatalf("row %+v", row)
	}
	g2 := New(w, Settings{Timeout: 200 * time.Millisecond}, nil, nil)
	d, err = g2.Decide(ctx, destructive("delete"))
	if err != nil || !d.Allowed || d.By != ByRemembered {
		t.Fatalf("remembered: %+v %v", d, err)
	}
	if d, _ := g2.Decide(ctx, destructive("other")); d.By != ByTimeout {
		t.Fatal("allow-always of one tool allowed another")
	}
	if n, err := g2.Revoke(ctx, "fs", "delete"); err != nil || n != 1 {
		t.Fatalf("revoke: %d %v", n, err)
	}
	p.answers <- "d"
	if d, err := g.Decide(ctx, destructive("delete")); err != nil || d.Allowed || d.By != ByTerminal || d.Reason == "" {
		t.Fatalf("after revoke: %+v %v", d, err)
	}
}

// An allow-always is kept under the request's GrantKey: a project's server
// of the same name as the user's (another key) does not inherit it.
func TestAllowAlwaysKeptUnderGrantKey(t *testing.T) {
	w := writer(t)
	p := newPerson()
	g := New(w, DefaultSettings(), p, nil)
	p.answers <- "a"
	if d, err := g.Decide(ctx, destructive("delete")); err != nil || !d.Allowed {
		t.Fatalf("decision %+v %v", d, err)
	}
	project := destructive("delete")
	project.GrantKey = "fs@0123456789ab"
	timed := New(w, Settings{Timeout: 200 * time.Millisecond}, nil, nil)
	if d, _ := timed.Decide(ctx, project); d.By == ByRemembered || d.Allowed {
		t.Fatalf("the project's fs was allowed by the user's fs grant: %+v", d)
	}
	if d, _ := timed.Decide(ctx, destructive("delete")); d.By != ByRemembered {
		t.Fatalf("the user's grant: %+v", d)
	}
}

// respondWhenOpen answers the first open approval through its own
// connection (as hermes mcp serve does, from another process).
func respondWhenOpen(t *testing.T, w *statedb.Writer, decision string) (statedb.Approval, error) {
	t.Helper()
	other, err := statedb.OpenWrite(w.Path())
	if err != nil {
		t.Error(err)
		return statedb.Approval{}, err
	}
	defer other.Close()
	var open []statedb.Approval
	if !testwait.Until(2*time.Minute, func() bool {
		open, err = statedb.OpenApprovals(ctx, other)
		return err != nil || len(open) > 0
	}) {
		t.Error("no approval was opened within 2 minutes")
		return statedb.Approval{}, errors.New("no approval opened")
	}
	if err != nil {
		t.Error(err)
		return statedb.Approval{}, err
	}
	return statedb.Respond(ctx, other, open[0].ID, decision)
}

// TestServeAnswersFirst: while the person has not answered, another
// connection decides: the gate proceeds with that decision and the
// question is withdrawn with a line saying so.
func TestServeAnswersFirst(t *testing.T) {
	w := writer(t)
	p := newPerson()
	g := New(w, DefaultSettings(), p, nil)
	go func() {
		<-p.asked
		if _, err := respondWhenOpen(t, w, statedb.DecisionAllowOnce); err != nil {
			t.Error(err)
		}
	}()
	d, err := g.Decide(ctx, destructive("delete"))
	if err != nil || !d.Allowed || d.By != ByServe || d.Verdict != statedb.DecisionAllowOnce {
		t.Fatalf("decision %+v %v", d, err)
	}
	if !strings.Contains(p.text(), "Answered through hermes mcp serve: allow-once (this question is withdrawn).") {
		t.Fatalf("terminal showed:\n%s", p.text())
	}
}

// TestNoTerminal: without a person, the row waits for serve.
func TestNoTerminal(t *testing.T) {
	for name, p := range map[string]elicit.Prompter{"nil": nil, "no person": noPerson{}} {
		t.Run(name, func(t *testing.T) {
			w := writer(t)
			g := New(w, DefaultSettings(), p, nil)
			go respondWhenOpen(t, w, statedb.DecisionDeny)
			d, err := g.Decide(ctx, destructive("delete"))
			if err != nil || d.Allowed || d.By != ByServe {
				t.Fatalf("decision %+v %v", d, err)
			}
		})
	}
}

type noPerson struct{}

func (noPerson) Converse(context.Context, func(elicit.Terminal) error) error {
	return elicit.ErrNoPerson
}

// TestTimeoutDenies: nobody answers; the gate denies at approval.timeout,
// records it, and says so on the terminal; a later respond is refused as
// already decided.
func TestTimeoutDenies(t *testing.T) {
	w := writer(t)
	p := newPerson()
	g := New(w, Settings{Timeout: 300 * time.Millisecond}, p, nil)
	d, err := g.Decide(ctx, destructive("delete"))
	if err != nil || d.Allowed || d.By != ByTimeout || !strings.Contains(d.Reason, "approval.timeout") {
		t.Fatalf("decision %+v %v", d, err)
	}
	if !strings.Contains(p.text(), "(approval.timeout): denied.") {
		t.Fatalf("terminal showed:\n%s", p.text())
	}
	_, err = statedb.Respond(ctx, w.DB(), d.ApprovalID, statedb.DecisionAllowOnce)
	var nf *statedb.NotFoundError
	if !errors.As(err, &nf) || !nf.Decided || nf.Decision != statedb.DecisionDeny {
		t.Fatalf("respond after the timeout: %v", err)
	}
}

// TestBothAtOnce: the person and serve answer the same question at the
// same moment, many times: exactly one answer stands, the gate acts on
// the row's decision, and the loser is told.
func TestBothAtOnce(t *testing.T) {
	w := writer(t)
	other, err := statedb.OpenWrite(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for round := range 10 {
		p := newPerson()
		g := New(w, DefaultSettings(), p, nil)
		var serveErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-p.asked
			open, err := statedb.OpenApprovals(ctx, other)
			if err != nil || len(open) != 1 {
				serveErr = errors.Join(err, errors.New("no open approval"))
				return
			}
			p.answers <- "o"                                                            // the person answers allow-once ...
			_, serveErr = statedb.Respond(ctx, other, open[0].ID, statedb.DecisionDeny) // ... as serve denies
		}()
		d, err := g.Decide(ctx, destructive("delete"))
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		row, _, _ := statedb.GetApproval(ctx, other, d.ApprovalID)
		if row.Decision != d.Verdict {
			t.Fatalf("round %d: gate acted on %q, the row says %q", round, d.Verdict, row.Decision)
		}
		switch d.By {
		case ByTerminal:
			if !errors.Is(serveErr, statedb.ErrAlreadyDecided) || d.Verdict != statedb.DecisionAllowOnce {
				t.Fatalf("round %d: terminal won, serve got %v", round, serveErr)
			}
		case ByServe:
			if serveErr != nil || d.Verdict != statedb.DecisionDeny || !strings.Contains(p.text(), "hermes mcp serve: deny") {
				t.Fatalf("round %d: serve won (%v), terminal said:\n%s", round, serveErr, p.text())
			}
		default:
			t.Fatalf("round %d: decided by %s", round, d.By)
		}
	}
}

// TestCancelDenies: the caller gives up while waiting: the row is denied
// so that a later answer cannot run the call.
func TestCancelDenies(t *testing.T) {
	w := writer(t)
	p := newPerson()
	g := New(w, DefaultSettings(), p, nil)
	cctx, cancel := context.WithCancel(ctx)
	go func() { <-p.asked; cancel() }()
	d, err := g.Decide(cctx, destructive("delete"))
	if !errors.Is(err, context.Canceled) || d.Allowed {
		t.Fatalf("decision %+v %v", d, err)
	}
	row, _, _ := statedb.GetApproval(ctx, w.DB(), d.ApprovalID)
	if row.Decision != statedb.DecisionDeny {
		t.Fatalf("row %+v", row)
	}
}

// TestParseSettings: the keys and their one-line errors.
func TestParseSettings(t *testing.T) {
	s, err := ParseSettings(map[string]any{"require": []any{"mcp_fs_*", "mcp_git_push"}, "timeout": 30}, "config.yaml")
	if err != nil || len(s.Require) != 2 || s.Timeout != 30*time.Second {
		t.Fatalf("%+v %v", s, err)
	}
	if s, err := ParseSettings(map[string]any{"require": "mcp_x", "timeout": "2m"}, "c"); err != nil || s.Require[0] != "mcp_x" || s.Timeout != 2*time.Minute {
		t.Fatalf("%+v %v", s, err)
	}
	if s, err := ParseSettings(nil, "c"); err != nil || s.Timeout != DefaultTimeout {
		t.Fatalf("%+v %v", s, err)
	}
	for raw, want := range map[string]map[string]any{
		"approval.require: \"[\" is not a glob":  {"require": []any{"["}},
		"approval.require[0]\": want text":       {"require": []any{[]any{}}},
		"approval.timeout: want seconds":         {"timeout": 0},
		"approval.timeout: want seconds between": {"timeout": "forever"},
		"approval.ask is not a setting":          {"ask": true},
	} {
		_, err := ParseSettings(want, "config.yaml")
		if err == nil || !strings.Contains(err.Error(), raw) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "config.yaml") {
			t.Errorf("%v: error %v, want one line with %q", want, err, raw)
		}
	}
}

// TestApprovedDestructiveAsksWithReason: a tool approved as destructive
// and now listed read-only still asks, and says why.
func TestApprovedDestructiveAsksWithReason(t *testing.T) {
	w := writer(t)
	p := newPerson()
	g := New(w, DefaultSettings(), p, nil)
	p.answers <- "d"
	r := Request{Server: "fs", Tool: "rm", Name: "mcp_fs_rm", Arguments: json.RawMessage(`{"path":"/"}`),
		Annotations: mcpvalue.Annotations{ReadOnly: yes()}, Approved: &mcpvalue.Annotations{Destructive: yes()}}
	d, err := g.Decide(ctx, r)
	if err != nil || d.Allowed || d.By != ByTerminal {
		t.Fatalf("decision %+v %v", d, err)
	}
	if said := p.text(); !strings.Contains(said, "approved as destructive") {
		t.Fatalf("terminal showed:\n%s", said)
	}
}

// TestDescribeShowsEveryKey: arguments are shown key by key, each value
// cut to MaxValueShown with the cut said (size, and the keys of an object
// not shown), so a key after a long value is still shown; past
// MaxArgumentsShown the remaining keys are named with their size.
func TestDescribeShowsEveryKey(t *testing.T) {
	pad := strings.Repeat("a", 2048)
	args, _ := json.Marshal(map[string]any{
		"content": pad,
		"opts":    map[string]any{"a_pad": pad, "recursive": true},
		"path":    "/etc/passwd\x1b[2J",
	})
	got := describe(Request{Server: "fs", Tool: "write", Name: "mcp_fs_write", Arguments: args})
	lines := strings.Split(got, "\n")
	if len(lines) != 4 || lines[0] != "Call tool mcp_fs_write (server 'fs', tool 'write') with arguments:" {
		t.Fatalf("description:\n%s", got)
	}
	if !strings.HasPrefix(lines[1], `  content: "aaa`) || !strings.HasSuffix(lines[1], "… 1.7 KB more not shown") ||
		len(lines[1]) > MaxValueShown+100 {
		t.Errorf("content line %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], `  opts: {"a_pad":"aaa`) || !strings.HasSuffix(lines[2], "more not shown (keys: recursive)") {
		t.Errorf("opts line %q", lines[2])
	}
	if lines[3] != `  path: "/etc/passwd\u001b[2J"` {
		t.Errorf("path line %q", lines[3])
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("a control character reached the description: %q", got)
	}

	many := map[string]any{}
	for i := range 30 {
		many[fmt.Sprintf("k%02d", i)] = pad
	}
	args, _ = json.Marshal(many)
	got = describe(Request{Server: "fs", Tool: "write", Name: "mcp_fs_write", Arguments: args})
	lines = strings.Split(got, "\n")
	last := lines[len(lines)-1]
	shown := len(lines) - 2
	if shown < MaxArgumentsShown/MaxValueShown || !strings.Contains(last, "more not shown (keys: k") || !strings.Contains(last, "k29)") {
		t.Fatalf("%d keys shown, last line %q", shown, last)
	}

	short := describe(Request{Server: "fs", Tool: "ls", Name: "mcp_fs_ls", Arguments: json.RawMessage(`{}`)})
	if short != "Call tool mcp_fs_ls (server 'fs', tool 'ls') with arguments {}" {
		t.Errorf("no arguments: %q", short)
	}
	long := strings.Repeat("b", 5000)
	list := describe(Request{Server: "fs", Tool: "ls", Name: "mcp_fs_ls", Arguments: json.RawMessage(`["` + long + `"]`)})
	if !strings.HasPrefix(list, `Call tool mcp_fs_ls (server 'fs', tool 'ls') with arguments ["bbb`) || !strings.HasSuffix(list, "… 1004 bytes more not shown") {
		t.Errorf("not an object: %q", list)
	}
}
