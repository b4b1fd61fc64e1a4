package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/ui"
)

// fakePrompter is a person at a terminal, played by the test: it records
// what it was shown and asked, and answers from its fields.
type fakePrompter struct {
	mu      sync.Mutex
	shown   []string
	asked   []string
	secret  string
	pick    []string
	confirm bool
	// cancel: the person cancels when asked for a value.
	cancel bool
}

func (f *fakePrompter) log(to *[]string, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*to = append(*to, fmt.Sprintf(format, args...))
}

func (f *fakePrompter) Interactive() bool { return true }
func (f *fakePrompter) Tell(_ Note, format string, args ...any) {
	f.log(&f.shown, format, args...)
}
func (f *fakePrompter) Approve(q string) bool {
	f.log(&f.asked, "approve %s", q)
	return f.confirm
}
func (f *fakePrompter) Value(v Variable) (string, error) {
	if f.cancel {
		f.log(&f.asked, "cancelled at %s", v.Prompt)
		return "", fmt.Errorf("%w: the person cancelled", ErrDeclined)
	}
	if v.Secret {
		f.log(&f.asked, "secret %s", v.Prompt)
		return f.secret, nil
	}
	f.log(&f.asked, "ask %s", v.Prompt)
	return v.Default, nil
}
func (f *fakePrompter) PickTools(server string, tools []ToolChoice) ([]string, error) {
	f.log(&f.asked, "pick tools of %s (%d)", server, len(tools))
	return f.pick, nil
}

// printed is the person at a terminal as host/cli shows an install to
// them, on a ui.Printer: for the tests that read what an install prints.
type printed struct{ p *ui.Printer }

func (t printed) Interactive() bool { return t.p.Interactive() }
func (t printed) Tell(kind Note, format string, args ...any) {
	switch kind {
	case NoteTitle:
		t.p.Header(fmt.Sprintf(format, args...))
	case NoteDetail:
		t.p.Info(format, args...)
	case NoteDone:
		t.p.OK(format, args...)
	case NoteWarning:
		t.p.Warn(format, args...)
	case NoteFailure:
		t.p.Fail(format, args...)
	default:
		t.p.Line(format, args...)
	}
}
func (t printed) Approve(q string) bool { return t.p.Confirm(q, false) }
func (t printed) Value(v Variable) (string, error) {
	return "", fmt.Errorf("no value for %s: these tests have no terminal", v.Name)
}
func (t printed) PickTools(string, []ToolChoice) ([]string, error) {
	return nil, errors.New("no tools picked: these tests have no terminal")
}

// An install talks to its person only through the Prompter it is given:
// the confirmation, the secret and the tool choice are the prompter's
// answers, and what it shows (the plan) reaches the prompter.
func TestInstallAsksThroughPrompter(t *testing.T) {
	repo, sha := gitRepo(t, map[string]string{"bin/server": "#!/bin/sh\necho server\n"})
	home := t.TempDir()
	f := &fakePrompter{secret: "tok-from-prompter", pick: []string{"sub"}, confirm: true}
	in := &Installer{
		Home:      home,
		Prompter:  f,
		Probe:     func(context.Context, *config.Server) ([]Tool, error) { return demoTools, nil },
		LookupEnv: func(string) (string, bool) { return "", false },
	}
	if err := in.Install(context.Background(), demoManifest(repo, sha), Options{}); err != nil {
		t.Fatalf("install: %v\nshown: %q", err, f.shown)
	}
	asked := strings.Join(f.asked, "\n")
	for _, want := range []string{"approve Install 'demo'?", "secret Demo token", "pick tools of demo (3)"} {
		if !strings.Contains(asked, want) {
			t.Errorf("the prompter was not asked %q; asked:\n%s", want, asked)
		}
	}
	if shown := strings.Join(f.shown, "\n"); !strings.Contains(shown, "Installing MCP 'demo'") || strings.Contains(shown, "tok-from-prompter") {
		t.Errorf("shown:\n%s", shown)
	}
	if env, _ := config.LoadDotEnv(home); env["DEMO_TOKEN"] != "tok-from-prompter" {
		t.Errorf(".env = %v, want the prompter's secret", env)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if inc := cfg.Server("demo").Tools.Include; len(inc) != 1 || inc[0] != "sub" {
		t.Errorf("tools.include = %v, want the prompter's pick", inc)
	}
	if _, err := os.Stat(filepath.Join(InstallDir(home, "demo"), "bin", "server")); err != nil {
		t.Error(err)
	}
}

// A person who cancels a question declines the install: nothing is
// installed, and the install says so.
func TestInstallCancelledAtAQuestion(t *testing.T) {
	repo, sha := gitRepo(t, map[string]string{"bin/server": "#!/bin/sh\necho server\n"})
	home := t.TempDir()
	f := &fakePrompter{confirm: true, cancel: true}
	in := &Installer{
		Home:      home,
		Prompter:  f,
		Probe:     func(context.Context, *config.Server) ([]Tool, error) { return demoTools, nil },
		LookupEnv: func(string) (string, bool) { return "", false },
	}
	before := snapshot(t, home)
	err := in.Install(context.Background(), demoManifest(repo, sha), Options{})
	if !errors.Is(err, ErrDeclined) || err.Error() != "declined: nothing was installed" {
		t.Fatalf("err = %v, want ErrDeclined: nothing was installed", err)
	}
	if !strings.Contains(strings.Join(f.asked, "\n"), "cancelled at Demo token") {
		t.Errorf("asked: %q", f.asked)
	}
	if after := snapshot(t, home); after != before {
		t.Errorf("the home changed:\n%s\nwas:\n%s", after, before)
	}
}
