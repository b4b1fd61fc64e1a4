package cli

import (
	"context"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/urfave/cli/v3"
)

// enableCommand is 'hermes mcp enable' (on) or 'hermes mcp disable'.
func enableCommand(e *env, on bool) *cli.Command {
	name, usage, past := "disable", "turn a server off without removing it", "Disabled"
	if on {
		name, usage, past = "enable", "turn a disabled server back on", "Enabled"
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "<name>",
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return usagef("usage: hermes mcp %s <name>", name)
			}
			srvName := c.Args().First()
			if err := e.requireServer(srvName); err != nil {
				return err
			}
			was := true
			if cfg, err := config.Load(e.home); err == nil {
				if s := cfg.Server(srvName); s != nil {
					was = s.Enabled
				}
			}
			if was == on && !config.SafeMode() {
				e.p.Info("'%s' is already %sd.", srvName, name)
				return nil
			}
			err := config.Edit(e.home, func(d *config.Document) error {
				if !d.Has(srvName) {
					return notFound(srvName, d.Names())
				}
				return d.SetEnabled(srvName, on)
			})
			if err != nil {
				if _, ok := err.(*exitError); ok {
					return err
				}
				return failf("%s '%s': %s", name, srvName, oneLine(err.Error()))
			}
			e.p.OK("%s '%s'.", past, srvName)
			e.p.Line("Start a new session for the change to take effect.")
			return nil
		},
	}
}
