package cli

import (
	"context"
	"errors"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/urfave/cli/v3"
)

// enableCommand is 'hermes mcp enable' (on) or 'hermes mcp disable'.
func enableCommand(e *env, on bool) *cli.Command {
	name, usage, past := "disable", "turn a server off without removing it", "Disabled"
	if on {
		name, usage, past = "enable", "turn a disabled server back on", "Enabled"
	}
	j := &jsonOutput{e: e}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "<name>",
		Flags:     []cli.Flag{j.flag("print the server as it is now (see docs/JSON.md)")},
		Action: j.action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return usagef("usage: hermes mcp %s <name> [--json]", name)
			}
			srvName := c.Args().First()
			if err := requireServer(e, srvName); err != nil {
				return err
			}
			was := true
			if cfg, err := e.f.Config(); err == nil {
				if s := cfg.Server(srvName); s != nil {
					was = s.Enabled
				}
			}
			if was == on && !config.SafeModeFrom(func(a0 string) string { return getenv(e, a0) }) {
				if j.on {
					return printServerChanged(e, j, srvName, false)
				}
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
				var ee *exitError
				if errors.As(err, &ee) {
					return err
				}
				return withCode(codeConfig, failf("%s '%s': %s", name, srvName, oneLine(err.Error())))
			}
			if j.on {
				return printServerChanged(e, j, srvName, true)
			}
			e.p.OK("%s '%s'.", past, srvName)
			e.p.Line("%s", changedLine)
			return nil
		}),
	}
}

// printServerChanged prints what enable, disable and configure print with
// --json: the server as config.yaml now has it, and whether the command
// changed it.
func printServerChanged(e *env, j *jsonOutput, name string, changed bool) error {
	cfg, err := e.f.Config()
	if err != nil {
		return withCode(codeConfig, failf("%s", oneLine(err.Error())))
	}
	srv := cfg.Server(name)
	if srv == nil {
		// HERMES_SAFE_MODE hides the servers; the file was changed all
		// the same.
		j.write(jsonChanged{jsonServer: jsonServer{Name: name, Tools: toolSelection(nil), State: stateConfigured}, Changed: changed})
		return nil
	}
	j.write(jsonChanged{jsonServer: serverJSON(srv), Changed: changed})
	return nil
}
