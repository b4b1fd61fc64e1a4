package gatewaycmd

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// LogoutOptions are what 'hermes mcp gateway logout' needs.
type LogoutOptions struct {
	Env *cmdkit.Env
	// Subject is --subject: the person, as their token names them.
	Subject string
	// Server is --server: one server; "" is every server.
	Server     string
	ConfigFile string
}

// NewCmdLogout builds 'hermes mcp gateway logout --subject S [--server X]':
// the upstream OAuth tokens the gateway keeps for one person, revoked
// where the authorization server allows and deleted, for one server or
// all of them.
func NewCmdLogout(e *cmdkit.Env, runF func(context.Context, *LogoutOptions) error) *cli.Command {
	opts := &LogoutOptions{Env: e}
	return &cli.Command{
		Name:  "logout",
		Usage: "remove the upstream OAuth tokens the gateway keeps for one person (one server, or all)",
		Description: "Revokes (where the authorization server allows) and deletes what a person authorized through the\n" +
			"gateway: their tokens for --server, or for every server with auth: oauth and their whole vault folder.\n" +
			"Needs the vault key ($HERMES_GATEWAY_VAULT_KEY, or gateway.vault_key_env). Their next call asks them\n" +
			"to log in again.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "subject", Usage: "the person's `SUBJECT` (the sub of their token, or a static token's subject)", Destination: &opts.Subject},
			&cli.StringFlag{Name: "server", Usage: "only the tokens of server `NAME`", Destination: &opts.Server},
			&cli.StringFlag{Name: "config", Usage: "read the servers and the gateway: block from `FILE` instead of $HERMES_HOME/config.yaml", Destination: &opts.ConfigFile},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 || opts.Subject == "" {
				return cmdkit.Usagef("usage: hermes mcp gateway logout --subject SUBJECT [--server NAME] [--config FILE]")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return logoutRun(ctx, opts)
		},
	}
}

// logoutRun logs the person out and says what was done, a line a server.
func logoutRun(ctx context.Context, opts *LogoutOptions) error {
	e := opts.Env
	cfg, gw, err := load(e, opts.ConfigFile)
	if err != nil {
		return err
	}
	f := cmdkit.Factory(e)
	enabled := enabledServers(cfg)
	v, err := gateway.OpenVault(f, gw.VaultKeyEnv, enabled)
	if err != nil {
		return cmdkit.Failf("%s", termsafe.Escape(oneLine(err.Error())))
	}
	if v == nil {
		return cmdkit.Failf("the config has no enabled server with auth: oauth: the gateway keeps no one's upstream tokens")
	}
	done, err := gateway.Logout(ctx, f, v, enabled, opts.Subject, opts.Server)
	for _, r := range done {
		how := "deleted"
		if r.Revoked {
			how = "revoked and deleted"
		}
		line := fmt.Sprintf("%s: %s's tokens %s (%d files)", r.Server, opts.Subject, how, r.Removed)
		if r.Detail != "" {
			line += "; " + r.Detail
		}
		fmt.Fprintln(e.Out, termsafe.Escape(line))
	}
	if err != nil {
		return cmdkit.Failf("%s", termsafe.Escape(oneLine(err.Error())))
	}
	if len(done) == 0 {
		fmt.Fprintf(e.Out, "%s had no upstream tokens to remove\n", termsafe.Escape(opts.Subject))
	}
	return nil
}
