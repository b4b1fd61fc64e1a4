package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/hermes-agent/hermes/sdk"
)

const (
	// maxOutput bounds what the command may print; a token is far smaller.
	maxOutput = 16 << 10
	// maxStderr bounds the stderr kept to explain a failure.
	maxStderr = 4 << 10
	// maxWhy bounds the stderr line shown in an error, in characters.
	maxWhy = 200
	// defaultPATH is searched when the plugin got no PATH from Hermes.
	defaultPATH = "/usr/local/bin:/opt/homebrew/bin:/usr/bin:/bin"
)

// plumbing is the environment Hermes and go-plugin give the plugin process
// for themselves; the command does not get it.
func plumbing(key string) bool {
	return sdk.HostEnv(key)
}

// commandEnv is the command's environment: the plugin's own, which Hermes
// keeps minimal (PATH, HOME, USER, LANG, LC_ALL, TMPDIR, the proxy and
// SSL_CERT_* variables, when Hermes has them), less the plugin plumbing,
// plus exec.env, plus a default PATH when there is none.
func commandEnv(own []string, extra map[string]string) []string {
	var env []string
	for _, kv := range own {
		k, _, _ := strings.Cut(kv, "=")
		if _, overridden := extra[k]; !overridden && !plumbing(k) {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	if envValue(env, "PATH") == "" {
		env = append(env, "PATH="+defaultPATH)
	}
	return env
}

// envValue returns the value of key in a KEY=value list.
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// lookPath finds the command on the PATH of its own environment.
func (s *settings) lookPath() (string, error) {
	if strings.Contains(s.command, "/") {
		if isExecutable(s.command) {
			return s.command, nil
		}
		return "", sdk.NewError(sdk.CodeNotFound, "the token command '%s' is not an executable file; fix exec.command", s.command)
	}
	path := envValue(s.env, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if p := filepath.Join(dir, s.command); dir != "" && isExecutable(p) {
			return p, nil
		}
	}
	where := "on PATH"
	if path == defaultPATH && os.Getenv("PATH") == "" {
		where = "on the default PATH " + defaultPATH + " (Hermes gave the plugin no PATH)"
	}
	hint := "install it, or set exec.command to its full path"
	if strings.Contains(s.command, " ") && len(s.args) == 0 {
		hint = "exec.command names the program only: put its arguments in exec.args"
	}
	return "", sdk.NewError(sdk.CodeNotFound, "the token command '%s' was not found %s; %s", s.command, where, hint)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// runCommand runs the command once, bounded by exec.timeout and ctx, and
// returns the token it printed. Its errors never hold the output.
func (a *execAuth) runCommand(ctx context.Context) (string, error) {
	s := a.s
	path, err := s.lookPath()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	stdout, stderr := &capped{max: maxOutput}, &capped{max: maxStderr}
	cmd := exec.CommandContext(ctx, path, s.args...)
	cmd.Args[0] = s.command
	cmd.Env, cmd.Stdout, cmd.Stderr = s.env, stdout, stderr // stdin: /dev/null
	// The command leads a process group of its own, so that a timeout
	// kills everything it started, not only itself.
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	// Something that left the group may hold stdout open: stop waiting.
	cmd.WaitDelay = 2 * time.Second

	started := time.Now()
	err = cmd.Run()
	outcome := "not started"
	if cmd.ProcessState != nil {
		outcome = sdk.ExitReason(cmd.ProcessState)
	}
	a.log.Debug("ran command", "server", a.server, "command", s.shown,
		"duration", time.Since(started).Round(time.Millisecond), "outcome", outcome)

	out := strings.TrimSpace(string(stdout.buf))
	why := firstLine(stderr.buf, out)
	var exit *exec.ExitError
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", s.failure(sdk.CodeTimeout, fmt.Sprintf("did not finish within %s and was killed; make sure it never waits for input, or raise exec.timeout", s.timeout), why)
	case err != nil && ctx.Err() != nil:
		return "", ctx.Err()
	case errors.As(err, &exit):
		return "", s.failure(sdk.CodeAuth, sdk.ExitReason(exit.ProcessState), why)
	case err != nil && !errors.Is(err, exec.ErrWaitDelay): // ErrWaitDelay: it exited 0
		return "", s.failure(sdk.CodeConfig, "could not run: "+err.Error()+"; fix exec.command", "")
	case stdout.over:
		return "", s.failure(sdk.CodeAuth, fmt.Sprintf("printed more than %d KiB; it must print the token only", maxOutput>>10), "")
	case out == "":
		return "", s.failure(sdk.CodeAuth, "printed nothing on stdout; it must print the token", why)
	case strings.ContainsAny(out, "\r\n"):
		return "", s.failure(sdk.CodeAuth, "printed more than one line; it must print the token only", "")
	case strings.ContainsFunc(out, func(r rune) bool { return r <= ' ' || r > '~' }):
		hint := ""
		if strings.HasPrefix(strings.ToLower(out), "bearer ") {
			hint = ` (Hermes adds "Bearer " itself)`
		}
		return "", s.failure(sdk.CodeAuth, "printed a token with a space, control or non-ASCII character inside; it must print the token only"+hint, "")
	}
	return out, nil
}

// failure is the error of a run: what went wrong, and the command's
// explanation when it gave one.
func (s *settings) failure(code, what, why string) error {
	msg := fmt.Sprintf("the token command `%s` %s", s.shown, what)
	if why != "" {
		msg += "; it said: " + why
	}
	return sdk.NewError(code, "%s", msg)
}

// ansi matches terminal escape sequences (colours).
var ansi = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]") })

// firstLine is the first non-empty line of the command's stderr, safe to
// show: escapes and control characters removed, anything stdout held
// masked (a helper may echo its token), cut to maxWhy characters.
func firstLine(stderr []byte, stdout string) string {
	text := ansi().ReplaceAllString(strings.ToValidUTF8(string(stderr), ""), "")
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				return -1
			}
			return r
		}, line))
		if line == "" {
			continue
		}
		for _, f := range strings.Fields(stdout) {
			if len(f) >= 8 {
				line = strings.ReplaceAll(line, f, "[token]")
			}
		}
		if r := []rune(line); len(r) > maxWhy {
			line = string(r[:maxWhy-1]) + "…"
		}
		return line
	}
	return ""
}

// capped keeps the first max bytes written to it and notes whether there
// were more; it never fails, so the command is never stopped by a full pipe.
type capped struct {
	buf  []byte
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	n := min(len(p), c.max-len(c.buf))
	c.buf = append(c.buf, p[:n]...)
	c.over = c.over || n < len(p)
	return len(p), nil
}
