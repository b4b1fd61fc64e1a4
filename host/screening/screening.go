// Package screening owns the security policy for MCP server entries: it
// rejects the few high-signal shapes of a hostile entry before the entry is
// saved and again before it is started. A stdio server may run any local
// command, so nothing is whitelisted; what is refused is
//
//   - a known indicator of compromise of the hermes-0day campaign anywhere in
//     the command, the args or the env values;
//   - a shell interpreter as the command whose args reach the network
//     (curl, wget, nc, /dev/tcp/, Invoke-WebRequest, ...), noting when they
//     also look like exfiltration;
//   - a shell interpreter whose args touch an OS persistence surface (SSH
//     keys, PAM, sudoers, cron, systemd, shell rc files).
//
// The rules and messages are those of the original Hermes Agent's
// validator, character for character where Go's regexp allows and by hand
// where it does not (look-behind, Unicode word boundaries, Python's
// case-insensitive i).
//
// Beyond the original, the entry is also read as a shell reads it
// (read.go, wrappers.go, with mvdan.cc/sh's parser): through wrappers
// (env, nice, timeout, sudo, xargs, flock ...), into every sh -c string,
// eval and text fed to a shell, with quoting removed, so that the patterns
// see what would run; the code of python -c, node -e, perl -e is matched
// as text. A finding found that way says where ("(inside env → bash -c)").
// Shell text that cannot be read to the end (it does not parse, it is past
// MaxDepth or MaxShellBytes, or what runs is only known when it runs) is
// refused: screening fails closed.
//
// The package only reads the values it is given: it starts nothing, reads
// no files and never puts an env value in a finding (an env value may be a
// secret; a finding names the indicator, never the value it was found in).
package screening

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// Kind is what a Finding found.
type Kind string

// The kinds of finding, in the order the checks run.
const (
	// IOC: a known hermes-0day indicator of compromise. It is reported
	// alone: nothing else is checked once one is found.
	IOC Kind = "ioc"
	// Egress: a shell interpreter with network egress in its args.
	Egress Kind = "egress"
	// Persistence: a shell interpreter writing to an OS persistence
	// surface (the hermes-0day backdoor shape).
	Persistence Kind = "persistence"
	// Unreadable: shell text screening cannot read to the end (it does not
	// parse, or it is past MaxDepth or MaxShellBytes, or a command's name
	// is only known when it runs). It is refused: screening fails closed.
	Unreadable Kind = "unreadable"
)

// Finding is one reason to reject a server entry.
type Finding struct {
	// Server is the entry's name.
	Server string
	Kind   Kind
	// Indicator is the indicator of compromise found (IOC only): one of
	// Indicators, never the text it was found in.
	Indicator string
	// Interpreter is the command as configured (Egress, Persistence).
	Interpreter string
	// Exfiltration is set on an Egress finding whose args also look like
	// exfiltration (.env, --data-binary, POST, an input redirection...).
	Exfiltration bool
	// Where is the way from the configured command to the shell text or
	// code where the danger was found, outermost first ("env",
	// "bash -c"); empty when the configured shell's args show it as
	// written.
	Where []string
	// Reason is why shell text is Unreadable.
	Reason string
}

// maxShown bounds the server name and the command a finding shows, in
// runes: both come from the config file.
const maxShown = 120

// String is the finding as the original validator words it, on one line:
// the server name and the command, which come from the config file, are
// escaped (termsafe.Escape) and cut to maxShown runes.
func (f Finding) String() string {
	name := bound(f.Server)
	switch f.Kind {
	case IOC:
		return fmt.Sprintf("MCP server '%s' contains a known hermes-0day indicator-of-compromise ('%s')", name, f.Indicator) + f.inside()
	case Egress:
		s := fmt.Sprintf("MCP server '%s' uses shell interpreter '%s' with network egress in args", name, bound(f.Interpreter))
		if f.Exfiltration {
			s += " and exfiltration-shaped arguments"
		}
		return s + f.inside()
	case Persistence:
		return fmt.Sprintf("MCP server '%s' uses shell interpreter '%s' to write to an OS persistence surface "+
			"(SSH keys / PAM / sudoers / cron / shell rc)%s — this is the hermes-0day backdoor shape, not a real MCP server",
			name, bound(f.Interpreter), f.inside())
	case Unreadable:
		return fmt.Sprintf("MCP server '%s' cannot be screened: %s%s; write the command without a shell wrapper, "+
			"or run it as a script file", name, bound(f.Reason), f.inside())
	}
	return fmt.Sprintf("MCP server '%s' has an unknown finding %q", name, string(f.Kind))
}

