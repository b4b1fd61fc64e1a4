package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
)

// TestEveryCommandWithArgumentsHasExamples: the --help of every command
// that takes arguments ends with an Examples block, and no block names a
// command that does not exist.
func TestEveryCommandWithArgumentsHasExamples(t *testing.T) {
	t.Parallel()
	e := &cmdkit.Env{Out: io.Discard, Err: io.Discard, P: ui.New(io.Discard, io.Discard, nil)}
	root := newApp(e)
	seen := map[string]bool{}
	var walk func(c *cli.Command, name string)
	walk = func(c *cli.Command, name string) {
		seen[name] = true
		takesArgs := c.ArgsUsage != "" || strings.Contains(c.UsageText, "<name>")
		if takesArgs && !strings.Contains(c.Description, "Examples:\n  hermes ") {
			t.Errorf("%s --help has no Examples block", name)
		}
		for _, sub := range c.Commands {
			walk(sub, name+" "+sub.Name)
		}
	}
	walk(root, root.Name)
	for name := range examples {
		if !seen[name] {
			t.Errorf("examples for %q, which is no command", name)
		}
	}
}
