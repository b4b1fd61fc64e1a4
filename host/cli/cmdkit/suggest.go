package cmdkit

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// Nearest returns the candidate closest to word, when one is close enough
// to be what the user meant: an edit distance of at most a third of the
// word (and at least 1, at most 3), or a candidate that starts with the
// word. "" when none is.
func Nearest(word string, candidates []string) string {
	if word == "" {
		return ""
	}
	limit := min(max(len(word)/3, 1), 3)
	best, bestD := "", limit+1
	for _, c := range candidates {
		if c == word {
			return c
		}
		d := EditDistance(strings.ToLower(word), strings.ToLower(c))
		if d < bestD || (d == bestD && best != "" && c < best) {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	for _, c := range candidates {
		if len(word) >= 2 && strings.HasPrefix(c, word) {
			return c
		}
	}
	return ""
}

// EditDistance is the edit distance of a and b (bytes) where a swap of two
// neighbouring letters counts as one edit, as an insertion, a deletion or
// a substitution does (optimal string alignment): "mpc" is one edit from
// "mcp", the most common typo of a command name.
func EditDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// DidYouMean is " (did you mean 'PREFIX X'?)" for the nearest candidate
// X, or "".
func DidYouMean(prefix, word string, candidates []string) string {
	if s := Nearest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean '%s%s'?)", prefix, s)
	}
	return ""
}

// CommandNames lists the names and aliases of c's visible subcommands.
func CommandNames(c *cli.Command) []string {
	var out []string
	for _, sub := range c.Commands {
		if sub.Hidden {
			continue
		}
		out = append(out, sub.Name)
		out = append(out, sub.Aliases...)
	}
	return out
}

// FlagNames lists c's flag names, as typed (--name, -n).
func FlagNames(c *cli.Command) []string {
	var out []string
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if len(n) == 1 {
				out = append(out, "-"+n)
			} else {
				out = append(out, "--"+n)
			}
		}
	}
	return out
}

// UndefinedFlag matches the flag package's "flag provided but not
// defined: -x" error; invalidValue its "invalid value "v" for flag -x:
// why" error.
var (
	UndefinedFlag = lazyregexp.New(`flag provided but not defined: -+(\S+)`)
	InvalidValue  = lazyregexp.New(`invalid value "(.*)" for flag -+([^:\s]+): `)
)

// Wants says what a flag's value must be, by the flag's type.
func Wants(c *cli.Command, name string) string {
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			switch f.(type) {
			case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
				return "a whole number"
			case *cli.FloatFlag:
				return "a number"
			case *cli.DurationFlag:
				return "a duration such as 30s or 2m"
			case *TimeFlag:
				return "seconds (30) or a duration (30s, 2m) above 0"
			case *cli.BoolFlag:
				return "true or false"
			}
		}
	}
	return "another value"
}

// TypedFlag is a flag's name as typed: -x or --name.
func TypedFlag(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// UsageError turns a flag-parsing error of c into one line saying what was
// wrong, with a suggestion for a mistyped flag, and where the usage is.
func UsageError(c *cli.Command, err error) error {
	name := c.FullName()
	if m := UndefinedFlag.FindStringSubmatch(err.Error()); m != nil {
		typed := TypedFlag(m[1])
		hint := ""
		if len(m[1]) > 1 {
			hint = DidYouMean("", typed, FlagNames(c))
		}
		return Usagef("%s: unknown flag %s%s; run '%s --help' for usage", name, typed, hint, name)
	}
	if m := InvalidValue.FindStringSubmatch(err.Error()); m != nil {
		return Usagef("%s: %s wants %s, got %q; run '%s --help' for usage", name, TypedFlag(m[2]), Wants(c, m[2]), m[1], name)
	}
	return Usagef("%s: %s; run '%s --help' for usage", name, OneLine(err.Error()), name)
}

// UnknownCommand is the error of a word that names no subcommand of c.
func UnknownCommand(c *cli.Command, word string) error {
	return Usagef("unknown command '%s %s'%s; run '%s --help' for the commands", c.FullName(), word, DidYouMean(c.FullName()+" ", word, CommandNames(c)), c.FullName())
}
