package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
)

// Statuses of a picker row, as the original's picker shows them.
const (
	pickAvailable      = "available"
	pickDisabled       = "installed (disabled)"
	pickEnabled        = "enabled"
	pickCustomEnabled  = "custom — enabled"
	pickCustomDisabled = "custom — disabled"
)

// pickRow is one line of the picker: a catalog entry, or a server of
// config.yaml that is not in the catalog.
type pickRow struct {
	name, status, description string
	manifest                  *catalog.Manifest // nil for custom servers
}

// pickRows lists the catalog's entries, then the configured servers that
// are not in it, in config order.
//
// It stands in for the catalog package's rows until those are committed.
func (e *env) pickRows() ([]pickRow, []string, error) {
	var warnings []string
	cat, err := readCatalog()
	if err != nil {
		warnings = append(warnings, oneLine(err.Error()))
		cat = &entryCatalog{}
	}
	for name, why := range cat.invalid {
		warnings = append(warnings, fmt.Sprintf("'%s' cannot be installed, its manifest is invalid: %s", name, why))
	}
	cfg, err := config.Load(e.home)
	if err != nil {
		return nil, nil, failf("%s", oneLine(err.Error()))
	}
	var rows []pickRow
	known := map[string]bool{}
	for _, m := range cat.entries {
		r := pickRow{name: m.Name, status: pickAvailable, description: m.Description, manifest: m}
		if s := cfg.Server(m.Name); s != nil {
			r.status = pickDisabled
			if s.Enabled {
				r.status = pickEnabled
			}
		}
		known[m.Name] = true
		rows = append(rows, r)
	}
	for _, s := range cfg.Servers {
		if known[s.Name] {
			continue
		}
		st := pickCustomDisabled
		if s.Enabled {
			st = pickCustomEnabled
		}
		target := s.URL
		if target == "" {
			target = strings.TrimSpace(shownCommand(s) + " " + strings.Join(s.Args, " "))
		}
		rows = append(rows, pickRow{name: s.Name, status: st, description: target})
	}
	return rows, warnings, nil
}

// printCatalog prints the picker's rows as a table, for 'hermes mcp'
// without a terminal.
func (e *env) printCatalog() error {
	rows, warnings, err := e.pickRows()
	if err != nil {
		return err
	}
	e.p.Table([]string{"Name", "Status", "Description"}, pickTable(rows, false))
	e.p.Line("")
	e.p.Line("Install: hermes mcp install <name>    Picker: hermes mcp (on a terminal)")
	for _, w := range warnings {
		e.p.Warn("%s", w)
	}
	return nil
}

func pickTable(rows []pickRow, numbered bool) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = []string{r.name, r.status, r.description}
		if numbered {
			out[i] = append([]string{strconv.Itoa(i + 1)}, out[i]...)
		}
	}
	return out
}

// mcpAction is bare 'hermes mcp': on a terminal the interactive picker,
// otherwise the catalog as a table.
func (e *env) mcpAction(ctx context.Context, c *cli.Command) error {
	if c.Args().Len() > 0 {
		return usagef("unknown command 'hermes mcp %s'; run 'hermes mcp --help' for the commands", c.Args().First())
	}
	if _, err := e.recoverInstalls(ctx, c); err != nil {
		return err
	}
	if !e.p.Interactive() {
		return e.printCatalog()
	}
	return e.picker(ctx, c)
}

// picker lets a person at a terminal pick a server and an action, until
// they quit: install, enable, disable, configure tools, uninstall and
// reinstall a catalog entry; configure, toggle and remove a custom one.
func (e *env) picker(ctx context.Context, c *cli.Command) error {
	for {
		rows, warnings, err := e.pickRows()
		if err != nil {
			return err
		}
		e.p.Header("MCP servers: the catalog and your config")
		e.p.Table([]string{"#", "Name", "Status", "Description"}, pickTable(rows, true))
		for _, w := range warnings {
			e.p.Warn("%s", w)
		}
		if len(rows) == 0 {
			e.p.Info("Nothing to pick: the catalog is empty and no server is configured.")
			return nil
		}
		ans, err := e.p.Ask("Server number or name (Enter to quit):", "")
		if err != nil || ans == "" {
			return pickerQuit(err)
		}
		r, ok := pickFind(rows, ans)
		if !ok {
			e.p.Fail("No server '%s' in the list; type its number or name", ans)
			continue
		}
		if err := e.pickAction(ctx, r); err != nil {
			if errors.Is(err, errPickerQuit) {
				return nil
			}
			var ee *exitError
			if !errors.As(err, &ee) {
				return err
			}
			e.p.Fail("%s", ee.msg)
		}
		e.p.Line("")
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
	return failf("%s", oneLine(err.Error()))
}

func pickFind(rows []pickRow, ans string) (pickRow, bool) {
	if n, err := strconv.Atoi(ans); err == nil && n >= 1 && n <= len(rows) {
		return rows[n-1], true
	}
	for _, r := range rows {
		if r.name == ans {
			return r, true
		}
	}
	return pickRow{}, false
}

// pickAction offers the actions of one row and runs the one chosen.
func (e *env) pickAction(ctx context.Context, r pickRow) error {
	type action struct {
		label string
		run   func() error
	}
	install := func() error {
		return e.install(ctx, r.manifest, catalog.Options{}, catalog.DefaultStepTimeout, catalog.DefaultCloneTimeout)
	}
	sub := func(cmd *cli.Command, args ...string) func() error {
		return func() error { return cmd.Run(ctx, append([]string{cmd.Name}, args...)) }
	}
	enable, disable := sub(enableCommand(e, true), r.name), sub(enableCommand(e, false), r.name)
	configure := sub(configureCommand(e), r.name)
	var acts []action
	switch r.status {
	case pickAvailable:
		acts = []action{{"install", install}}
	case pickDisabled:
		acts = []action{{"enable", enable}, {"configure tools", configure}, {"uninstall", func() error { return e.uninstall(r.name, false) }}, {"reinstall", install}}
	case pickEnabled:
		acts = []action{{"configure tools", configure}, {"disable", disable}, {"uninstall", func() error { return e.uninstall(r.name, false) }}, {"reinstall", install}}
	case pickCustomEnabled:
		acts = []action{{"configure tools", configure}, {"disable", disable}, {"remove", sub(removeCommand(e), r.name)}}
	case pickCustomDisabled:
		acts = []action{{"configure tools", configure}, {"enable", enable}, {"remove", sub(removeCommand(e), r.name)}}
	}
	e.p.Line("'%s' (%s): %s", r.name, r.status, r.description)
	for i, a := range acts {
		e.p.Line("  %d  %s", i+1, a.label)
	}
	ans, err := e.p.Ask("Action number (Enter to go back):", "")
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
	return failf("No action '%s' for '%s'; type its number", ans, r.name)
}
