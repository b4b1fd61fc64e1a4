package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testwait"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testserver"
)

// completionShells are the shells `hermes completion` prints a script for.
var completionShells = []string{"bash", "zsh", "fish"}

// shellPath finds a shell for the completion tests. Without it the test is
// skipped, except on CI (CI=true), where a missing shell is a missing
// install step and fails.
func shellPath(t *testing.T, shell string) string {
	t.Helper()
	p, err := exec.LookPath(shell)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed: CI must install it (Debian package %s) to test its completion", shell, shell)
		}
		t.Skipf("%s is not installed", shell)
	}
	return p
}

// completionRig runs a shell's completion of hermes the way a person's
// shell does it: the script `hermes completion SHELL` prints is loaded into
// a real shell, whose completion function runs the real hermes binary
// (found as "hermes" on PATH), which starts servers through real plugins.
type completionRig struct {
	t     *testing.T
	home  string // HERMES_HOME
	path  string // PATH, the hermes binary first
	shell string // the shell's own home and config folders
}

func newCompletionRig(t *testing.T, home string) *completionRig {
	t.Helper()
	shim := t.TempDir()
	if err := os.Symlink(testbin.Path(t, "hermes"), filepath.Join(shim, "hermes")); err != nil {
		t.Fatal(err)
	}
	return &completionRig{t: t, home: home, path: shim + string(os.PathListSeparator) + os.Getenv("PATH"), shell: t.TempDir()}
}

