package cmdkit

// TruncateRunes cuts s to n runes, marking the cut.
func TruncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