// inside is " (inside env → bash -c)", or "" when Where is empty.
func (f Finding) inside() string {
	if len(f.Where) == 0 {
		return ""
	}
	return " (inside " + bound(strings.Join(f.Where, " → ")) + ")"
}

// bound cuts s to maxShown runes, marking the cut with "…", and escapes
// what a terminal would act on.
func bound(s string) string {
	if utf8.RuneCountInString(s) > maxShown {
		s = string([]rune(s)[:maxShown]) + "…"
	}
	return termsafe.Escape(s)
}

// RejectedError is a server entry the policy refuses, with every finding.
type RejectedError struct {
	Server   string
	Findings []Finding
	// File is where the entry is declared: "" for config.yaml, else a
	// project file.
	File string
}

// Error is one line: "rejected: <finding>[; <finding>]; review the entry
// in config.yaml".
func (e *RejectedError) Error() string {
	parts := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		parts[i] = f.String()
	}
	file := e.File
	if file == "" {
		file = config.File
	}
	return "rejected: " + strings.Join(parts, "; ") + "; review the entry in " + file
}

// Messages returns the findings as text, in order.
func (e *RejectedError) Messages() []string {
	out := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		out[i] = f.String()
	}
	return out
}

// Err returns findings as a *RejectedError, or nil when there are none.
func Err(server string, findings []Finding) error {
	if len(findings) == 0 {
		return nil
	}
	return &RejectedError{Server: server, Findings: findings}
}

// Check returns the findings for one server entry given by its name, its
// command, its args and its env, as it would run. First, as the original
// validator: the indicators of compromise over the command, the args and
// the env values (the first one found is the only finding); then, when the
// command's first word (shell-split, base name, lower-cased) is one of
// ShellInterpreters, the egress and persistence patterns over the args
// joined by spaces. Then as a shell reads it (readEntry): through
// wrappers (env, nice, timeout, sudo, xargs ...), into every -c string,
// with quoting removed, the same indicators and patterns over each command
// that would run and its redirections, and over the code given to python
// -c, node -e, perl -e; shell text it cannot read to the end is a finding
// of its own (Unreadable). A nil result means the entry is allowed.
func Check(name, command string, args []string, env map[string]string) []Finding {
	return check(name, command, command, args, env, true)
}

// check is Check with the command to show in findings given apart; read
// says whether to read the entry as a shell would (it is what runs, not
// config text with ${VAR}s still in it).
func check(name, command, shown string, args []string, env map[string]string, read bool) []Finding {
	script := strings.Join(args, " ")
	if ioc := findIOC(command, script, env); ioc != "" {
		return []Finding{{Server: name, Kind: IOC, Indicator: ioc}}
	}
	var units []unit
	var prob *problem
	if read {
		units, prob = readEntry(command, args)
	}
	for _, u := range units {
		for _, ioc := range Indicators {
			if strings.Contains(u.text, ioc) {
				return []Finding{{Server: name, Kind: IOC, Indicator: ioc, Where: u.where}}
			}
		}
	}
	var out []Finding
	exfil := false
	if IsShell(command) && script != "" {
		exfil = exfiltration(script)
		if egress(script) {
			out = append(out, Finding{Server: name, Kind: Egress, Interpreter: shown})
		}
		if persistence(script) {
			out = append(out, Finding{Server: name, Kind: Persistence, Interpreter: shown})
		}
	}
	for _, u := range units {
		interp := u.interp
		if u.top {
			interp = shown
		}
		exfil = exfil || exfiltration(u.text)
		if egress(u.text) {
			out = append(out, Finding{Server: name, Kind: Egress, Interpreter: interp, Where: u.where})
		}
		if persistence(u.text) {
			out = append(out, Finding{Server: name, Kind: Persistence, Interpreter: interp, Where: u.where})
		}
	}
	if prob != nil {
		out = append(out, Finding{Server: name, Kind: Unreadable, Reason: prob.reason, Where: prob.where})
	}
	for i := range out {
		if out[i].Kind == Egress {
			out[i].Exfiltration = exfil
		}
	}
	return merge(out, nil)
}

