package install

// Prompter is the person an install works for: it is told how the install
// goes and answers the install's questions. An install never reads or
// writes a terminal: host/cli gives a prompter that shows and asks on one,
// a test gives a fake.
type Prompter interface {
	// Interactive reports whether there is a person to ask; without one
	// the install takes its answers from its Options and the environment.
	Interactive() bool
	// Tell tells the person one thing about the install, of the given
	// kind (fmt-style). The arguments come from the manifest, the
	// repository and the server: the prompter shows them safely.
	Tell(kind Note, format string, args ...any)
	// Approve asks the person to agree to what question says (install the
	// entry, keep an install whose server did not start); no answer is
	// no.
	Approve(question string) bool
	// Value asks for the value of a variable the entry needs (auth.env):
	// v.Default when the person gives none. When the person cancels, the
	// error is ErrDeclined (errors.Is).
	Value(v Variable) (string, error)
	// PickTools asks which of the tools of server to enable and returns
	// the names picked. When the person cancels, the error is ErrDeclined
	// (errors.Is).
	PickTools(server string, tools []ToolChoice) ([]string, error)
}

// Note is what kind of thing an install tells its person.
type Note int

const (
	// NoteTitle names what is being installed.
	NoteTitle Note = iota
	// NoteText is a line of the plan, of the progress or of the entry's
	// own text (its description, its post-install notes).
	NoteText
	// NoteDetail is a hint or a detail: a step's output, what to do next.
	NoteDetail
	// NoteDone says that something worked.
	NoteDone
	// NoteWarning says that something went otherwise than asked.
	NoteWarning
	// NoteFailure says that something failed.
	NoteFailure
)

// Variable is a value an entry needs, as its manifest asks for it.
type Variable struct {
	// Name is the variable (DEMO_TOKEN); Prompt what to ask for.
	Name, Prompt string
	// Secret is set for a credential: it is never shown or echoed.
	Secret bool
	// Default is the value when the person gives none ("" for none).
	Default string
}

// ToolChoice is one tool of the server, offered to be enabled.
type ToolChoice struct {
	Name, Description string
	// Enabled is whether it is enabled unless the person says otherwise.
	Enabled bool
}
