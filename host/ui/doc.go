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
// The package knows nothing about the protocol or the configuration it is
// used for; callers pass it strings and get strings back.
package ui
