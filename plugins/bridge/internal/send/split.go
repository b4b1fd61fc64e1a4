package send

import (
	"strings"
	"unicode/utf8"
)

// The longest text one message may hold on each platform. A longer text is
// sent as several messages, in order (see [Split]).
const (
	// TelegramMaxLength is the Bot API's limit on sendMessage text, counted
	// in UTF-16 code units as Telegram counts it.
	TelegramMaxLength = 4096
	// DiscordMaxLength is Discord's limit on a message's content, in
	// characters.
	DiscordMaxLength = 2000
	// SlackMaxLength is the length past which Slack truncates
	// chat.postMessage text, in characters.
	SlackMaxLength = 40000
)

// maxLength returns the limit of a platform and how it counts a character.
func maxLength(platform string) (int, func(rune) int) {
	switch platform {
	case Telegram:
		return TelegramMaxLength, utf16Units
	case Discord:
		return DiscordMaxLength, oneUnit
	default:
		return SlackMaxLength, oneUnit
	}
}

func oneUnit(rune) int { return 1 }

// utf16Units is the number of UTF-16 code units of r: 2 outside the Basic
// Multilingual Plane (most emoji), else 1.
func utf16Units(r rune) int {
	if r > 0xFFFF {
		return 2
	}
	return 1
}

// Split cuts text into the messages a platform whose messages hold at most
// max units takes, each character counting size(r) units (nil: 1). Lines are
// kept whole where they fit: a message ends at the last line break that
// fits, and the line breaks around a cut are dropped. A single line longer than max is
// cut at its last space that fits when there is one in the second half of
// the message, else at the limit (never inside a character). Messages that
// would hold only white space are left out. Text that fits is returned as is,
// as the only message.
func Split(text string, max int, size func(rune) int) []string {
	if size == nil {
		size = oneUnit
	}
	if max < 2 {
		max = 2 // a character of two units must always fit
	}
	if length(text, size) <= max {
		return []string{text}
	}
	var (
		out    []string
		cur    strings.Builder
		curLen int
	)
	emit := func(s string) {
		s = strings.Trim(s, "\r\n")
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	flush := func() {
		if cur.Len() > 0 {
			emit(cur.String())
			cur.Reset()
			curLen = 0
		}
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		// A line break that ends a message is dropped, so it does not count
		// toward whether the line fits.
		n, body := length(line, size), length(strings.TrimSuffix(line, "\n"), size)
		if curLen+body <= max {
			cur.WriteString(line)
			curLen += n
			continue
		}
		flush()
		for body > max {
			head, tail := cutLine(line, max, size)
			emit(head)
			hl := length(head, size)
			line, n, body = tail, n-hl, body-hl
		}
		cur.WriteString(line)
		curLen = n
	}
	flush()
	return out
}

// cutLine cuts line, which is longer than max units, into a head of at most
// max units and the rest: after the last space of the head when it lies in
// the second half, else at the limit.
func cutLine(line string, max int, size func(rune) int) (head, tail string) {
	units, end, space := 0, 0, -1
	for i := 0; i < len(line); {
		r, w := utf8.DecodeRuneInString(line[i:])
		u := size(r)
		if units+u > max {
			break
		}
		units += u
		i += w
		end = i
		if r == ' ' && units > max/2 {
			space = end
		}
	}
	if space > 0 {
		end = space
	}
	return line[:end], line[end:]
}

// length is the number of units of s.
func length(s string, size func(rune) int) int {
	n := 0
	for _, r := range s {
		n += size(r)
	}
	return n
}
