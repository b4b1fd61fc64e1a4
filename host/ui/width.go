package ui

import (
	"strconv"

	"golang.org/x/term"
)

// Width returns the number of columns output may use: the terminal's
// width when out is a terminal, else $COLUMNS when set, else 0 (no limit:
// output to a file or a pipe is never cut).
func (p *Printer) Width() int {
	if p.outTTY {
		if fd, ok := fdOf(p.out); ok {
			if w, _, err := term.GetSize(fd); err == nil && w > 0 {
				return w
			}
		}
	}
	if n, err := strconv.Atoi(p.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// minFlexWidth is the narrowest a cut column gets: below it a table
// overflows rather than shows nothing useful.
const minFlexWidth = 12

// TableFit is Table sized to Width: when the table would be wider, the
// cells of the flex columns (descriptions, targets: never names or
// status) are cut, ending in "…", the widest first, until it fits or they
// reach minFlexWidth.
func (p *Printer) TableFit(headers []string, rows [][]string, flex ...int) {
	width := p.Width()
	if width <= 0 || len(flex) == 0 {
		p.Table(headers, rows)
		return
	}
	cols := len(headers)
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	widths := make([]int, cols)
	measure := func(r []string) {
		for i, c := range r {
			widths[i] = max(widths[i], DisplayWidth(c))
		}
	}
	measure(headers)
	for _, r := range rows {
		measure(r)
	}
	total := len(indent)
	for _, w := range widths {
		total += w + 1
	}
	total--
	over := total - width
	for over > 0 {
		// Cut the widest flex column by one cell at a time.
		best := -1
		for _, i := range flex {
			if i < cols && widths[i] > minFlexWidth && (best < 0 || widths[i] > widths[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		widths[best]--
		over--
	}
	cut := make([][]string, len(rows))
	for j, r := range rows {
		cut[j] = append([]string(nil), r...)
		for _, i := range flex {
			if i < len(cut[j]) {
				cut[j][i] = Truncate(cut[j][i], widths[i], "…")
			}
		}
	}
	p.Table(headers, cut)
}
