package servers

import (
	"context"
	"fmt"

	"github.com/hermes-agent/hermes/host/cli/mcp/login"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/urfave/cli/v3"
)

// RemoveOptions is what 'hermes mcp remove' needs.
type RemoveOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// Name is the server to remove.
	Name string
	// Yes is --yes: do not ask for confirmation.
	Yes bool
}

// NewCmdRemove is 'hermes mcp remove NAME'. runF, when not nil, is called
// with the options in place of the work (the tests' seam).
func NewCmdRemove(e *cmdkit.Env, runF func(context.Context, *RemoveOptions) error) *cli.Command {
	opts := &RemoveOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:      "remove",
		Aliases:   []string{"rm"},
		Usage:     "remove a server and its stored credentials (OAuth tokens)",
		ArgsUsage: "<name>",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation", Destination: &opts.Yes},
			j.Flag(`print {"name": ..., "removed": true, ...} (see docs/JSON.md)`),
		},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp remove <name> [--yes] [--json]")
			}
			opts.Name = c.Args().First()
			if runF != nil {
				return runF(ctx, opts)
			}
			return removeRun(ctx, opts)
		}),
	}
}

// removeRun removes the server from config.yaml, what it offered and its
// credentials (revoked by its auth plugin where it has one).
func removeRun(ctx context.Context, opts *RemoveOptions) error {
	e, j, name := opts.Env, opts.JSON, opts.Name
	if err := cmdkit.RequireServer(e, name); err != nil {
		return err
	}
	if !opts.Yes {
		if !e.P.Interactive() {
			return cmdkit.Usagef("hermes mcp remove: no terminal to confirm on; add --yes to remove '%s'", name)
		}
		// Destructive: the answer defaults to No.
		if !e.P.Confirm(fmt.Sprintf("Remove server '%s'?", name), false) {
			return cmdkit.WithCode(cmdkit.CodeCancelled, cmdkit.Failf("Cancelled; '%s' was kept", name))
		}
	}
	// The entry as it was: its auth plugin revokes its tokens.
	var srv *config.Server
	if cfg, err := e.F.Config(); err == nil && !cfg.SafeMode {
		srv = cfg.Server(name)
	}
	var names []string
	removed := false
	err := config.Edit(e.Home, func(d *config.Document) error {
		removed = d.RemoveServer(name)
		names = d.Names()
		return nil
	})
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("removing '%s': %s", name, cmdkit.OneLine(err.Error())))
	}
	if !removed {
		// Removed by someone else since we looked.
		return cmdkit.NotFound(name, names)
	}
	if !j.On {
		e.P.OK("Removed '%s' from config", name)
	}
	// What it offered and the tools approved go with it: a server
	// added again under this name is approved afresh.
	if err := e.F.Offered().RemoveServer(name); err != nil {
		e.Log.Warn("could not delete what the server offered", "server", name, "error", cmdkit.OneLine(err.Error()))
	}
	r, err := login.ForgetCredentials(e, ctx, name, srv)
	if err != nil {
		return cmdkit.Failf("'%s' was removed from config, but its OAuth tokens were not: %s; delete them by hand", name, cmdkit.OneLine(err.Error()))
	}
	if j.On {
		out := cmdkit.JSONRemoved{Name: name, Removed: true, TokensRevoked: r.Revoked, TokensDeleted: r.Removed > 0}
		if r.PluginErr != "" {
			out.Warnings = append(out.Warnings, fmt.Sprintf("The %s plugin could not log out of '%s' (%s): its tokens were not revoked", srv.Auth, name, r.PluginErr))
		}
		j.Write(out)
		return nil
	}
	if r.PluginErr != "" {
		e.P.Warn("The %s plugin could not log out of '%s' (%s): its tokens were not revoked", srv.Auth, name, r.PluginErr)
	}
	if r.Revoked {
		e.P.OK("Revoked tokens at the authorization server")
	}
	if r.Removed > 0 {
		e.P.OK("Cleaned up OAuth tokens")
	}
	return nil
}
