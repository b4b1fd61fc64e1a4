package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/mcpvalue"

	"github.com/hermes-agent/hermes/host/approval"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/internal/testpty"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/hermes-agent/hermes/statedb"
)

// TestApprovalAtPseudoTerminal: the gate asks through the CLI's terminal
// prompter on a pseudo-terminal; the answer typed there ("a") stands and
// is recorded in mcp_approvals, the question shows the call escaped, and
// an elicitation-style conversation waiting for the terminal gets it only
// after the approval's question ended.
func TestApprovalAtPseudoTerminal(t *testing.T) {
	ctx := testwait.Context(t)
	tm := testpty.Open(t, 24, 120)
	src, _ := cmdkit.NewInput(tm.TTY())
	if !src.Terminal() {
		t.Fatal("the pseudo-terminal is not seen as a terminal")
	}
	p := &cmdkit.TermPrompter{In: src, Out: tm.TTY(), Turn: make(chan struct{}, 1)}
	w, err := statedb.OpenWriter(ctx, filepath.Join(t.TempDir(), statedb.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	gate := approval.New(w, approval.DefaultSettings(), p, nil)
	destructive := true
	done := make(chan approval.Decision, 1)
	go func() {
		d, err := gate.Decide(ctx, approval.Request{Server: "fs", Tool: "rm", Name: "mcp_fs_rm",
			Arguments: json.RawMessage("{\"path\":\"a\x1b]0;pwned\x07\"}"), Annotations: mcpvalue.Annotations{Destructive: &destructive}})
		if err != nil {
			t.Error(err)
		}
		done <- d
	}()
	tm.WaitFor("Allow? [o]nce, [a]lways, [d]eny: ")
	if out := tm.Output(); strings.Contains(out, "\x1b]0;pwned") || !strings.Contains(out, `\x1b]0;pwned\x07`) {
		t.Fatalf("the arguments were not escaped:\n%q", out)
	}
	// No 24-hex row id under the prompt: a client of hermes mcp serve
	// lists the open approvals itself.
	if out := tm.Output(); regexp.MustCompile(`[0-9a-f]{24}`).MatchString(out) {
		t.Errorf("the prompt shows the approval's id:\n%s", out)
	}
	// An elicitation asking now waits for the approval's question to end.
	other := make(chan error, 1)
	go func() {
		other <- p.Converse(ctx, func(term elicit.Terminal) error { term.Say("ELICITATION TURN"); return nil })
	}()
	tm.Press("a\r")
	d := <-done
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	tm.WaitFor("ELICITATION TURN")
	if out := tm.Output(); strings.Index(out, "ELICITATION TURN") < strings.Index(out, "Allow? [o]nce") {
		t.Fatalf("the elicitation talked over the approval:\n%s", out)
	}
	if !d.Allowed || d.By != approval.ByTerminal || d.Verdict != statedb.DecisionAllowAlways {
		t.Fatalf("decision %+v", d)
	}
	row, _, err := statedb.GetApproval(ctx, w.DB(), d.ApprovalID)
	if err != nil || row.Decision != statedb.DecisionAllowAlways {
		t.Fatalf("row %+v %v", row, err)
	}
}
