package ui

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoTUIFrameworkLinked guards against linking a terminal UI framework
// into the command. bubbletea's package initialisation asks lipgloss for the
// terminal background, and termenv answers that by writing an OSC 11 query
// to the terminal and waiting up to five seconds for the reply, which can
// also eat typed-ahead input. That would run at the start of every hermes
// command, whether it shows a checklist or not.
func TestNoTUIFrameworkLinked(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "list", "-deps", "./cmd/hermes", "./host/ui")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list -deps: %v\n%s", err, msg)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || !strings.Contains(string(out), "github.com/hermes-agent/hermes/host/ui") {
		t.Fatalf("unexpected go list output:\n%s", out)
	}
	forbidden := []string{
		"github.com/charmbracelet/bubbletea",
		"github.com/charmbracelet/lipgloss",
		"github.com/muesli/termenv",
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("./cmd/hermes depends on %s", dep)
			}
		}
	}
}
