package servers

import (
	"context"
	"errors"

	"github.com/hermes-agent/hermes/host/cli/mcp/add"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/urfave/cli/v3"
)

// EnableOptions is what 'hermes mcp enable' and 'hermes mcp disable'
// need.
type EnableOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// On is true for enable, false for disable.
	On bool
	// Name is the server to turn on or off.
	Name string
}

// verbs are the command's name ("enable", "disable") and what it says it
// did ("Enabled", "Disabled").
func (o *EnableOptions) verbs() (name, past string) {
	if o.On {
		return "enable", "Enabled"
	}
	return "disable", "Disabled"
}

// NewCmdEnable is 'hermes mcp enable' (on) or 'hermes mcp disable'. runF,
// when not nil, is called with the options in place of the work (the
// tests' seam).
func NewCmdEnable(e *cmdkit.Env, on bool, runF func(context.Context, *EnableOptions) error) *cli.Command {
	opts := &EnableOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}, On: on}
	name, _ := opts.verbs()
	usage := "turn a server off without removing it"
	if on {
		usage = "turn a disabled server back on"
	}
	j := opts.JSON
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "<name>",
		Flags:     []cli.Flag{j.Flag("print the server as it is now (see docs/JSON.md)")},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp %s <name> [--json]", name)
			}
			opts.Name = c.Args().First()
			if runF != nil {
				return runF(ctx, opts)
			}
			return enableRun(ctx, opts)
		}),
	}
}

// enableRun turns the server on or off in config.yaml.
func enableRun(_ context.Context, opts *EnableOptions) error {
	e, j, srvName := opts.Env, opts.JSON, opts.Name
	name, past := opts.verbs()
	if err := cmdkit.RequireServer(e, srvName); err != nil {
		return err
	}
	was := true
	if cfg, err := e.F.Config(); err == nil {
		if s := cfg.Server(srvName); s != nil {
			was = s.Enabled
		}
	}
	if was == opts.On && !config.SafeModeFrom(cmdkit.Getter(e)) {
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
		return d.SetEnabled(srvName, opts.On)
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
