package screening

import (
	"errors"
	"testing"
)

// The first word as Python's shlex.split(text, posix=True) gives it, or
// its error.
func TestFirstShlexWord(t *testing.T) {
	cases := []struct {
		in, want string
		err      error
	}{
		{"bash", "bash", nil},
		{"bash -c x", "bash", nil},
		{"  \t bash", "bash", nil},
		{"'/bin/ba sh' -c", "/bin/ba sh", nil},
		{`"/bin/sh" -c`, "/bin/sh", nil},
		{`b"as"h`, "bash", nil},
		{`ba\sh`, "bash", nil},
		{`ba\ sh x`, "ba sh", nil},
		{`"a\"b"`, `a"b`, nil},
		{`"a\\b"`, `a\b`, nil},
		{`"a\xb"`, `a\xb`, nil}, // the backslash stays before anything but " and \
		{`'a\'`, `a\`, nil},     // nothing escapes in '...'
		{`'' bash`, "", nil},    // an empty quoted word is a word
		{`""`, "", nil},
		{"a\vb c", "a\vb", nil}, // \v is not shlex white space
		{"a\u00a0b c", "a\u00a0b", nil},
		{`bash "x`, "", errNoClosingQuote},
		{`bash 'x`, "", errNoClosingQuote},
		{`bash x\`, "", errNoEscapedChar},
		{`"bash\`, "", errNoEscapedChar},
		{"\\\nbash", "\nbash", nil},
	}
	for _, c := range cases {
		got, err := firstShlexWord(c.in)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("firstShlexWord(%q) = %q, %v; want %q, %v", c.in, got, err, c.want, c.err)
		}
	}
}

// The command's base name, as the original computes it before comparing
// it with the shells.
func TestCommandBase(t *testing.T) {
	cases := map[string]string{
		"":                      "",
		"   ":                   "",
		"bash":                  "bash",
		"/bin/BASH":             "bash",
		"/usr/local/bin/zsh -l": "zsh",
		"'/opt/my dir/sh' -c":   "sh",
		"/bin/":                 "",
		"a/b/c/":                "",
		`sh -c "unclosed`:       "sh", // shlex fails: str.split()
		`"/bin/ba sh -c`:        "ba", // shlex fails; str.split() gives `"/bin/ba`
		"\u00a0\x1c sh \u3000":  "sh", // str.strip() trims Unicode white space
		"sh\u00a0-c":            "sh\u00a0-c",
		"CMD.EXE /c":            "cmd.exe",
		"fİsh":                  "fİsh", // Python's lower() keeps İ a two-rune i̇: no shell
		`C:\Windows\cmd.exe`:    `c:windowscmd.exe`,
	}
	for in, want := range cases {
		if got := commandBase(in); got != want {
			t.Errorf("commandBase(%q) = %q, want %q", in, got, want)
		}
	}
}
