package screening

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// optSpec is how a wrapper reads its options, getopt style: short options
// cluster (-iu NAME), a value follows attached or as the next word, long
// options may be abbreviated and take a value after "=" or as the next
// word, "--" ends the options, and the first other word ends them too.
type optSpec struct {
	// withArg are the short options taking a value.
	withArg string
	// optArg are the short options taking a value only when attached
	// (xargs -i[R]).
	optArg string
	// longArg are the long options (without "--") taking a value.
	longArg []string
	// operands is how many words come between the options and the command
	// (timeout's DURATION, chroot's NEWROOT, taskset's mask).
	operands int
	// assigns: NAME=VALUE words may come before the command (env, sudo).
	assigns bool
}

// opts reads args by spec and returns what follows the options, calling
// on for each option with its value ("u", "NAME"; "--unset", "NAME").
func opts(args []field, spec optSpec, on func(opt, val string)) []field {
	i := 0
	for i < len(args) {
		a := args[i].s
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			if !hasVal && takesLong(spec.longArg, name) && i+1 < len(args) {
				i++
				val = args[i].s
			}
			on("--"+name, val)
			i++
			continue
		}
		for j := 1; j < len(a); j++ {
			ch := a[j]
			if strings.IndexByte(spec.withArg, ch) >= 0 {
				val := a[j+1:]
				if val == "" && i+1 < len(args) {
					i++
					val = args[i].s
				}
				on(string(ch), val)
				break
			}
			if strings.IndexByte(spec.optArg, ch) >= 0 {
				on(string(ch), a[j+1:])
				break
			}
			on(string(ch), "")
		}
		i++
	}
	args = args[i:]
	for n := spec.operands; n > 0 && len(args) > 0; n-- {
		args = args[1:]
	}
	if spec.assigns {
		for len(args) > 0 && isAssign(args[0].s) {
			args = args[1:]
		}
	}
	return args
}

// takesLong reports whether name, or a long option it abbreviates, takes a
// value.
func takesLong(longs []string, name string) bool {
	if name == "" {
		return false
	}
	for _, l := range longs {
		if strings.HasPrefix(l, name) {
			return true
		}
	}
	return false
}

