package cmdkit

import (
	"errors"
	"fmt"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/registry"
)

// DriftNote is one tool whose definition differs from the approved one,
// as 'hermes mcp test --json' and 'hermes tools --json' print it.
type DriftNote struct {
	Tool string `json:"tool"`
	// Change is changed, added or removed.
	Change string `json:"change"`
	// Summary says what changed in one line.
	Summary string `json:"summary"`
	// Withheld: the tool is kept from the model (tools.on_change: deny)
	// until accepted with 'hermes mcp configure'.
	Withheld bool `json:"withheld,omitempty"`
	// Details is what changed, field by field.
	Details *offered.Change `json:"details,omitempty"`
}

// DriftNotes turns a server's drift into notes (nil when nothing drifted).
// With an approval that cannot be read, every tool is a note saying so.
func DriftNotes(d *registry.Drift) []DriftNote {
	if d == nil {
		return nil
	}
	var out []DriftNote
	for i := range d.Changes {
		c := d.Changes[i]
		n := DriftNote{Tool: c.Tool, Change: string(c.Kind), Summary: c.Summary()}
		if d.Unreadable != "" && c.Kind == offered.Added {
			n.Summary = "its approval cannot be read"
		}
		for _, w := range d.Withheld {
			if w == c.Tool {
				n.Withheld = true
			}
		}
		if c.Kind == offered.Changed {
			n.Details = &c
		}
		out = append(out, n)
	}
	return out
}

// ManagerDrift returns the drift m reports for server, nil for none.
func ManagerDrift(m *registry.Manager, server string) *registry.Drift {
	for _, d := range m.Drift() {
		if d.Server == server {
			return &d
		}
	}
	return nil
}

// ApprovalUnreadable is the line saying that d's approval cannot be read
// and what to do, "" when it can (or d is nil).
func ApprovalUnreadable(d *registry.Drift) string {
	if d == nil {
		return ""
	}
	return d.Unreadable
}

// PrintDrift prints a note per changed tool of server, and how to review
// them; unreadable (approvalUnreadable) comes first when set, and says
// what to do itself.
func PrintDrift(e *Env, server string, notes []DriftNote, unreadable string) {
	if unreadable != "" {
		e.P.Warn("%s", unreadable)
	}
	if len(notes) == 0 {
		return
	}
	for _, n := range notes {
		held := ""
		if n.Withheld {
			held = " (withheld from the model)"
		}
		e.P.Warn("    tool %s %s since it was approved: %s%s", n.Tool, n.Change, n.Summary, held)
	}
	if unreadable == "" {
		e.P.Info("    review and accept the changes with: hermes mcp configure %s", server)
	}
}

// ApproveOffered makes tools (all a server lists now) the approved
// definitions of server: the person saw them at add, install or
// configure. A failure is a warning: the entry is saved all the same, and
// the next connection trusts what it finds.
func ApproveOffered(e *Env, name string, tools []mcpvalue.Tool, how string) {
	if _, err := e.F.Offered().Approve(name, tools, nil, how); err != nil {
		e.P.Warn("could not record the approved tools of '%s': %s", name, OneLine(err.Error()))
	}
}

// ChangeLines describes a changed tool in detail for a person deciding
// whether to accept it: the approved and the current description.
func ChangeLines(c offered.Change) []string {
	out := []string{fmt.Sprintf("%s: %s", c.Tool, c.Summary())}
	if c.Description && c.Current != nil {
		out = append(out, "  was: "+OneLine(c.WasDescription), "  now: "+OneLine(c.Current.Description))
	}
	if c.Kind == offered.Added && c.Current != nil {
		out = append(out, "  "+OneLine(c.Current.Description))
	}
	return out
}

// ReviewDrift shows how tools (srv's listing now) differ from the approved
// ones and approves them: at once when nothing was approved yet (this is
// the first approval), else after asking the person when ask is set, or
// at once when not (--accept-changes). An approval that cannot be read is
// said, and every tool is shown as new. It reports whether changes were
// left unaccepted.
func ReviewDrift(e *Env, srv *config.Server, tools []mcpvalue.Tool, ask bool) (pending bool, err error) {
	st := e.F.Offered()
	key := srv.StateKey()
	b, err := st.Baseline(key)
	var ue *offered.UnusableError
	switch {
	case errors.Is(err, offered.ErrNotFound):
		if _, err := st.Approve(key, tools, nil, "configure"); err != nil {
			return false, Failf("could not record the approved tools of '%s': %s", srv.Name, OneLine(err.Error()))
		}
		return false, nil
	case errors.As(err, &ue):
		e.P.Warn("%s", OneLine(ue.Error()))
		b = nil
	case err != nil:
		return false, Failf("could not read the approved tools of '%s': %s", srv.Name, OneLine(err.Error()))
	}
	changes := offered.Compare(b, tools)
	if len(changes) == 0 && ue == nil {
		if !ask {
			e.P.Info("The tools of '%s' are as approved; nothing to accept.", srv.Name)
		}
		return false, nil
	}
	e.P.Warn("%d tool(s) of '%s' changed since they were approved:", len(changes), srv.Name)
	for _, c := range changes {
		for _, l := range ChangeLines(c) {
			e.P.Line("  %s", l)
		}
	}
	if ask && !e.P.Confirm("Accept these changes?", false) {
		e.P.Info("Changes not accepted: with tools.on_change: deny the changed tools stay withheld from the model.")
		return true, nil
	}
	if _, err := st.Approve(key, tools, nil, "configure"); err != nil {
		return true, Failf("could not record the approved tools of '%s': %s", srv.Name, OneLine(err.Error()))
	}
	e.P.OK("Accepted the current definitions of the tools of '%s'.", srv.Name)
	return false, nil
}
