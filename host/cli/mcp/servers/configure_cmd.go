package servers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hermes-agent/hermes/host/cli/mcp/add"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
)

// ConfigureOptions is what 'hermes mcp configure' needs: the run, the
// server named and its flags.
type ConfigureOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// Name is the server to configure.
	Name string
	// Include and Exclude are --include and --exclude as given;
	// IncludeSet and ExcludeSet say whether they were given at all.
	Include, Exclude       string
	IncludeSet, ExcludeSet bool
	// IncludeTools and ExcludeTools are Include and Exclude split into
	// names (or globs).
	IncludeTools, ExcludeTools []string
	// All is --all: remove the filter.
	All bool
	// AcceptChanges is --accept-changes.
	AcceptChanges bool
}

// NewCmdConfigure is 'hermes mcp configure NAME'. runF, when not nil, is
// called with the options in place of the work (the tests' seam).
func NewCmdConfigure(e *cmdkit.Env, runF func(context.Context, *ConfigureOptions) error) *cli.Command {
	opts := &ConfigureOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:      "configure",
		Aliases:   []string{"config"},
		Usage:     "choose which tools of a server are enabled",
		ArgsUsage: "<name>",
		Description: "On a terminal, connects to the server and shows its tools as a checklist,\n" +
			"pre-checked from the current tools.include / tools.exclude. Elsewhere, set the\n" +
			"filter with exactly one of --include, --exclude or --all (no connection is made).\n" +
			"Tools whose definitions changed since they were approved are shown first, and\n" +
			"accepted when you say so (or with --accept-changes, which connects to list them).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "include", Usage: "enable only these tools (`a,b`; names or globs)", Destination: &opts.Include},
			&cli.StringFlag{Name: "exclude", Usage: "enable every tool except these (`c,d`; names or globs)", Destination: &opts.Exclude},
			&cli.BoolFlag{Name: "all", Usage: "enable every tool (remove the filter)", Destination: &opts.All},
			&cli.BoolFlag{Name: "accept-changes", Usage: "connect, show the tools whose definitions changed since they were approved, and accept them", Destination: &opts.AcceptChanges},
			j.Flag("with --include, --exclude or --all: print the server as it is now (see docs/JSON.md)"),
		},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp configure <name> [--include a,b | --exclude c,d | --all] [--json]")
			}
			opts.Name = c.Args().First()
			opts.IncludeSet, opts.ExcludeSet = c.IsSet("include"), c.IsSet("exclude")
			given := 0
			for _, set := range []bool{opts.IncludeSet, opts.ExcludeSet, opts.All} {
				if set {
					given++
				}
			}
			if given > 1 {
				return cmdkit.Usagef("--include, --exclude and --all are mutually exclusive; give one of them")
			}
			if opts.AcceptChanges && j.On {
				return cmdkit.Usagef("--accept-changes prints for a person; leave out --json")
			}
			switch {
			case opts.IncludeSet:
				if opts.IncludeTools = cmdkit.SplitList(opts.Include); len(opts.IncludeTools) == 0 {
					return cmdkit.Usagef("--include needs at least one tool name, e.g. --include read_file,list_dir")
				}
			case opts.ExcludeSet:
				if opts.ExcludeTools = cmdkit.SplitList(opts.Exclude); len(opts.ExcludeTools) == 0 {
					return cmdkit.Usagef("--exclude needs at least one tool name, e.g. --exclude delete_file")
				}
			}
			if given == 0 && !opts.AcceptChanges && j.On {
				return cmdkit.Usagef("hermes mcp configure --json needs one of --include a,b, --exclude c,d or --all: the checklist is for a person")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return configureRun(ctx, opts)
		}),
	}
}

// filterGiven reports whether one of --include, --exclude and --all was
// given.
func (o *ConfigureOptions) filterGiven() bool { return o.IncludeSet || o.ExcludeSet || o.All }

// configureRun accepts changed tools (--accept-changes), sets the filter
// (--include, --exclude, --all) or, with neither, shows the checklist.
func configureRun(ctx context.Context, opts *ConfigureOptions) error {
	e := opts.Env
	if opts.AcceptChanges {
		if err := AcceptChanges(e, ctx, opts.Name); err != nil || !opts.filterGiven() {
			return err
		}
	}
	if opts.filterGiven() {
		return SetFilter(e, opts.JSON, opts.Name, opts.IncludeTools, opts.ExcludeTools)
	}
	if !e.P.Interactive() {
		return cmdkit.Failf("'hermes mcp configure' needs an interactive terminal to pick tools; pass --include a,b, --exclude c,d or --all instead (or --accept-changes to accept changed tools)")
	}
	return ConfigureInteractive(e, ctx, opts.Name)
}