// complete completes line (what is typed before the cursor, which is at
// its end) in shell, run in an empty working folder, and returns the
// candidates the shell offers and that folder.
func (r *completionRig) complete(shell, line string, extraEnv ...string) (offered []string, cwd string) {
	t := r.t
	t.Helper()
	cwd = t.TempDir()
	sh := shellPath(t, strings.TrimSuffix(shell, "+bash-completion"))
	var cmd *exec.Cmd
	switch shell {
	case "bash", "bash+bash-completion":
		// Plain bash, without bash-completion: the completion function
		// that `complete -p hermes` names is called as bash calls it on
		// TAB, with COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT set.
		// The second form loads the bash-completion package first, as
		// many users' bash does.
		driver := bashDriver
		if shell == "bash+bash-completion" {
			driver = "source " + bashCompletionPkg + " || exit 2\n" + driver
		}
		words := strings.Split(line, " ")
		cmd = exec.Command(sh, append([]string{"--norc", "--noprofile", "-c", driver, "bash"}, words...)...)
	case "zsh":
		// An interactive zsh on a pseudo-terminal of zsh's own (zpty),
		// with compinit and the script loaded, is sent the line and a
		// TAB; compadd is wrapped to record what the completion offers.
		init := filepath.Join(r.shell, "init.zsh")
		if err := os.WriteFile(init, []byte(zshInit), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(sh, "-f", "-c", zshDriver, "zsh", filepath.Join(r.shell, "offered"), line, init)
	case "fish":
		// fish's own completion engine, as on TAB (complete -C).
		cmd = exec.Command(sh, "--no-config", "-c", "hermes completion fish | source; or exit 3; complete -C $HERMES_TEST_LINE")
	}
	cmd.Dir = cwd
	cmd.Env = append(hermesTestEnv(t, r.home, "PATH="+r.path, "HOME="+r.shell, "XDG_CONFIG_HOME="+r.shell,
		"XDG_DATA_HOME="+r.shell, "XDG_CACHE_HOME="+r.shell, "ZDOTDIR="+r.shell, "HERMES_TEST_LINE="+line,
		// A server listed on TAB may take its time on a busy machine.
		"HERMES_COMPLETION_TIMEOUT=60s"), extraEnv...)
	res := runShell(t, cmd)
	if res.code != 0 {
		t.Fatalf("%s completing %q: exit %d\nstdout:\n%s\nstderr:\n%s", shell, line, res.code, res.stdout, res.stderr)
	}
	switch shell {
	case "bash", "bash+bash-completion":
		offered = splitNul(res.stdout)
	case "zsh":
		b, err := os.ReadFile(filepath.Join(r.shell, "offered"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		_ = os.Remove(filepath.Join(r.shell, "offered"))
		offered = splitNul(string(b))
	case "fish":
		for l := range strings.Lines(res.stdout) {
			cand, _, _ := strings.Cut(strings.TrimSuffix(l, "\n"), "\t")
			offered = append(offered, cand)
		}
	}
	slices.Sort(offered)
	return offered, cwd
}

func splitNul(s string) []string {
	var out []string
	for w := range strings.SplitSeq(s, "\x00") {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// runShell runs a shell to its end; a shell that hangs is stopped just
// before the test binary's -timeout, and fails the test with its output.
func runShell(t *testing.T, cmd *exec.Cmd) runResult {
	t.Helper()
	ctx := testwait.Context(t)
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Dir, c.Env = cmd.Dir, cmd.Env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s had not finished when the test binary's -timeout was near\nstdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), out.String(), errb.String())
	}
	r := runResult{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// bashCompletionPkg is the bash-completion package's script, as Debian
// installs it.
const bashCompletionPkg = "/usr/share/bash-completion/bash_completion"

// bashDriver loads the script into plain bash and calls its completion
// function for the words in $@ (the last one being completed), then prints
// COMPREPLY, NUL-separated.
const bashDriver = `
source <(hermes completion bash) || exit 3
spec=$(complete -p hermes) || exit 4
fn=${spec##*-F }
fn=${fn%% *}
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
COMP_TYPE=9
COMP_KEY=9
"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" || exit 5
(( ${#COMPREPLY[@]} == 0 )) || printf '%s\0' "${COMPREPLY[@]}"
`

// zshInit is what the interactive zsh under test runs first: compinit, the
// script, and a compadd that records the candidates it is given and that
// match (-O), NUL-separated, in $OFFERED, before adding them as usual.
// After the completion, a marker on the terminal tells the driver it is
// over.
const zshInit = `
PS1='> '
autoload -Uz compinit && compinit -u -D
hermes completion zsh > $ZDOTDIR/hermes.zsh && source $ZDOTDIR/hermes.zsh || print -r -- COMPLETION-SCRIPT-FAILED
compadd() {
	local -i end=${@[(i)--]}
	local -a opts=("${@[1,end-1]}") __m
	if (( ${opts[(I)-[OAD]*]} )); then
		builtin compadd "$@"
		return
	fi
	builtin compadd -O __m "$@"
	(( ${#__m} == 0 )) || print -rN -- "${__m[@]}" >> $OFFERED
	builtin compadd "$@"
}
__done() { print -r -- COMPLETION-OVER > /dev/tty }
comppostfuncs=(__done)
bindkey '^I' complete-word
print -r -- READY-FOR-TAB
`

// zshDriver starts zsh -f -i on a pseudo-terminal, loads $3, types $2 and
// a TAB, and waits for the completion to be over. $1 receives the
// candidates.
const zshDriver = `
zmodload zsh/zpty || exit 3
export OFFERED=$1
zpty z zsh -f -i || exit 4
zpty -w z "source ${(q)3}"
zpty -r z out '*READY-FOR-TAB*' || exit 5
[[ $out != *COMPLETION-SCRIPT-FAILED* ]] || exit 6
zpty -w -n z "$2"$'\t'
zpty -r z out '*COMPLETION-OVER*' || exit 7
zpty -d z
`

// TestCompletionTreatsNamesAsData: a server lists tools whose names are
// shell code (command substitutions, backticks, ;, quotes, line breaks,
// globs, control characters) and config.yaml holds a server key that is
// shell code. Completing them in real bash, zsh and fish runs none of it
// (no file appears), and the shell offers exactly the names that are valid
// where they are used: tool names of [A-Za-z0-9_-] for `mcp call NAME`,
// server names by the config's name rule for `mcp test`.
func TestCompletionTreatsNamesAsData(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n"+
		"  evil:\n    command: "+testServerPath(t)+"\n    args: [--shell-names]\n"+
		"  'a$(touch Y)b':\n    command: \"true\"\n"+
		"  'c`touch Z`d':\n    command: \"true\"\n"+
		"  plain-2:\n    command: \"true\"\n")
	rig := newCompletionRig(t, home)
	validTools := append([]string{"attack", "burst_stats", "echo"}, testserver.ShellSafeToolNames...)
	slices.Sort(validTools)
	cases := []struct {
		line string
		want []string
	}{
		{"hermes mcp call evil ", validTools},
		{"hermes mcp call evil safe", []string{"safe-tool-2", "safe_tool"}},
		{"hermes mcp test ", []string{"evil", "plain-2"}},
		{"hermes mcp test pl", []string{"plain-2"}},
	}
	for _, shell := range append(completionShells, "bash+bash-completion") {
		t.Run(shell, func(t *testing.T) {
			if _, err := os.Stat(bashCompletionPkg); err != nil && shell == "bash+bash-completion" {
				// Plain bash (above) is what must work; this one only
				// shows the same with the package that most users have.
				t.Skipf("the bash-completion package is not installed (%v)", err)
			}
			rig.t = t
			for _, c := range cases {
				got, cwd := rig.complete(shell, c.line)
				if !slices.Equal(got, c.want) {
					t.Errorf("%s: %q<TAB> offers %q, want %q", shell, c.line, got, c.want)
				}
				if left, _ := os.ReadDir(cwd); len(left) > 0 {
					var names []string
					for _, e := range left {
						names = append(names, e.Name())
					}
					t.Errorf("%s: completing %q ran a name as shell code: it created %q", shell, c.line, names)
				}
			}
		})
	}
}

// TestCompletionScriptsTreatOutputAsData: each shell's script keeps what
// hermes prints as data even if hermes printed shell code, so a bug in
// hermes's own filtering cannot turn into running code. A stand-in for
// hermes prints ShellToolNames (one a line) as its candidates; completing in
// bash, zsh and fish creates no file, and each line is offered as it is.
func TestCompletionScriptsTreatOutputAsData(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	rig := newCompletionRig(t, home)
	shim := strings.Split(rig.path, string(os.PathListSeparator))[0]
	lines := strings.Join(testserver.ShellToolNames, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(shim, "candidates"), []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(shim, "hermes")
	target, err := os.Readlink(real)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(real); err != nil {
		t.Fatal(err)
	}
	fake := "#!/bin/sh\ncase \"$1\" in completion) exec '" + target + "' \"$@\";; esac\nexec cat '" + filepath.Join(shim, "candidates") + "'\n"
	if err := os.WriteFile(real, []byte(fake), 0o700); err != nil {
		t.Fatal(err)
	}
	// A process another test forks in the same instant inherits the
	// script's write descriptor until it execs, and the kernel refuses to
	// run a file open for writing ("text file busy"): wait until it runs.
	testwait.For(t, time.Minute, "the fake hermes to be executable", func() bool {
		err := exec.Command(real).Run()
		return !errors.Is(err, syscall.ETXTBSY)
	})
	var want []string
	for l := range strings.Lines(lines) {
		want = append(want, strings.TrimSuffix(l, "\n"))
	}
	slices.Sort(want)
	for _, shell := range completionShells {
		t.Run(shell, func(t *testing.T) {
			rig.t = t
			got, cwd := rig.complete(shell, "hermes mcp call evil ")
			if left, _ := os.ReadDir(cwd); len(left) > 0 {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("%s ran a candidate as shell code: it created %q", shell, names)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s offers %q,\nwant each line as it is: %q", shell, got, want)
			}
		})
	}
}
