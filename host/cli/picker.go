package cli

import (
	"context"
	"errors"
	"io"
	"strconv"

	"github.com/hermes-agent/hermes/host/cli/mcp/servers"

	"github.com/hermes-agent/hermes/host/cli/mcp/catalogcmd"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/install"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
)

// mcpAction is bare 'hermes mcp': on a terminal the interactive picker,
// otherwise the catalog as a table.
func mcpAction(e *cmdkit.Env, ctx context.Context, c *cli.Command) error {
	if c.Args().Len() > 0 {
		return cmdkit.UnknownCommand(c, c.Args().First())
	}
	if !e.P.Interactive() {
		// Exactly what hermes mcp catalog prints.
		cat := catalogcmd.NewCmdCatalog(e, nil)
		return cat.Run(ctx, []string{cat.Name})
	}
	return picker(e, ctx, c)
}

// picker lets a person at a terminal pick a server and an action, until
// they quit: install, enable, disable, configure tools, uninstall and
// reinstall a catalog entry; configure, toggle and remove a custom one.
func picker(e *cmdkit.Env, ctx context.Context, c *cli.Command) error {
	for {
		v, err := catalogcmd.LoadCatalogView(e, e.Home)
		if err != nil {
			return err
		}
		rows := v.Rows
		e.P.Header("MCP servers: the catalog and your config")
		catalogcmd.WriteCatalogTable(e, e.Out, rows, true)
		for _, w := range v.Warnings {
			e.P.Warn("%s", w)
		}
		if len(rows) == 0 {
			e.P.Info("Nothing to pick: the catalog is empty and no server is configured.")
			return nil
		}
		ans, err := e.P.Ask("Server number or name (Enter to quit):", "")
		if err != nil || ans == "" {
			return pickerQuit(err)
		}
		r, ok := pickFind(rows, ans)
		if !ok {
			e.P.Fail("No server '%s' in the list; type its number or name", ans)
			continue
		}
		if err := pickAction(e, ctx, r); err != nil {
			if errors.Is(err, errPickerQuit) {
				return nil
			}
			var ee *cmdkit.ExitError
			if !errors.As(err, &ee) {
				return err
			}
			e.P.Fail("%s", ee.Msg)
		}
		e.P.Line("")
	}
}

// errPickerQuit ends the picker without an error.
var errPickerQuit = errors.New("quit")

// pickerQuit turns how a question ended into the picker's end: EOF and
// Enter quit quietly, ctrl-c too.
func pickerQuit(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, ui.ErrCancelled) {
		return nil
	}
	return cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
}

func pickFind(rows []catalog.Row, ans string) (catalog.Row, bool) {
	if n, err := strconv.Atoi(ans); err == nil && n >= 1 && n <= len(rows) {
		return rows[n-1], true
	}
	for _, r := range rows {
		if r.Name == ans {
			return r, true
		}
	}
	return catalog.Row{}, false
}

// pickAction offers the actions of one row and runs the one chosen.
func pickAction(e *cmdkit.Env, ctx context.Context, r catalog.Row) error {
	type action struct {
		label string
		run   func() error
	}
	install := func() error {
		return catalogcmd.InstallEntry(e, ctx, r.Manifest, install.Options{}, install.DefaultStepTimeout, install.DefaultCloneTimeout)
	}
	sub := func(cmd *cli.Command, args ...string) func() error {
		return func() error { return cmd.Run(ctx, append([]string{cmd.Name}, args...)) }
	}
	enable, disable := sub(servers.NewCmdEnable(e, true, nil), r.Name), sub(servers.NewCmdEnable(e, false, nil), r.Name)
	configure := sub(servers.NewCmdConfigure(e, nil), r.Name)
	uninstall := func() error { return catalogcmd.Uninstall(e, &cmdkit.JSONOutput{E: e}, r.Name, false) }
	var acts []action
	switch {
	case r.Status == catalog.StatusNeedsNewer:
		return cmdkit.Failf("'%s' requires a newer Hermes; update hermes to install it", r.Name)
	case r.Status == catalog.StatusNameTaken:
		return cmdkit.Failf("'%s' is also the name of your own server (listed below as custom); remove it first to install the catalog entry", r.Name)
	case r.Custom && r.Enabled:
		acts = []action{{"configure tools", configure}, {"disable", disable}, {"remove", sub(servers.NewCmdRemove(e, nil), r.Name)}}
	case r.Custom:
		acts = []action{{"configure tools", configure}, {"enable", enable}, {"remove", sub(servers.NewCmdRemove(e, nil), r.Name)}}
	case r.Manifest == nil:
		return cmdkit.Failf("'%s' cannot be installed from this catalog", r.Name)
	case !r.Installed:
		acts = []action{{"install", install}}
	case r.Enabled:
		acts = []action{{"configure tools", configure}, {"disable", disable}, {"uninstall", uninstall}, {"reinstall", install}}
	default:
		acts = []action{{"enable", enable}, {"configure tools", configure}, {"uninstall", uninstall}, {"reinstall", install}}
	}
	e.P.Line("'%s' (%s): %s", r.Name, r.Status, r.Description)
	for i, a := range acts {
		e.P.Line("  %d  %s", i+1, a.label)
	}
	ans, err := e.P.Ask("Action number (Enter to go back):", "")
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, ui.ErrCancelled) {
			return errPickerQuit
		}
		return err
	}
	if ans == "" {
		return nil
	}
	for i, a := range acts {
		if ans == strconv.Itoa(i+1) || ans == a.label {
			return a.run()
		}
	}
	return cmdkit.Failf("No action '%s' for '%s'; type its number", ans, r.Name)
}
