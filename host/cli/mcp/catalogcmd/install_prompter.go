package catalogcmd

import (
	"errors"
	"fmt"

	"github.com/hermes-agent/hermes/host/install"
	"github.com/hermes-agent/hermes/host/ui"
)

// InstallPrompter is the person at this terminal as an install sees them
// (install.Prompter): what the install tells is printed in the printer's
// styles, its questions are asked with its prompts and checklist.
type InstallPrompter struct {
	p *ui.Printer
}

var _ install.Prompter = InstallPrompter{}

func (ip InstallPrompter) Interactive() bool { return ip.p.Interactive() }

// Tell prints one line of the install: the title as a heading, the rest
// as plain, dimmed, ✓, ⚠ or ✗ lines.
func (ip InstallPrompter) Tell(kind install.Note, format string, args ...any) {
	switch kind {
	case install.NoteTitle:
		ip.p.Header(fmt.Sprintf(format, args...))
	case install.NoteDetail:
		ip.p.Info(format, args...)
	case install.NoteDone:
		ip.p.OK(format, args...)
	case install.NoteWarning:
		ip.p.Warn(format, args...)
	case install.NoteFailure:
		ip.p.Fail(format, args...)
	default:
		ip.p.Line(format, args...)
	}
}

// Approve asks a yes/no question whose default is no.
func (ip InstallPrompter) Approve(question string) bool { return ip.p.Confirm(question, false) }

// Value reads one value: a secret hidden (ENTER keeps the default, which
// is not shown), anything else visible with the default offered.
func (ip InstallPrompter) Value(v install.Variable) (string, error) {
	if !v.Secret {
		s, err := ip.p.Ask(v.Prompt, v.Default)
		return s, Declined(err)
	}
	prompt := v.Prompt
	if v.Default != "" {
		prompt += " (ENTER keeps the default)"
	}
	s, err := ip.p.Secret(prompt)
	if err != nil {
		return "", Declined(err)
	}
	if s == "" {
		s = v.Default
	}
	return s, nil
}

// PickTools shows the tools as a checklist, the enabled ones checked.
func (ip InstallPrompter) PickTools(server string, tools []install.ToolChoice) ([]string, error) {
	items := make([]ui.ChecklistItem, len(tools))
	for i, t := range tools {
		items[i] = ui.ChecklistItem{Key: t.Name, Description: t.Description, Checked: t.Enabled}
	}
	keys, err := ip.p.Checklist(fmt.Sprintf("Tools to enable for '%s'", server), items)
	return keys, Declined(err)
}

// Declined makes a cancelled prompt install.ErrDeclined, keeping what the
// terminal said.
func Declined(err error) error {
	if errors.Is(err, ui.ErrCancelled) {
		return fmt.Errorf("%w: %w", install.ErrDeclined, err)
	}
	return err
}
