package send

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		text string
		max  int
		want []string
	}{
		{"short", 10, []string{"short"}},
		{"", 10, []string{""}},
		{"aaaa\nbbbb\ncccc", 9, []string{"aaaa\nbbbb", "cccc"}},
		{"aaaa\nbbbb\ncccc", 4, []string{"aaaa", "bbbb", "cccc"}},
		{"aaaa\n\n\n\nbbbb", 5, []string{"aaaa", "bbbb"}},
		{"one two three four", 10, []string{"one two ", "three four"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"ab\ncdefghij\nk", 4, []string{"ab", "cdef", "ghij", "k"}},
	}
	for _, c := range cases {
		if got := Split(c.text, c.max, nil); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Split(%q, %d) = %q, want %q", c.text, c.max, got, c.want)
		}
	}

	// Telegram counts UTF-16 units: an emoji is two, and is never cut.
	text := strings.Repeat("😀", 3000)
	parts := Split(text, TelegramMaxLength, utf16Units)
	if len(parts) != 2 || length(parts[0], utf16Units) != TelegramMaxLength || strings.Join(parts, "") != text {
		t.Errorf("emoji split into %d parts of %d units", len(parts), length(parts[0], utf16Units))
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("aaaa\nbbbb\ncccc", 5)
	f.Add("one two three four five six", 7)
	f.Add("😀😀 😀\n\n x", 3)
	f.Fuzz(func(t *testing.T, text string, max int) {
		max = 2 + abs(max)%64
		for _, size := range []func(rune) int{oneUnit, utf16Units} {
			parts := Split(text, max, size)
			if len(parts) == 1 && parts[0] == text {
				continue
			}
			// Every part fits, and no text but line breaks and white space
			// at the cuts is lost.
			var kept strings.Builder
			for _, p := range parts {
				if length(p, size) > max {
					t.Fatalf("part %q longer than %d", p, max)
				}
				if strings.TrimSpace(p) == "" {
					t.Fatalf("blank part in %q", parts)
				}
				kept.WriteString(p)
			}
			if utf8.ValidString(text) && squash(kept.String()) != squash(text) {
				t.Fatalf("Split(%q, %d) = %q loses text", text, max, parts)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // the smallest int
			return 0
		}
		return -n
	}
	return n
}

// squash drops white space, which Split may drop at cuts.
func squash(s string) string {
	return strings.Join(strings.Fields(s), "")
}
