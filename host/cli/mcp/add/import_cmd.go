package add

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/goccy/go-yaml"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/importer"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
)

// ImportOptions are what 'hermes mcp import' needs: the run, the servers
// named and the flags.
type ImportOptions struct {
	Env                                    *cmdkit.Env
	From                                   string
	All, DryRun, Yes, NoProbe, Force, JSON bool
	Tools                                  string
	Names                                  []string
}

// ImportResult is one server in 'hermes mcp import --json', in the style
// of 'hermes mcp list --json'.
type ImportResult struct {
	// Name is the Hermes name; SourceName the client's, when it differs.
	Name       string `json:"name"`
	SourceName string `json:"source_name,omitempty"`
	Client     string `json:"client"`
	File       string `json:"file"`
	Scope      string `json:"scope"`
	Transport  string `json:"transport,omitempty"`
	// Target is the url, or the command line, as config.yaml gets it.
	Target  string `json:"target,omitempty"`
	Enabled bool   `json:"enabled"`
	// Status is imported, imported_disabled (a failed probe, saved
	// disabled), saved_unprobed (saved without connecting), would_import
	// (--dry-run), skipped (a server of that name exists, or another
	// client's server has the name) or failed (Error says why).
	Status string `json:"status"`
	// ToolsEnabled is "N/M" tools enabled, when the server was probed.
	ToolsEnabled string `json:"tools_enabled,omitempty"`
	// Secrets are the .env variables written (never their values).
	Secrets []string `json:"secrets,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Error says why a server was skipped or failed, with a code as every
	// --json failure has (docs/JSON.md).
	Error *cmdkit.JSONError `json:"error,omitempty"`
	// problem is Error's message, for the lines on the terminal.
	problem string
}

// fail records why r was skipped or failed, with its code.
func (r *ImportResult) fail(status, code, msg string) {
	r.Status, r.problem = status, msg
	r.Error = &cmdkit.JSONError{Code: code, Message: msg}
}

const ImportUsage = `hermes mcp import [--from claude|codex|gemini|cursor|vscode|FILE] [--all | NAME...] [--dry-run] [--force]
common: [--tools a,b] [--yes] [--no-probe] [--json]`

const ImportDescription = `Reads the MCP servers other clients are configured with and adds them to
config.yaml, each the way 'hermes mcp add' does: screened, probed (unless
--no-probe), its tools picked on a terminal. Without --from every client is
read: Claude Code (~/.claude.json, .mcp.json), Codex (~/.codex/config.toml,
.codex/config.toml), Gemini CLI (~/.gemini/settings.json,
.gemini/settings.json), Cursor (~/.cursor/mcp.json, .cursor/mcp.json) and
VS Code (.vscode/mcp.json, the user profile's mcp.json); project files are
those of the current folder. --from FILE reads any of these formats (to
read a file named like a client, write ./claude).

Values of env variables and headers that look secret (names with TOKEN,
KEY, SECRET, PASSWORD, AUTH..., Authorization headers) go to
$HERMES_HOME/.env as MCP_<NAME>_<KEY> and config.yaml refers to them as
${MCP_<NAME>_<KEY>}; they are never printed.

A server whose name config.yaml already has is skipped with a note;
--force replaces it. On a terminal the servers found are offered in a
checklist; elsewhere name them or pass --all, plus --yes (probe, enable
every tool) or --no-probe (save without connecting). --dry-run shows what
would be added and writes nothing.`

// NewCmdImport builds 'hermes mcp import'. Its action fills an
// ImportOptions from the command line and checks how the flags combine,
// then hands it to runF when runF is not nil (a test's look at what was
// parsed), else to importRun.
func NewCmdImport(e *cmdkit.Env, runF func(context.Context, *ImportOptions) error) *cli.Command {
	o := &ImportOptions{Env: e}
	return &cli.Command{
		Name:        "import",
		Usage:       "add the servers of other MCP clients (Claude Code, Codex, Gemini CLI, Cursor, VS Code)",
		UsageText:   ImportUsage,
		Description: ImportDescription,
		ArgsUsage:   "[NAME...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "read only `CLIENT` (claude, codex, gemini, cursor, vscode) or a config FILE", Destination: &o.From},
			&cli.BoolFlag{Name: "all", Usage: "import every server found", Destination: &o.All},
			&cli.BoolFlag{Name: "dry-run", Usage: "show what would be added, write nothing", Destination: &o.DryRun},
			&cli.BoolFlag{Name: "force", Usage: "replace servers config.yaml already has", Destination: &o.Force},
			&cli.StringFlag{Name: "tools", Usage: "with one NAME: enable only these tools (`a,b`)", Destination: &o.Tools},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask: import, enable every tool", Destination: &o.Yes},
			&cli.BoolFlag{Name: "no-probe", Usage: "save without connecting to the servers", Destination: &o.NoProbe},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array, one object per server (progress goes to stderr)", Destination: &o.JSON},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			o.Names = c.Args().Slice()
			switch {
			case o.All && len(o.Names) > 0:
				return cmdkit.Usagef("give either --all or server names, not both; run 'hermes mcp import --help'")
			case o.Tools != "" && len(o.Names) != 1:
				return cmdkit.Usagef("--tools applies to one server: name exactly one, e.g. hermes mcp import --from cursor github --tools a,b")
			case o.Tools != "" && len(cmdkit.SplitList(o.Tools)) == 0:
				return cmdkit.Usagef("--tools needs at least one tool name, e.g. --tools read_file,list_dir")
			}
			if runF != nil {
				return runF(ctx, o)
			}
			return importRun(ctx, o)
		},
	}
}

// ImportCandidate is a server found, with what became of it.
type ImportCandidate struct {
	srv *importer.Server
	res *ImportResult
}

// importRun reads the other clients' configs, lets the person choose,
// and adds each server chosen; the summary (or the JSON) says what became
// of each.
func importRun(ctx context.Context, o *ImportOptions) error {
	e := o.Env
	if o.JSON {
		// Progress and questions on stderr; stdout is the JSON.
		e.P = ui.NewEnv(e.Err, e.Err, e.In, cmdkit.Getter(e))
	}
	home, err := e.F.UserHome()
	if err != nil {
		return cmdkit.Failf("cannot find your home folder (%s); set HOME, or name a file with --from FILE", cmdkit.OneLine(err.Error()))
	}
	cwd, err := e.F.WorkDir()
	if err != nil {
		return cmdkit.Failf("cannot read the current folder (%s); cd into a folder you can read", cmdkit.OneLine(err.Error()))
	}
	sources, clients, err := ImportSources(e, o.From, home, cwd)
	if err != nil {
		return err
	}

	var lists [][]*importer.Server
	var looked []string
	for _, src := range sources {
		looked = append(looked, src.Path)
		list, err := importer.Read(src)
		switch {
		case errors.Is(err, fs.ErrNotExist) && src.Scope != importer.ScopeFile:
			continue
		case err != nil && src.Scope == importer.ScopeFile:
			return cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
		case err != nil:
			var tl *config.TooLargeError
			if errors.As(err, &tl) {
				// Claude Code's ~/.claude.json also keeps histories.
				e.P.Warn("Skipped %s: it is over the %d MiB hermes reads from a config file; copy its server list into a smaller file and import that with --from FILE", src.Path, config.MaxConfigBytes>>20)
				continue
			}
			e.P.Warn("Skipped %s", cmdkit.OneLine(err.Error()))
			continue
		}
		lists = append(lists, list)
	}
	found, shadowed := importer.Merge(clients, lists...)
	if len(found) == 0 {
		return cmdkit.Failf("No MCP servers found in %s; name a config file with --from FILE", strings.Join(looked, ", "))
	}

	// Which of them.
	chosen, err := ChooseImports(e, o, found)
	if err != nil {
		return err
	}
	if !o.DryRun && !o.Yes && !o.NoProbe && !e.P.Interactive() {
		return cmdkit.Usagef("no terminal to confirm the import: pass --yes (probe each server, enable every tool) or --no-probe (save without connecting), or --dry-run to see what would be added")
	}
	path, existing, err := cmdkit.ServerNames(e)
	if err != nil {
		return err
	}
	// A variable .env already holds with another value is another
	// server's: never overwritten, unless the server it was written for
	// is the one --force replaces.
	dotenv, err := config.LoadDotEnv(e.Home)
	if err != nil {
		return cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
	}
	reserved := map[string]bool{}
	for _, s := range chosen {
		replaced := o.Force && slices.Contains(existing, s.Name)
		for _, sec := range s.Secrets {
			if v, ok := dotenv[sec.Var]; ok && v != sec.Value && !replaced {
				reserved[sec.Var] = true
			}
		}
	}
	importer.UniqueVars(chosen, reserved)
	var cands []ImportCandidate
	for _, s := range chosen {
		res := &ImportResult{
			Name: s.Name, Client: string(s.Source.Client), File: s.Source.Path, Scope: s.Scope,
			Transport: s.Transport(), Target: s.Target(), Enabled: s.Enabled(), Notes: s.Notes,
		}
		if s.SourceName != s.Name {
			res.SourceName = s.SourceName
		}
		for _, sec := range s.Secrets {
			res.Secrets = append(res.Secrets, sec.Var)
		}
		switch {
		case s.Err != nil:
			res.fail("failed", cmdkit.CodeConfig, cmdkit.OneLine(s.Err.Error())+"; fix it in "+s.Source.Path+" or add it with 'hermes mcp add'")
		case slices.Contains(existing, s.Name) && !o.Force:
			res.fail("skipped", cmdkit.CodeExists, fmt.Sprintf("a server named '%s' is already in %s; pass --force to replace it", s.Name, path))
		}
		cands = append(cands, ImportCandidate{srv: s, res: res})
	}
	for _, s := range shadowed {
		i := slices.IndexFunc(chosen, func(c *importer.Server) bool { return c.Name == s.Name })
		if i < 0 {
			continue
		}
		why := fmt.Sprintf("%s's server of this name in %s wins, as it does in %s", chosen[i].Source.Client, chosen[i].Source.Path, s.Source.Client)
		if chosen[i].Source.Client != s.Source.Client {
			why = fmt.Sprintf("the server of this name in %s is imported instead; to import this one, run the import again with --from %s --force", chosen[i].Source.Path, s.Source.Client)
		}
		res := &ImportResult{
			Name: s.Name, Client: string(s.Source.Client), File: s.Source.Path, Scope: s.Scope,
			Transport: s.Transport(), Target: s.Target(), Enabled: s.Enabled(),
		}
		res.fail("skipped", cmdkit.CodeDuplicate, why)
		cands = append(cands, ImportCandidate{srv: s, res: res})
	}

	ShowImportPlan(e, cands, o.DryRun)
	todo := 0
	for _, c := range cands {
		if c.res.Status == "" {
			todo++
		}
	}
	if o.DryRun {
		for _, c := range cands {
			if c.res.Status != "" {
				continue
			}
			c.res.Status = "would_import"
			if err := ScreenAdd(e, c.srv.Name, &AddPlan{Entry: c.srv.Entry, Secrets: ImportSecrets(c.srv)}); err != nil {
				c.res.fail("failed", cmdkit.ErrorCode(err), ErrMessage(err))
				e.P.Fail("%s", c.res.problem)
			}
		}
		e.P.Line("Dry run: nothing was written.")
		return ImportDone(e, o, cands)
	}
	if todo == 0 {
		// Servers config.yaml already has are no failure: a second
		// import of the same files changes nothing and succeeds.
		e.P.Line("Nothing to import: every server chosen was skipped (see above).")
		return ImportDone(e, o, cands)
	}
	if e.P.Interactive() && !o.Yes && !e.P.Confirm(fmt.Sprintf("Import %d server(s)?", todo), true) {
		return cmdkit.Failf("Cancelled; nothing was imported")
	}

	for _, c := range cands {
		if c.res.Status != "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		ImportOne(e, ctx, o, c)
	}
	return ImportDone(e, o, cands)
}

// ImportSources resolves --from into the files to read and the clients
// in the order their servers win a name clash.
func ImportSources(e *cmdkit.Env, from, home, cwd string) ([]importer.Source, []importer.Client, error) {
	if from == "" {
		var out []importer.Source
		for _, c := range importer.Clients {
			out = append(out, importer.SourcesFrom(c, home, cwd, cmdkit.Getter(e))...)
		}
		return out, importer.Clients, nil
	}
	if c, ok := importer.ParseClient(from); ok {
		return importer.SourcesFrom(c, home, cwd, cmdkit.Getter(e)), []importer.Client{c}, nil
	}
	// A relative file is in the run's working folder.
	path := from
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, cmdkit.Usagef("--from %s: %s; name claude, codex, gemini, cursor, vscode or a config file", from, cmdkit.OneLine(err.Error()))
	}
	data, err := importer.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, cmdkit.Usagef("--from %s: no such file; name claude, codex, gemini, cursor, vscode or a config file", from)
	}
	if err != nil {
		return nil, nil, cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
	}
	c, err := importer.Detect(path, data)
	if err != nil {
		return nil, nil, cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
	}
	src := importer.Source{Client: c, Path: path, Scope: importer.ScopeFile, Dir: cwd, Home: home}
	return []importer.Source{src}, []importer.Client{c}, nil
}

// ChooseImports picks the servers to import: those named, all, or (on a
// terminal) those checked in a checklist.
func ChooseImports(e *cmdkit.Env, o *ImportOptions, found []*importer.Server) ([]*importer.Server, error) {
	var all []string
	for _, s := range found {
		all = append(all, s.Name)
	}
	switch {
	case len(o.Names) > 0:
		var out []*importer.Server
		for _, n := range o.Names {
			i := slices.IndexFunc(found, func(s *importer.Server) bool { return s.Name == n || s.SourceName == n })
			if i < 0 {
				return nil, cmdkit.Failf("No server '%s' in the clients' configs; found: %s", n, strings.Join(all, ", "))
			}
			if !slices.Contains(out, found[i]) {
				out = append(out, found[i])
			}
		}
		return out, nil
	case o.All, o.DryRun:
		return found, nil
	case !e.P.Interactive():
		return nil, cmdkit.Usagef("name the servers to import, or pass --all; found: %s", strings.Join(all, ", "))
	}
	items := make([]ui.ChecklistItem, len(found))
	for i, s := range found {
		desc := string(s.Source.Client) + ": " + s.Target()
		if s.Err != nil {
			desc = string(s.Source.Client) + ": cannot be imported"
		}
		items[i] = ui.ChecklistItem{Key: s.Name, Description: desc, Checked: s.Err == nil}
	}
	sel, err := e.P.Checklist("Servers to import", items)
	if errors.Is(err, ui.ErrCancelled) {
		return nil, cmdkit.Failf("Cancelled; nothing was imported")
	}
	if err != nil {
		return nil, cmdkit.Failf("server checklist: %s", cmdkit.OneLine(err.Error()))
	}
	if len(sel) == 0 {
		return nil, cmdkit.Failf("No servers selected; nothing was imported")
	}
	var out []*importer.Server
	for _, s := range found {
		if slices.Contains(sel, s.Name) {
			out = append(out, s)
		}
	}
	return out, nil
}

// ShowImportPlan prints what will be added (with the entries, masked, on
// --dry-run) and what is skipped, one line each.
func ShowImportPlan(e *cmdkit.Env, cands []ImportCandidate, entries bool) {
	e.P.Header("Servers to import:")
	for _, c := range cands {
		s, r := c.srv, c.res
		from := r.File
		if s.Scope == importer.ScopeLocal {
			from += " (this project)"
		}
		switch r.Status {
		case "skipped":
			e.P.Warn("Skipping '%s' from %s: %s", r.Name, from, r.problem)
			continue
		case "failed":
			e.P.Fail("Cannot import '%s' from %s: %s", r.Name, from, r.problem)
			continue
		}
		name := r.Name
		if r.SourceName != "" {
			name = fmt.Sprintf("%s (named '%s' there)", r.Name, r.SourceName)
		}
		state := ""
		if !r.Enabled {
			state = ", disabled"
		}
		e.P.Line("+ %s from %s", name, from)
		e.P.Line("    %s: %s%s", r.Transport, r.Target, state)
		for _, sec := range s.Secrets {
			e.P.Line("    %s -> .env as %s", sec.From, sec.Var)
		}
		for _, n := range s.Notes {
			e.P.Info("    note: %s", n)
		}
		if entries {
			for _, l := range cmdkit.YamlLines(cmdkit.MaskValue(nil, EntryValue(s.Entry.Fields))) {
				e.P.Line("      %s", l)
			}
		}
	}
}

// ImportOne runs the add flow for one server and records the result.
func ImportOne(e *cmdkit.Env, ctx context.Context, o *ImportOptions, c ImportCandidate) {
	s, r := c.srv, c.res
	ao := &AddOptions{Env: e, Name: s.Name, Yes: o.Yes, NoProbe: o.NoProbe, Tools: o.Tools}
	plan := &AddPlan{
		Entry: s.Entry, interactive: e.P.Interactive() && !o.Yes,
		overwrite: o.Force, noAuthPrompt: true, imported: true,
		Secrets: ImportSecrets(s), secretFrom: map[string]string{},
	}
	for _, sec := range s.Secrets {
		plan.secretFrom[sec.Var] = sec.From
	}
	e.P.Line("")
	e.P.Line("Importing '%s'...", s.Name)
	authV, _ := s.Entry.Fields.Get("auth")
	oauth := authV == "oauth"
	switch {
	case !s.Enabled() && !ao.NoProbe:
		// Off in the client: kept off, and not started now.
		ao.NoProbe = true
		e.P.Info("'%s' is disabled in %s: saving it disabled, without connecting", s.Name, s.Source.Path)
	case oauth && !ao.NoProbe && plan.interactive:
		ao.Auth = "oauth" // log in now, like add --auth oauth
	case oauth && !ao.NoProbe:
		ao.NoProbe = true
		e.P.Info("'%s' uses OAuth: saving it without connecting; log in with: hermes mcp login %s", s.Name, s.Name)
	}
	err := AddEntry(e, ctx, ao, plan)
	if err != nil {
		r.fail("failed", cmdkit.ErrorCode(err), ErrMessage(err))
		if !plan.saved {
			r.Secrets = nil
		}
		e.P.Fail("'%s' was not imported: %s", s.Name, r.problem)
		return
	}
	r.Enabled = s.Enabled()
	r.ToolsEnabled = plan.tools
	switch plan.result {
	case ResultDisabled:
		r.Status = "imported_disabled"
	case ResultUnprobed:
		r.Status = "saved_unprobed"
	default:
		r.Status = "imported"
	}
}

// ImportDone prints the summary (or the JSON) and sets the exit code: 1
// when a server chosen could not be imported.
func ImportDone(e *cmdkit.Env, o *ImportOptions, cands []ImportCandidate) error {
	failed, done, skipped := 0, 0, 0
	results := make([]ImportResult, 0, len(cands))
	for _, c := range cands {
		results = append(results, *c.res)
		switch c.res.Status {
		case "failed":
			failed++
		case "skipped":
			skipped++
		default:
			done++
		}
	}
	if o.JSON {
		cmdkit.WriteJSON(e, results)
	} else if !o.DryRun {
		e.P.Line("")
		e.P.Line("Imported %d server(s); %d skipped, %d failed.", done, skipped, failed)
		if done > 0 {
			e.P.Line("Use them now: 'hermes mcp call NAME <tool>' or 'hermes chat' (/reload-mcp in a running chat).")
		}
	}
	if failed > 0 && !o.DryRun {
		return cmdkit.Failf("%d server(s) could not be imported; fix what is said above and run the import again for them", failed)
	}
	return nil
}

// ImportSecrets are the server's secrets as .env values to save.
func ImportSecrets(s *importer.Server) []DotEnvValue {
	var out []DotEnvValue
	for _, sec := range s.Secrets {
		out = append(out, DotEnvValue{sec.Var, sec.Value})
	}
	return out
}

// ErrMessage is the text of a command error without a trailing newline.
func ErrMessage(err error) string {
	var ee *cmdkit.ExitError
	if errors.As(err, &ee) {
		return ee.Msg
	}
	return cmdkit.OneLine(err.Error())
}

// EntryValue turns an entry's fields into the values YAML writes
// (durations as seconds), keeping their order.
func EntryValue(m config.Map) yaml.MapSlice {
	out := make(yaml.MapSlice, 0, len(m))
	for _, kv := range m {
		out = append(out, yaml.MapItem{Key: kv.Key, Value: FieldValue(kv.Value)})
	}
	return out
}

func FieldValue(v any) any {
	switch t := v.(type) {
	case config.Map:
		return EntryValue(t)
	case time.Duration:
		return int64(t / time.Second)
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out
	}
	return v
}