var assignRE = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*=`)

func isAssign(s string) bool { return assignRE.MatchString(s) }

// wrappers are the commands that run another command given after their own
// options, and how they read those options.
var wrappers = map[string]optSpec{
	"env":     {withArg: "uCSP", longArg: []string{"unset", "chdir", "split-string"}, assigns: true},
	"nice":    {withArg: "n", longArg: []string{"adjustment"}},
	"nohup":   {},
	"timeout": {withArg: "sk", longArg: []string{"signal", "kill-after"}, operands: 1},
	"stdbuf":  {withArg: "ioe", longArg: []string{"input", "output", "error"}},
	"setsid":  {},
	"xargs": {withArg: "adEILnPs", optArg: "eil",
		longArg: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"busybox": {},
	"sudo": {withArg: "CDgpRrtTUu",
		longArg: []string{"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type",
			"command-timeout", "other-user", "user", "login-class"}, assigns: true},
	"doas":    {withArg: "uC"},
	"flock":   {withArg: "wE", longArg: []string{"timeout", "conflict-exit-code"}, operands: 1},
	"ionice":  {withArg: "cnpPu", longArg: []string{"class", "classdata", "pid", "pgid", "uid"}},
	"taskset": {operands: 1},
	"time":    {withArg: "fo", longArg: []string{"format", "output"}},
	"command": {},
	"builtin": {},
	"exec":    {withArg: "a"},
	"chroot":  {longArg: []string{"userspec", "groups"}, operands: 1},
	"su":      {withArg: "cgGsw", longArg: []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment"}},
	"runuser": {withArg: "cgGsw", longArg: []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment"}},
	"watch":   {withArg: "n", longArg: []string{"interval"}},
}

// unwrap reads the options of the wrapper name and returns the argv it
// runs, or the shell text it runs (flock -c, su -c, watch); ok is false
// when name is no wrapper.
func (r *reader) unwrap(name string, args []field, c ctx) (rest []field, script *field, ok bool) {
	spec, ok := wrappers[name]
	if !ok {
		return nil, nil, false
	}
	var split []string
	var cmdString *field
	exec := false
	on := func(opt, val string) {
		switch {
		case name == "env" && (opt == "S" || abbreviates(opt, "--split-string")):
			split = append(split, val)
		case (name == "su" || name == "runuser") && (opt == "c" || abbreviates(opt, "--command") || abbreviates(opt, "--session-command")):
			cmdString = &field{s: val, vague: vague(args)}
		case name == "watch" && (opt == "x" || abbreviates(opt, "--exec")):
			exec = true
		}
	}
	rest = opts(args, spec, on)
	switch name {
	case "env":
		// "env -" is "env -i".
		for len(rest) > 0 && rest[0].s == "-" {
			rest = opts(rest[1:], spec, on)
		}
		if len(split) > 0 {
			// env -S splits its string into words, which come before the
			// rest: read it as shell words.
			if vague(args) {
				r.fail(c, "the string given to env -S is only known when it runs")
				return nil, nil, true
			}
			var words []field
			for _, s := range split {
				words = append(words, r.words(s, step(c, "env -S"))...)
			}
			rest = append(words, rest...)
		}
	case "flock":
		// flock [options] FILE -c COMMAND runs COMMAND with sh -c.
		if len(rest) > 0 && (rest[0].s == "-c" || rest[0].s == "--command") {
			if len(rest) > 1 {
				return nil, &rest[1], true
			}
			return nil, nil, true
		}
	case "su", "runuser":
		// su's options may come after the user; what runs is the -c string.
		if cmdString == nil {
			for i := 0; i+1 < len(rest); i++ {
				if rest[i].s == "-c" || rest[i].s == "--command" || rest[i].s == "--session-command" {
					cmdString = &rest[i+1]
				}
			}
		}
		return nil, cmdString, true
	case "watch":
		if !exec {
			return nil, &field{s: joinFields(rest), vague: vague(rest)}, true
		}
	case "busybox":
		if len(rest) > 0 && strings.HasPrefix(rest[0].s, "-") {
			return nil, nil, true
		}
	}
	return rest, nil, true
}

// abbreviates reports whether opt ("--na") names the long option full
// ("--name") or abbreviates it.
func abbreviates(opt, full string) bool {
	return len(opt) > 2 && strings.HasPrefix(full, opt)
}

// words splits s into words as a shell would (env -S).
func (r *reader) words(s string, c ctx) []field {
	if r.budget -= len(s); r.budget < 0 {
		r.fail(c, "more than %d KiB of shell text", MaxShellBytes>>10)
		return nil
	}
	c.text = s
	var out []field
	for w, err := range syntax.NewParser().WordsSeq(strings.NewReader(s)) {
		if err != nil {
			r.fail(c, "its shell text does not parse (%s)", oneLine(err.Error()))
			return nil
		}
		out = append(out, r.fields(w, c)...)
	}
	return out
}

// codeFlag is how an interpreter screening cannot parse is given code on
// its command line.
type codeFlag struct {
	// short are the short options whose value is code ("c" for python,
	// "eE" for perl); the first names the option in a finding.
	short string
	// long are the long options whose value is code.
	long []string
	// stop are the short options whose value is no code (python -W
	// ignore): the rest of their word is not read for code options.
	stop string
}

var (
	pythonCode = &codeFlag{short: "c", stop: "WXmQ"}
	nodeCode   = &codeFlag{short: "ep", long: []string{"eval", "print"}}
	perlCode   = &codeFlag{short: "eE"}
	rubyCode   = &codeFlag{short: "e"}
	phpCode    = &codeFlag{short: "r"}
	pythonName = lazyregexp.New(`^(python|pypy)[0-9.]*$`)
)

// codeFlags returns how the interpreter name takes code, or nil.
func codeFlags(name string) *codeFlag {
	switch {
	case pythonName.MatchString(name):
		return pythonCode
	case name == "node" || name == "nodejs" || name == "bun" || name == "deno":
		return nodeCode
	case name == "perl":
		return perlCode
	case name == "ruby":
		return rubyCode
	case name == "php":
		return phpCode
	}
	return nil
}

// codeStrings returns every value of a code option in args, wherever it
// is (clustered, attached or the next word): reading too many words as
// code only means more text is matched, never less.
func codeStrings(args []field, f *codeFlag) []field {
	var out []field
	for i := 0; i < len(args); i++ {
		a := args[i].s
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			for _, l := range f.long {
				if name == l {
					if hasVal {
						out = append(out, field{s: val, vague: args[i].vague, src: args[i].src})
					} else if i+1 < len(args) {
						out = append(out, args[i+1])
					}
				}
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		for j := 1; j < len(a) && strings.IndexByte(f.stop, a[j]) < 0; j++ {
			if strings.IndexByte(f.short, a[j]) >= 0 {
				if v := a[j+1:]; v != "" {
					out = append(out, field{s: v, vague: args[i].vague, src: args[i].src})
				} else if i+1 < len(args) {
					out = append(out, args[i+1])
				}
				break
			}
		}
	}
	return out
}
