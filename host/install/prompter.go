package install

import "github.com/hermes-agent/hermes/host/ui"

// Prompter shows an install's plan and progress and asks its questions.
// The CLI gives its terminal printer (*ui.Printer is one); a test gives a
// fake. An install never reads or writes the terminal itself: everything a
// person sees or answers goes through its Prompter.
type Prompter interface {
	// Interactive reports whether there is a person to ask.
	Interactive() bool
	// Header shows a title.
	Header(s string)
	// Line, Info, OK, Warn and Fail show one message (fmt-style).
	Line(format string, args ...any)
	Info(format string, args ...any)
	OK(format string, args ...any)
	Warn(format string, args ...any)
	Fail(format string, args ...any)
	// Confirm asks a yes/no question; without a person it answers
	// defaultYes.
	Confirm(question string, defaultYes bool) bool
	// Ask asks for a value, def when the answer is empty; Secret asks for
	// a value without echoing it. Both return ui.ErrCancelled when the
	// person cancels.
	Ask(prompt, def string) (string, error)
	Secret(prompt string) (string, error)
	// Checklist lets the person pick items, returning the keys picked.
	Checklist(title string, items []ui.ChecklistItem) ([]string, error)
}

var _ Prompter = (*ui.Printer)(nil)