// findIOC returns the first of Indicators found in the command, the args
// or an env value, or "".
func findIOC(command, script string, env map[string]string) string {
	for _, ioc := range Indicators {
		if strings.Contains(command, ioc) || strings.Contains(script, ioc) {
			return ioc
		}
		for _, v := range env {
			if strings.Contains(v, ioc) {
				return ioc
			}
		}
	}
	return ""
}

// CheckServer returns the findings for a configured server. Its entry is
// checked twice: as written in config.yaml (Raw: what the original
// validator saw, ${VAR}s unresolved) and as it would run (Command, Args
// and Env with ${VAR}s resolved and ~ expanded), so that neither a
// payload hidden behind a ${VAR} nor one that only the written text shows
// gets through. The findings of both are merged; they show the command as
// written, never a resolved value.
func CheckServer(srv *config.Server) []Finding {
	if srv == nil {
		return nil
	}
	shown := srv.Command
	var written []Finding
	if srv.Raw != nil {
		cmd := scalar(srv.Raw["command"])
		shown = cmd
		written = check(srv.Name, cmd, cmd, rawArgs(srv.Raw["args"]), rawEnv(srv.Raw["env"]), false)
	}
	resolved := check(srv.Name, srv.Command, shown, srv.Args, srv.Env, true)
	return merge(written, resolved)
}

// merge combines the findings of the written and the resolved entry (or
// of one entry read two ways): an indicator of compromise alone (the
// first one), else at most one Egress (the first, exfiltration-shaped if
// any says so), one Persistence and one Unreadable, the first of each.
func merge(a, b []Finding) []Finding {
	all := append(append([]Finding(nil), a...), b...)
	for _, f := range all {
		if f.Kind == IOC {
			return []Finding{f}
		}
	}
	var egress, persist, unread *Finding
	for _, f := range all {
		switch f.Kind {
		case Egress:
			if egress == nil {
				egress = &f
			} else {
				egress.Exfiltration = egress.Exfiltration || f.Exfiltration
			}
		case Persistence:
			if persist == nil {
				persist = &f
			}
		case Unreadable:
			if unread == nil {
				unread = &f
			}
		}
	}
	var out []Finding
	for _, f := range []*Finding{egress, persist, unread} {
		if f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// Admit is the one-call check before a server is started: nil when srv
// may run, else a *RejectedError saying why ("rejected: ...; review the
// entry in config.yaml").
func Admit(srv *config.Server) error {
	if srv == nil {
		return nil
	}
	err := Err(srv.Name, CheckServer(srv))
	if re, ok := err.(*RejectedError); ok && srv.FromProject() {
		re.File = srv.Origin.File
	}
	return err
}

// scalar is a single value of the file as text, as the original read it
// (str(entry.get("command") or "")); anything else is "".
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil, []any, map[string]any:
		return ""
	}
	return fmt.Sprint(v)
}

// rawArgs is the args value as written: a string is the script itself, a
// list its items.
func rawArgs(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return []string{x}
	case []any:
		out := make([]string, len(x))
		for i, it := range x {
			out[i] = fmt.Sprint(it)
		}
		return out
	}
	return []string{fmt.Sprint(v)}
}

// rawEnv is the env mapping's values as written.
func rawEnv(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if x != nil {
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}
