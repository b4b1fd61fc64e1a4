package cli

import (
	"context"
	"fmt"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/urfave/cli/v3"
)

func removeCommand(e *env) *cli.Command {
	var yes bool
	j := &jsonOutput{e: e}
	return &cli.Command{
		Name:      "remove",
		Aliases:   []string{"rm"},
		Usage:     "remove a server and its stored credentials (OAuth tokens)",
		ArgsUsage: "<name>",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation", Destination: &yes},
			j.flag(`print {"name": ..., "removed": true, ...} (see docs/JSON.md)`),
		},
		Action: j.action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return usagef("usage: hermes mcp remove <name> [--yes] [--json]")
			}
			name := c.Args().First()
			if err := requireServer(e, name); err != nil {
				return err
			}
			if !yes {
				if !e.p.Interactive() {
					return usagef("hermes mcp remove: no terminal to confirm on; add --yes to remove '%s'", name)
				}
				// Destructive: the answer defaults to No.
				if !e.p.Confirm(fmt.Sprintf("Remove server '%s'?", name), false) {
					return withCode(codeCancelled, failf("Cancelled; '%s' was kept", name))
				}
			}
			// The entry as it was: its auth plugin revokes its tokens.
			var srv *config.Server
			if cfg, err := e.f.Config(); err == nil && !cfg.SafeMode {
				srv = cfg.Server(name)
			}
			var names []string
			removed := false
			err := config.Edit(e.home, func(d *config.Document) error {
				removed = d.RemoveServer(name)
				names = d.Names()
				return nil
			})
			if err != nil {
				return withCode(codeConfig, failf("removing '%s': %s", name, oneLine(err.Error())))
			}
			if !removed {
				// Removed by someone else since we looked.
				return notFound(name, names)
			}
			if !j.on {
				e.p.OK("Removed '%s' from config", name)
			}
			// What it offered and the tools approved go with it: a server
			// added again under this name is approved afresh.
			if err := e.f.Offered().RemoveServer(name); err != nil {
				e.log.Warn("could not delete what the server offered", "server", name, "error", oneLine(err.Error()))
			}
			r, err := forgetCredentials(e, ctx, name, srv)
			if err != nil {
				return failf("'%s' was removed from config, but its OAuth tokens were not: %s; delete them by hand", name, oneLine(err.Error()))
			}
			if j.on {
				out := jsonRemoved{Name: name, Removed: true, TokensRevoked: r.revoked, TokensDeleted: r.removed > 0}
				if r.pluginErr != "" {
					out.Warnings = append(out.Warnings, fmt.Sprintf("The %s plugin could not log out of '%s' (%s): its tokens were not revoked", srv.Auth, name, r.pluginErr))
				}
				j.write(out)
				return nil
			}
			if r.pluginErr != "" {
				e.p.Warn("The %s plugin could not log out of '%s' (%s): its tokens were not revoked", srv.Auth, name, r.pluginErr)
			}
			if r.revoked {
				e.p.OK("Revoked tokens at the authorization server")
			}
			if r.removed > 0 {
				e.p.OK("Cleaned up OAuth tokens")
			}
			return nil
		}),
	}
}
