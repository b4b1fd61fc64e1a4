// Package ui owns how the command line talks to a person: styled status
// lines, aligned tables, confirmations, plain and hidden input, and the
// interactive tool checklist.
//
// Every line is indented by two spaces. Status lines carry a glyph and a
// colour: ✓ green for success, ⚠ yellow for warnings, ✗ red for failures,
// and informational lines are dim. Colour is used only when the output is a
// terminal, NO_COLOR is unset and TERM is not "dumb"; otherwise the output is
// plain text without escape sequences.
//
// The interactive prompts drive the terminal directly: golang.org/x/term
// puts it in raw mode, keys are read one byte at a time and the checklist is
// redrawn in place with plain ANSI cursor movement. The package deliberately
// does not use a TUI framework. bubbletea, through lipgloss and termenv,
// asks the terminal for its background colour (an OSC 11 query) when its
// package is initialised, so merely linking it in would make every command
// write that query at start-up, wait for the answer (up to five seconds on
// terminals that never answer) and risk swallowing typed-ahead input. A test
// keeps those packages out of the command's dependencies.
//
// Text handed to the Printer as data (message arguments, table cells,
// checklist items, prompt questions) is shown with its control characters,
// escape sequences and bidirectional overrides visibly escaped, through
// package termsafe, so an MCP server's names, descriptions and errors can
// never control the terminal or fake a line; the Printer's colours are the
// only escape sequences it writes. Out returns the raw stream for output
// the caller makes safe itself (JSON through termsafe.JSON).
//
// The package knows nothing about the protocol or the configuration it is
// used for; callers pass it strings and get strings back.
package ui
