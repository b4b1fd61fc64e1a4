package cli

import (
	"context"

	"github.com/urfave/cli/v3"
)

// installCommand is 'hermes mcp install NAME': install a catalog entry.
func installCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "install a server from the curated catalog",
		ArgsUsage: "<name>",
		Action: func(ctx context.Context, c *cli.Command) error {
			return failf("hermes mcp install is being built")
		},
	}
}

// uninstallCommand is 'hermes mcp uninstall NAME'.
func uninstallCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "uninstall",
		Usage:     "remove an installed catalog server and its install folder (keeps .env values)",
		ArgsUsage: "<name>",
		Action: func(ctx context.Context, c *cli.Command) error {
			return failf("hermes mcp uninstall is being built")
		},
	}
}