// SetFilter writes tools.include / tools.exclude of name, reporting whether
// anything changed (with --json, the server as it is now).
func SetFilter(e *cmdkit.Env, j *cmdkit.JSONOutput, name string, inc, exc []string) error {
	changed := false
	err := config.Edit(e.Home, func(d *config.Document) error {
		if !d.Has(name) {
			return cmdkit.NotFound(name, d.Names())
		}
		before := d.Bytes()
		if err := d.SetToolsFilter(name, inc, exc); err != nil {
			return err
		}
		changed = string(before) != string(d.Bytes())
		return nil
	})
	if err != nil {
		var ee *cmdkit.ExitError
		if errors.As(err, &ee) {
			return err
		}
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("configuring '%s': %s", name, cmdkit.OneLine(err.Error())))
	}
	if j.On {
		return PrintServerChanged(e, j, name, changed)
	}
	if !changed {
		e.P.Info("No changes made.")
		return nil
	}
	switch {
	case len(inc) > 0:
		e.P.OK("Updated '%s': only %s enabled", name, strings.Join(inc, ", "))
	case len(exc) > 0:
		e.P.OK("Updated '%s': all tools except %s enabled", name, strings.Join(exc, ", "))
	default:
		e.P.OK("Updated '%s': all tools enabled", name)
	}
	e.P.Line("%s", add.ChangedLine)
	return nil
}

// ConfigureInteractive is 'hermes mcp configure NAME' on a terminal:
// connect, show the tools as a checklist, write the ones picked.
func ConfigureInteractive(e *cmdkit.Env, ctx context.Context, name string) error {
	if err := cmdkit.RequireServer(e, name); err != nil {
		return err
	}
	_, srv, err := cmdkit.LoadServer(e, name)
	if err != nil {
		return err
	}
	cmdkit.WithProbeTimeout(srv)
	e.P.Line("Connecting to '%s'...", name)
	tools, err := cmdkit.ProbeTools(e, ctx, srv)
	if err != nil {
		return cmdkit.Failf("cannot list the tools of '%s': %s; set them without connecting: hermes mcp configure %s --include a,b | --exclude c,d | --all", name, cmdkit.ShownErr(err), name)
	}
	if _, err := cmdkit.ReviewDrift(e, srv, tools, true); err != nil {
		return err
	}
	if len(tools) == 0 {
		return cmdkit.Failf("'%s' reports no tools, so there is nothing to choose", name)
	}
	cur := toolview.Filter{Include: srv.Tools.Include, Exclude: srv.Tools.Exclude}
	items := make([]ui.ChecklistItem, len(tools))
	var before, all []string
	for i, t := range tools {
		on := cur.Allows(t.Name)
		items[i] = ui.ChecklistItem{Key: t.Name, Description: cmdkit.OneLine(t.Description), Checked: on}
		all = append(all, t.Name)
		if on {
			before = append(before, t.Name)
		}
	}
	e.P.Line("Currently %d/%d tools enabled for '%s'.", len(before), len(all), name)
	sel, err := e.P.Checklist(fmt.Sprintf("Tools to enable for '%s'", name), items)
	if errors.Is(err, ui.ErrCancelled) {
		// Cancelling is exit code 1, as everywhere.
		return cmdkit.Failf("Cancelled. No changes made.")
	}
	if err != nil {
		return cmdkit.Failf("tool checklist: %s", cmdkit.OneLine(err.Error()))
	}
	if slices.Equal(sel, before) {
		e.P.Info("No changes made.")
		return nil
	}
	if len(sel) == 0 {
		return cmdkit.Failf("No tools selected; nothing changed. To turn '%s' off, run: hermes mcp disable %s", name, name)
	}
	for _, p := range append(slices.Clone(cur.Include), cur.Exclude...) {
		if toolview.IsGlob(p) {
			e.P.Warn("The patterns in tools.include/exclude are replaced by the tools you picked")
			break
		}
	}
	var inc []string
	if len(sel) < len(all) {
		inc = sel
	}
	err = config.Edit(e.Home, func(d *config.Document) error {
		if !d.Has(name) {
			return cmdkit.NotFound(name, d.Names())
		}
		return d.SetToolsFilter(name, inc, nil)
	})
	if err != nil {
		var ee *cmdkit.ExitError
		if errors.As(err, &ee) {
			return err
		}
		return cmdkit.Failf("configuring '%s': %s", name, cmdkit.OneLine(err.Error()))
	}
	e.P.OK("Updated config: %d/%d tools enabled", len(sel), len(all))
	e.P.Line("%s", add.ChangedLine)
	return nil
}

// AcceptChanges is 'hermes mcp configure NAME --accept-changes': connect,
// show what changed since the tools were approved, accept it.
func AcceptChanges(e *cmdkit.Env, ctx context.Context, name string) error {
	if err := cmdkit.RequireServer(e, name); err != nil {
		return err
	}
	_, srv, err := cmdkit.LoadServer(e, name)
	if err != nil {
		return err
	}
	cmdkit.WithProbeTimeout(srv)
	e.P.Line("Connecting to '%s'...", name)
	tools, err := cmdkit.ProbeTools(e, ctx, srv)
	if err != nil {
		return cmdkit.Failf("cannot list the tools of '%s', so no change can be accepted: %s; run 'hermes mcp test %s'", name, cmdkit.ShownErr(err), name)
	}
	_, err = cmdkit.ReviewDrift(e, srv, tools, false)
	return err
}
