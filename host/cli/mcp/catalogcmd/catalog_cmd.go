package catalogcmd

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
)

// CatalogView is the catalog as hermes mcp catalog and the picker show it:
// one row per entry and per configured server that is not in the catalog
// (catalog.Rows), and the warnings about entries that cannot be used.
type CatalogView struct {
	// Source is where the catalog was read: catalog.BuiltIn or a folder.
	Source string
	Rows   []catalog.Row
	// Diagnostics are the entries that need a newer hermes or whose
	// manifest is invalid; Warnings are their lines (Diagnostic.Warning).
	Diagnostics []catalog.Diagnostic
	Warnings    []string
}

// LoadCatalogView reads the catalog (built in, or $HERMES_OPTIONAL_MCPS)
// and config.yaml of home, and merges them. Its errors are one line that
// says what to do next.
func LoadCatalogView(e *cmdkit.Env, home string) (*CatalogView, error) {
	cat, err := catalog.LoadFrom(cmdkit.Getenv(e, catalog.EnvDir))
	if err != nil {
		return nil, cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	cfg, err := e.F.Config()
	if err != nil {
		return nil, cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	v := &CatalogView{Source: cat.Source, Rows: catalog.RowsWith(cat, cfg, func(name string) bool { return HasInstallDir(e, name) }), Diagnostics: cat.Diagnostics}
	for _, d := range cat.Diagnostics {
		v.Warnings = append(v.Warnings, d.Warning())
	}
	return v, nil
}

// WriteCatalogTable writes rows as the catalog table (Name, Status,
// Description; with numbered, a leading # column counting from 1) to w.
// Every cell is manifest or config text and is escaped for the terminal.
func WriteCatalogTable(e *cmdkit.Env, w io.Writer, rows []catalog.Row, numbered bool) {
	headers := []string{"Name", "Status", "Description"}
	if numbered {
		headers = append([]string{"#"}, headers...)
	}
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = []string{r.Name, r.Status, r.Description}
		if numbered {
			cells[i] = append([]string{strconv.Itoa(i + 1)}, cells[i]...)
		}
	}
	// The description is cut to the terminal's width, never the name or
	// the status.
	ui.NewEnv(w, io.Discard, nil, cmdkit.Getter(e)).TableFit(headers, cells, len(headers)-1)
}

// WriteCatalogWarnings writes each warning to w as one escaped line,
// "⚠ " first.
func WriteCatalogWarnings(w io.Writer, warnings []string) {
	for _, s := range warnings {
		fmt.Fprintf(w, "⚠ %s\n", termsafe.Escape(s))
	}
}

// CatalogJSON is the output of hermes mcp catalog --json.
type CatalogJSON struct {
	// Source is "built-in" or the folder $HERMES_OPTIONAL_MCPS named.
	Source  string             `json:"source"`
	Entries []CatalogJSONEntry `json:"entries"`
	// Warnings are the lines hermes mcp catalog warns with;
	// Diagnostics the same entries, field by field.
	Warnings    []string             `json:"warnings"`
	Diagnostics []catalog.Diagnostic `json:"diagnostics"`
}

// CatalogJSONEntry is one row of hermes mcp catalog --json.
type CatalogJSONEntry struct {
	catalog.Row
	// Transport is stdio or http; SourceURL the manifest's source;
	// NeedsNewer marks an entry whose manifest is for a newer hermes.
	// All three are for catalog entries only.
	Transport  string `json:"transport,omitempty"`
	SourceURL  string `json:"source_url,omitempty"`
	NeedsNewer bool   `json:"needs_newer_hermes,omitempty"`
}

// CatalogStatusToken is a catalog status as --json gives it: one word a
// script can compare (the table shows the words a person reads).
func CatalogStatusToken(status string) string {
	switch status {
	case catalog.StatusInstalledDisabled:
		return "installed_disabled"
	case catalog.StatusCustomEnabled:
		return "custom_enabled"
	case catalog.StatusCustomDisabled:
		return "custom_disabled"
	case catalog.StatusNeedsNewer:
		return "needs_newer_hermes"
	case catalog.StatusNameTaken:
		return "name_taken"
	}
	return status // available, enabled
}

// CatalogOptions are what 'hermes mcp catalog' needs: the run and its
// --json output.
type CatalogOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
}

// NewCmdCatalog is 'hermes mcp catalog': the curated catalog as a table.
// runF, when not nil, is called with the parsed options instead of
// catalogRun (the tests' seam).
func NewCmdCatalog(e *cmdkit.Env, runF func(context.Context, *CatalogOptions) error) *cli.Command {
	opts := &CatalogOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:  "catalog",
		Usage: "list the curated catalog of MCP servers and whether each is installed",
		Description: "Lists the entries of the catalog built into hermes (or of the folder $HERMES_OPTIONAL_MCPS names)\n" +
			"with their status (available, installed (disabled), enabled), then the servers of config.yaml that are\n" +
			"not in the catalog (custom). Entries that need a newer Hermes or whose manifest is invalid are warned\n" +
			"about on stderr.",
		Flags: []cli.Flag{j.Flag(`print one JSON object: {"entries": [...], "warnings": [...]} (see docs/JSON.md)`)},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return cmdkit.Usagef("usage: hermes mcp catalog [--json]")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return catalogRun(ctx, opts)
		}),
	}
}

// catalogRun prints the catalog merged with config.yaml: a table, or one
// JSON object.
func catalogRun(_ context.Context, opts *CatalogOptions) error {
	e, j := opts.Env, opts.JSON
	v, err := LoadCatalogView(e, e.Home)
	if err != nil {
		return err
	}
	if j.On {
		out := CatalogJSON{Source: v.Source, Entries: []CatalogJSONEntry{}, Warnings: []string{}, Diagnostics: []catalog.Diagnostic{}}
		for _, r := range v.Rows {
			je := CatalogJSONEntry{Row: r, NeedsNewer: r.Status == catalog.StatusNeedsNewer}
			je.Status = CatalogStatusToken(r.Status)
			if r.Manifest != nil {
				je.Transport, je.SourceURL = r.Manifest.Transport.Type, r.Manifest.Source
			}
			out.Entries = append(out.Entries, je)
		}
		out.Warnings = append(out.Warnings, v.Warnings...)
		out.Diagnostics = append(out.Diagnostics, v.Diagnostics...)
		j.Write(out)
		return nil
	}
	if len(v.Rows) == 0 {
		e.P.Line("The catalog is empty and no server is configured.")
	} else {
		WriteCatalogTable(e, e.Out, v.Rows, false)
		e.P.Line("")
		e.P.Line("Install: hermes mcp install <name>    Picker: hermes mcp")
	}
	WriteCatalogWarnings(e.Err, v.Warnings)
	return nil
}
