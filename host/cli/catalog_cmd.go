package cli

import (
	"context"

	"github.com/urfave/cli/v3"
)

// catalogCommand is 'hermes mcp catalog': the curated catalog as a table.
func catalogCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "catalog",
		Usage: "list the curated catalog of MCP servers",
		Action: func(ctx context.Context, c *cli.Command) error {
			return failf("hermes mcp catalog is being built")
		},
	}
}
