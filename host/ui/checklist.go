package ui

import (
	"errors"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// ChecklistItem is one row of a Checklist.
type ChecklistItem struct {
	// Key is returned when the item is checked.
	Key string
	// Label is shown for the item; Key is shown when it is empty.
	Label string
	// Description is shown after the label, cut to the terminal width.
	Description string
	// Checked is the initial state.
	Checked bool
}

// Checklist shows an interactive multi-select list in the terminal and
// returns the keys of the checked items in their original order (an empty,
// non-nil slice when none are checked).
//
// Keys: up/down or k/j (also ctrl-p/ctrl-n) move, home/g and end/G jump,
// pgup/pgdown page, SPACE or x toggles the current item, a toggles all
// items, ENTER confirms, ESC or ctrl-c cancels with ErrCancelled. The cursor
// starts on the first item. The list is erased when the checklist ends.
//
// It returns ErrNotInteractive when the Printer is not interactive.
func (p *Printer) Checklist(title string, items []ChecklistItem) ([]string, error) {
	if !p.Interactive() {
		return nil, ErrNotInteractive
	}
	if len(items) == 0 {
		return []string{}, nil
	}
	m := newChecklistModel(title, items, p.color)
	prog := tea.NewProgram(m, tea.WithInput(p.in), tea.WithOutput(p.out))
	final, err := prog.Run()
	if err != nil {
		if errors.Is(err, tea.ErrInterrupted) {
			return nil, ErrCancelled
		}
		return nil, fmt.Errorf("checklist: %w", err)
	}
	fm, ok := final.(*checklistModel)
	if !ok || fm.cancelled || !fm.done {
		return nil, ErrCancelled
	}
	return fm.selected(), nil
}

// checklistModel is the bubbletea model behind Checklist.
type checklistModel struct {
	title   string
	items   []ChecklistItem
	checked []bool
	color   bool

	cursor int
	offset int // index of the first visible item
	width  int // terminal size, 0 when unknown
	height int

	done      bool
	cancelled bool
}

func newChecklistModel(title string, items []ChecklistItem, color bool) *checklistModel {
	m := &checklistModel{
		title:   title,
		items:   items,
		checked: make([]bool, len(items)),
		color:   color,
	}
	for i, it := range items {
		m.checked[i] = it.Checked
	}
	return m
}

// selected returns the keys of the checked items in order.
func (m *checklistModel) selected() []string {
	keys := []string{}
	for i, it := range m.items {
		if m.checked[i] {
			keys = append(keys, it.Key)
		}
	}
	return keys
}

// Init implements tea.Model.
func (m *checklistModel) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (m *checklistModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyMsg:
		switch msg.String() {
		case "esc", "ctrl+c":
			m.cancelled = true
			return m, tea.Quit
		case "enter":
			m.done = true
			return m, tea.Quit
		case "up", "k", "ctrl+p", "shift+tab":
			m.cursor = max(m.cursor-1, 0)
		case "down", "j", "ctrl+n", "tab":
			m.cursor = min(m.cursor+1, len(m.items)-1)
		case "home", "g":
			m.cursor = 0
		case "end", "G":
			m.cursor = len(m.items) - 1
		case "pgup", "ctrl+u":
			m.cursor = max(m.cursor-m.visibleRows(), 0)
		case "pgdown", "ctrl+d":
			m.cursor = min(m.cursor+m.visibleRows(), len(m.items)-1)
		case " ", "x":
			m.checked[m.cursor] = !m.checked[m.cursor]
		case "a":
			all := true
			for _, c := range m.checked {
				all = all && c
			}
			for i := range m.checked {
				m.checked[i] = !all
			}
		}
	}
	m.scroll()
	return m, nil
}

// chromeLines is the number of lines around the item rows: title, help,
// blank line before and after the rows, and the footer.
const chromeLines = 5

// visibleRows is how many items fit on the screen.
func (m *checklistModel) visibleRows() int {
	rows := len(m.items)
	if m.height > 0 {
		rows = min(rows, max(m.height-chromeLines, 3))
	} else {
		rows = min(rows, 15)
	}
	return max(rows, 1)
}

// scroll keeps the cursor inside the visible window.
func (m *checklistModel) scroll() {
	rows := m.visibleRows()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+rows {
		m.offset = m.cursor - rows + 1
	}
	m.offset = max(min(m.offset, len(m.items)-rows), 0)
}

func (m *checklistModel) paint(style, s string) string {
	if !m.color || s == "" {
		return s
	}
	return style + s + styleReset
}

// View implements tea.Model.
func (m *checklistModel) View() string {
	if m.done || m.cancelled {
		return ""
	}
	width := m.width
	if width <= 0 {
		width = 100
	}
	label := func(it ChecklistItem) string {
		if it.Label != "" {
			return it.Label
		}
		return it.Key
	}
	labelWidth := 0
	for _, it := range m.items {
		labelWidth = max(labelWidth, DisplayWidth(label(it)))
	}
	labelWidth = min(labelWidth, 40)

	var b strings.Builder
	line := func(s string) {
		b.WriteString(s)
		b.WriteString("\n")
	}
	if m.title != "" {
		line(indent + m.paint(styleBold, Truncate(m.title, max(width-len(indent), 1), "…")))
	}
	line(indent + m.paint(styleDim, Truncate("↑/↓ move · space toggle · a all · enter confirm · esc cancel", max(width-len(indent), 1), "…")))
	line("")

	rows := m.visibleRows()
	for i := m.offset; i < m.offset+rows && i < len(m.items); i++ {
		it := m.items[i]
		pointer := "  "
		if i == m.cursor {
			pointer = m.paint(styleCyan, ">") + " "
		}
		box := "[ ]"
		if m.checked[i] {
			box = "[" + m.paint(styleGreen, glyphOK) + "]"
		}
		name := padRight(Truncate(label(it), labelWidth, "…"), labelWidth)
		if i == m.cursor {
			name = m.paint(styleBold, name)
		}
		row := indent + pointer + box + " " + name
		// indent + pointer + box + space + label + two spaces.
		used := len(indent) + 2 + 3 + 1 + labelWidth + 2
		if desc := strings.Join(strings.Fields(it.Description), " "); desc != "" && width-used > 5 {
			row += "  " + m.paint(styleDim, Truncate(desc, width-used-1, "…"))
		}
		line(strings.TrimRight(row, " "))
	}
	line("")

	count := 0
	for _, c := range m.checked {
		if c {
			count++
		}
	}
	footer := fmt.Sprintf("%d/%d selected", count, len(m.items))
	if rows < len(m.items) {
		footer += fmt.Sprintf(" · %d–%d of %d", m.offset+1, m.offset+rows, len(m.items))
	}
	b.WriteString(indent + m.paint(styleDim, footer))
	return b.String()
}
