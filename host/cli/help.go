package cli

import (
	"context"

	"github.com/urfave/cli/v3"
)

// argumentsFirst makes every command without subcommands read its words as
// arguments, and returns root. urfave/cli gives each command a "help"
// subcommand with the alias "h", so 'hermes mcp test h' printed help (and
// exited 0) instead of testing the server named h: a server or tool name
// in argument position is always a name. Commands with subcommands keep
// theirs ('hermes mcp help'), and --help and -h work everywhere.
func argumentsFirst(root *cli.Command) *cli.Command {
	var walk func(c *cli.Command, name string)
	walk = func(c *cli.Command, name string) {
		addExamples(c, name)
		if len(c.Commands) == 0 {
			c.HideHelpCommand = true
		}
		// A mistyped flag is one line with a suggestion, exit code 2, not
		// the whole help.
		c.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
			return usageError(c, err)
		}
		if len(c.Commands) > 0 && c.Action == nil {
			// A word that names no subcommand: one line, a suggestion,
			// exit code 2 (urfave/cli's own answer is exit code 3).
			c.Action = func(_ context.Context, c *cli.Command) error {
				if c.Args().Len() > 0 {
					return unknownCommand(c, c.Args().First())
				}
				return cli.ShowSubcommandHelp(c)
			}
		}
		for _, sub := range c.Commands {
			walk(sub, name+" "+sub.Name)
		}
	}
	walk(root, root.Name)
	return root
}
