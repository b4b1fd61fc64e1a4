package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// pinnedCommitRE is a full commit SHA: the only ref an install accepts, so that
// what runs is exactly what was reviewed.
var pinnedCommitRE = lazyregexp.New(`^[0-9a-f]{40}$`)

// gitConfig are the settings every git command of an install runs with:
// no helper transports that run commands (ext::, fd::), no credential
// helper or askpass program that could prompt, no submodules, no hooks.
var gitConfig = []string{
	"-c", "protocol.ext.allow=never",
	"-c", "protocol.fd.allow=never",
	"-c", "credential.helper=",
	"-c", "core.askPass=",
	"-c", "submodule.recurse=false",
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "advice.detachedHead=false",
}

// gitEnv is git's environment: the user's (proxies, SSH agent, HOME for
// their git settings), without GIT_* variables that would point git
// elsewhere or at a prompt, and with every prompt turned off.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "SSH_ASKPASS" || k == "SSH_ASKPASS_REQUIRE" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
		"GIT_CONFIG_NOSYSTEM=1",
		"LC_ALL=C",
	)
}

// clone clones url into dest (which must not exist) and checks out the
// commit ref, detached; every command bounded by limit.
func (in *Installer) clone(ctx context.Context, t *txn, url, ref, dest string, limit time.Duration) error {
	if _, err := exec.LookPath("git"); err != nil {
		return fmt.Errorf("git is not installed, and '%s' is installed from a git repository; install git and run the command again", t.name)
	}
	in.Prompter.Tell(NoteText, "Cloning %s at %s ...", url, ref)
	var last outputTail
	last.n = 5
	show := func(s string) {
		last.add(s)
		in.Prompter.Tell(NoteDetail, "  %s", s)
	}
	steps := []struct {
		what string
		argv []string
	}{
		{"git clone", append(append([]string{"git"}, gitConfig...), "clone", "--no-checkout", "--quiet", "--", url, dest)},
		{"git checkout", append(append([]string{"git", "-C", dest}, gitConfig...), "checkout", "--quiet", "--detach", ref)},
	}
	for _, s := range steps {
		code, err := t.run(ctx, installCmd{argv: s.argv, dir: t.home, env: gitEnv(), timeout: limit, line: show})
		switch {
		case errors.Is(err, errTimedOut):
			return timeoutError(fmt.Sprintf("%s of %s", s.what, url), limit, "--clone-timeout")
		case err != nil:
			return fmt.Errorf("%s of %s: %w", s.what, url, err)
		case code != 0 && s.what == "git clone":
			return fmt.Errorf("git clone of %s failed (exit %d): %s; check the URL and that the repository is reachable", url, code, installOrText(last.last(), "no message"))
		case code != 0:
			return fmt.Errorf("commit %s is not in %s (git checkout exit %d: %s); the manifest's install.ref must be a commit of that repository", ref, url, code, installOrText(last.last(), "no message"))
		}
	}
	// The checkout must be exactly the pinned commit.
	rev := exec.CommandContext(ctx, "git", "-C", dest, "rev-parse", "HEAD")
	rev.Env = gitEnv()
	out, err := rev.Output()
	if err != nil {
		return fmt.Errorf("reading the commit checked out in %s: %w", dest, err)
	}
	if got := strings.TrimSpace(string(out)); got != ref {
		return fmt.Errorf("the clone of %s is at %s, not at the pinned commit %s", url, got, ref)
	}
	return nil
}

func installOrText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
