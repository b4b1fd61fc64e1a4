package servers

import (
	"context"
	"errors"

	"github.com/hermes-agent/hermes/host/cli/mcp/add"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/urfave/cli/v3"
)

// EnableCommand is 'hermes mcp enable' (on) or 'hermes mcp disable'.
func EnableCommand(e *cmdkit.Env, on bool) *cli.Command {
	name, usage, past := "disable", "turn a server off without removing it", "Disabled"
	if on {
		name, usage, past = "enable", "turn a disabled server back on", "Enabled"
	}
	j := &cmdkit.JSONOutput{E: e}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "<name>",
		Flags:     []cli.Flag{j.Flag("print the server as it is now (see docs/JSON.md)")},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp %s <name> [--json]", name)
			}
			srvName := c.Args().First()
			if err := cmdkit.RequireServer(e, srvName); err != nil {
				return err
			}
			was := true
			if cfg, err := e.F.Config(); err == nil {
				if s := cfg.Server(srvName); s != nil {
					was = s.Enabled
				}
			}
			if was == on && !config.SafeModeFrom(func(a0 string) string { return cmdkit.Getenv(e, a0) }) {
				if j.On {
					return PrintServerChanged(e, j, srvName, false)
				}
				e.P.Info("'%s' is already %sd.", srvName, name)
				return nil
			}
			err := config.Edit(e.Home, func(d *config.Document) error {
				if !d.Has(srvName) {
					return cmdkit.NotFound(srvName, d.Names())
				}
				return d.SetEnabled(srvName, on)
			})
			if err != nil {
				var ee *cmdkit.ExitError
				if errors.As(err, &ee) {
					return err
				}
				return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s '%s': %s", name, srvName, cmdkit.OneLine(err.Error())))
			}
			if j.On {
				return PrintServerChanged(e, j, srvName, true)
			}
			e.P.OK("%s '%s'.", past, srvName)
			e.P.Line("%s", add.ChangedLine)
			return nil
		}),
	}
}

// PrintServerChanged prints what enable, disable and configure print with
// --json: the server as config.yaml now has it, and whether the command
// changed it.
func PrintServerChanged(e *cmdkit.Env, j *cmdkit.JSONOutput, name string, changed bool) error {
	cfg, err := e.F.Config()
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	srv := cfg.Server(name)
	if srv == nil {
		// HERMES_SAFE_MODE hides the servers; the file was changed all
		// the same.
		j.Write(cmdkit.JSONChanged{JSONServer: cmdkit.JSONServer{Name: name, Tools: cmdkit.ToolSelection(nil), State: cmdkit.StateConfigured}, Changed: changed})
		return nil
	}
	j.Write(cmdkit.JSONChanged{JSONServer: cmdkit.ServerJSON(srv), Changed: changed})
	return nil
}
