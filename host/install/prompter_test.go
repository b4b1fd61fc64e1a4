package install

import (
	"context"
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
}

func (f *fakePrompter) log(to *[]string, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*to = append(*to, fmt.Sprintf(format, args...))
}

func (f *fakePrompter) Interactive() bool               { return true }
func (f *fakePrompter) Header(s string)                 { f.log(&f.shown, "%s", s) }
func (f *fakePrompter) Line(format string, args ...any) { f.log(&f.shown, format, args...) }
func (f *fakePrompter) Info(format string, args ...any) { f.log(&f.shown, format, args...) }
func (f *fakePrompter) OK(format string, args ...any)   { f.log(&f.shown, format, args...) }
func (f *fakePrompter) Warn(format string, args ...any) { f.log(&f.shown, format, args...) }
func (f *fakePrompter) Fail(format string, args ...any) { f.log(&f.shown, format, args...) }
func (f *fakePrompter) Confirm(q string, _ bool) bool {
	f.log(&f.asked, "confirm %s", q)
	return f.confirm
}
func (f *fakePrompter) Ask(p, def string) (string, error) {
	f.log(&f.asked, "ask %s", p)
	return def, nil
}
func (f *fakePrompter) Secret(p string) (string, error) {
	f.log(&f.asked, "secret %s", p)
	return f.secret, nil
}
func (f *fakePrompter) Checklist(title string, items []ui.ChecklistItem) ([]string, error) {
	f.log(&f.asked, "checklist %s (%d)", title, len(items))
	return f.pick, nil
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
	for _, want := range []string{"confirm Install 'demo'?", "secret Demo token", "checklist"} {
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
