package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

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
			return cmdkit.UsageError(c, err)
		}
		if len(c.Commands) > 0 && c.Action == nil {
			// A word that names no subcommand: one line, a suggestion,
			// exit code 2 (urfave/cli's own answer is exit code 3).
			c.Action = func(_ context.Context, c *cli.Command) error {
				if c.Args().Len() > 0 {
					return cmdkit.UnknownCommand(c, c.Args().First())
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

// helpAfterArguments rewrites "hermes mcp call ev echo --help" to "hermes
// mcp call --help": a -h or --help anywhere after a command's own
// arguments asks for that command's help (urfave/cli took the first
// argument for a help topic: "No help topic for 'ev'"). Words after "--"
// are a server's argv and are left alone, and so is a command that reads
// its own words (SkipFlagParsing, such as add).
func helpAfterArguments(root *cli.Command, args []string) []string {
	if len(args) < 2 {
		return args
	}
	c, path, inArguments := root, []string{args[0]}, false
	for _, w := range args[1:] {
		switch {
		case w == "--":
			return args
		case w == "-h" || w == "--help":
			if inArguments && len(c.Commands) == 0 && !c.SkipFlagParsing {
				return append(path, "--help")
			}
			return args
		case strings.HasPrefix(w, "-"):
		case !inArguments && findCommand(c, w) != nil:
			c, path = findCommand(c, w), append(path, w)
		default:
			inArguments = true
		}
	}
	return args
}

// findCommand is c's subcommand named (or aliased) name, or nil.
func findCommand(c *cli.Command, name string) *cli.Command {
	for _, sub := range c.Commands {
		if sub.Name == name || slices.Contains(sub.Aliases, name) {
			return sub
		}
	}
	return nil
}
