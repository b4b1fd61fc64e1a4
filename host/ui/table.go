package ui

import (
	"strings"

	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/mattn/go-runewidth"
)

// widthCond measures display width independently of the locale: East Asian
// ambiguous characters such as box-drawing lines count as one cell.
var widthCond = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// DisplayWidth returns the number of terminal cells s occupies, ignoring ANSI
// escape sequences.
func DisplayWidth(s string) int {
	return widthCond.StringWidth(stripANSI(s))
}

// Truncate shortens s to at most width cells, ending with tail ("..." or
// "…") when it had to cut. ANSI escape sequences are removed.
func Truncate(s string, width int, tail string) string {
	s = stripANSI(s)
	if widthCond.StringWidth(s) <= width {
		return s
	}
	return widthCond.Truncate(s, width, tail)
}

// padRight pads s with spaces to width display cells.
func padRight(s string, width int) string {
	if w := DisplayWidth(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}

// stripANSI removes CSI and OSC escape sequences from s.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\x1b' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '[': // CSI: parameters, then a final byte in 0x40..0x7e
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
		case ']': // OSC: up to BEL or ST
			j := i + 2
			for j < len(s) && s[j] != '\a' && !(s[j] == '\x1b' && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == '\x1b' {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return b.String()
}

// Table prints headers and rows as an indented table whose columns are
// aligned by display width and separated by one space, with the header
// underlined by runs of "─":
//
//	Name   Status
//	────── ──────────
//	alpha  ✓ enabled
//
// Cells that start with a status glyph (✓, ⚠, ✗) are coloured like the
// matching status line when colour is on. Rows shorter than headers are
// padded with empty cells; newlines and tabs inside cells become spaces.
// Cells are data: any other control character, escape sequence or
// bidirectional override in them is shown escaped (termsafe.Escape), so
// the only styling is the Printer's own. Trailing spaces are not printed.
func (p *Printer) Table(headers []string, rows [][]string) {
	cols := len(headers)
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return
	}
	cell := func(r []string, i int) string {
		if i >= len(r) {
			return ""
		}
		return termsafe.Escape(strings.NewReplacer("\r\n", " ", "\n", " ", "\t", " ").Replace(r[i]))
	}
	widths := make([]int, cols)
	for i := range cols {
		widths[i] = DisplayWidth(cell(headers, i))
		for _, r := range rows {
			widths[i] = max(widths[i], DisplayWidth(cell(r, i)))
		}
	}

	var b strings.Builder
	line := func(cells []string, style func(string) string) {
		var l strings.Builder
		l.WriteString(indent)
		// Index of the last non-empty cell, so that no trailing spaces remain.
		last := -1
		for i := range cols {
			if cells[i] != "" {
				last = i
			}
		}
		for i := 0; i <= last; i++ {
			c := cells[i]
			styled := c
			if style != nil {
				styled = style(c)
			}
			l.WriteString(styled)
			if i < last {
				l.WriteString(strings.Repeat(" ", max(widths[i]-DisplayWidth(c), 0)+1))
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteString("\n")
	}
	row := func(r []string) []string {
		out := make([]string, cols)
		for i := range cols {
			out[i] = cell(r, i)
		}
		return out
	}

	if len(headers) > 0 {
		line(row(headers), func(s string) string { return p.paint(styleBold, s) })
		rules := make([]string, cols)
		for i := range cols {
			rules[i] = strings.Repeat("─", max(widths[i], 1))
		}
		line(rules, func(s string) string { return p.paint(styleDim, s) })
	}
	for _, r := range rows {
		line(row(r), p.statusCell)
	}
	p.write(b.String())
}

// statusCell colours cells starting with a status glyph.
func (p *Printer) statusCell(s string) string {
	switch {
	case strings.HasPrefix(s, glyphOK):
		return p.paint(styleGreen, s)
	case strings.HasPrefix(s, glyphWarn):
		return p.paint(styleYellow, s)
	case strings.HasPrefix(s, glyphFail):
		return p.paint(styleRed, s)
	}
	return s
}
