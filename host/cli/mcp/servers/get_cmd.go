package servers

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hermes-agent/hermes/host/cli/mcp/catalogcmd"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/install"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/statedb"
	"github.com/urfave/cli/v3"
)

// GetReport is what 'hermes mcp get --json' prints: the server as
// 'hermes mcp list --json' has it, where it is configured, and the whole
// entry as written in config.yaml with env values, headers and other
// secrets masked (${VAR} references are shown: they are names).
type GetReport struct {
	cmdkit.JSONServer
	// le is the server as the text shows it.
	le     cmdkit.ListEntry
	Origin GetOrigin `json:"origin"`
	// Entry is the entry as written, masked.
	Entry       map[string]any `json:"entry"`
	UnknownKeys []string       `json:"unknown_keys,omitempty"`
	Warnings    []string       `json:"warnings,omitempty"`
	// AlwaysAllowed are the tools whose calls no longer ask for approval
	// (allow-always, kept in state.db).
	AlwaysAllowed []string `json:"always_allowed,omitempty"`
	// Sampling is the server's sampling policy and what it used of its
	// limits (counted in state.db by every process); absent when its
	// sampling: block is unreadable.
	Sampling *GetSampling `json:"sampling,omitempty"`
	// samplingLine is the text of Sampling.
	samplingLine string
}

// GetSampling is a server's sampling policy and usage.
type GetSampling struct {
	Enabled bool `json:"enabled"`
	// Model is sampling.model ("" is model.default); AllowedModels the
	// hints a server may choose.
	Model         string   `json:"model,omitempty"`
	AllowedModels []string `json:"allowed_models,omitempty"`
	// The limits and what was used of them.
	MaxRPM          int   `json:"max_rpm"`
	MaxPerDay       int   `json:"max_per_day"`
	MaxTokensPerDay int64 `json:"max_tokens_per_day"`
	statedb.SamplingUsage
}

// GetOrigin says where a server comes from.
type GetOrigin struct {
	// File and Line locate the entry in config.yaml (Line 0 when the
	// file's layout does not say).
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Catalog is the catalog entry the server was installed from (see
	// catalog.FromCatalog); InstallDir its install folder, when there is
	// one.
	Catalog    string `json:"catalog,omitempty"`
	InstallDir string `json:"install_dir,omitempty"`
}

// GetOptions is what 'hermes mcp get' needs.
type GetOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// Name is the server to show.
	Name string
	// Revoke are the tools whose allow-always to forget first (--revoke;
	// "all": every tool of the server).
	Revoke []string
}

// NewCmdGet is 'hermes mcp get NAME'. runF, when not nil, is called with
// the options in place of the work (the tests' seam).
func NewCmdGet(e *cmdkit.Env, runF func(context.Context, *GetOptions) error) *cli.Command {
	opts := &GetOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:      "get",
		Usage:     "show one server: its whole entry (secrets masked), where it is configured, its status",
		ArgsUsage: "<name>",
		Description: "Nothing is connected: the status is what 'hermes mcp list' shows (use 'hermes mcp test' to connect).\n" +
			"Values of env and headers, and any other value under a secret's name, are masked; ${VAR} references\n" +
			"are shown as written.",
		Flags: []cli.Flag{j.Flag("print one JSON object (see docs/JSON.md)"),
			&cli.StringSliceFlag{Name: "revoke", Usage: "forget allow-always of `TOOL` (repeatable; all: every tool of the server)", Destination: &opts.Revoke}},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp get <name> [--json]")
			}
			opts.Name = c.Args().First()
			if runF != nil {
				return runF(ctx, opts)
			}
			return getRun(ctx, opts)
		}),
	}
}

// getRun shows the server, after forgetting the allow-always of --revoke.
func getRun(ctx context.Context, opts *GetOptions) error {
	e, j, name := opts.Env, opts.JSON, opts.Name
	cfg, err := e.F.Config()
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	if cfg.SafeMode {
		return cmdkit.WithCode(cmdkit.CodeSafeMode, cmdkit.Failf("HERMES_SAFE_MODE is set, so no MCP server is loaded; unset it to see '%s'", name))
	}
	srv := cfg.Server(name)
	if srv == nil {
		return cmdkit.NotFound(name, cfg.Names())
	}
	rep := GetReport{JSONServer: cmdkit.ServerJSON(srv), le: cmdkit.DescribeServer(srv), UnknownKeys: srv.Unknown, Warnings: srv.Warnings}
	rep.le.URL = toolview.Redact(rep.le.URL)
	if revoke := opts.Revoke; len(revoke) > 0 {
		n, err := cmdkit.RevokeAlways(e, ctx, srv.StateKey(), revoke)
		if err != nil {
			return cmdkit.Failf("revoking allow-always of '%s': %s", name, cmdkit.OneLine(err.Error()))
		}
		e.P.OK("Forgot allow-always of %d tool(s) of '%s': their calls ask again.", n, name)
	}
	if rep.AlwaysAllowed, err = cmdkit.AlwaysAllowed(e, ctx, srv.StateKey()); err != nil {
		rep.Warnings = append(rep.Warnings, "allow-always approvals unreadable: "+cmdkit.OneLine(err.Error()))
	}
	if p, err := sampling.ParsePolicy(srv.Sampling); err == nil {
		rep.Sampling = &GetSampling{Enabled: p.Enabled, Model: p.Model, AllowedModels: p.AllowedModels,
			MaxRPM: p.MaxRPM, MaxPerDay: p.MaxPerDay, MaxTokensPerDay: p.MaxTokensPerDay}
		rep.Sampling.SamplingUsage, rep.samplingLine = cmdkit.SamplingUsage(e, ctx, p, srv.StateKey())
		if !p.Enabled {
			rep.samplingLine = "off (sampling.enabled is false)"
		}
	}
	rep.Origin.File = cfg.Path
	var ordered yaml.MapSlice
	if srv.FromProject() {
		rep.Origin.File = srv.Origin.File
	} else {
		var line int
		ordered, line = EntryAsWritten(cfg.Path, name)
		rep.Origin.Line = line
	}
	if cat, err := catalog.LoadFrom(cmdkit.Getenv(e, catalog.EnvDir)); err == nil && !srv.FromProject() {
		if m, err := cat.Lookup(name); err == nil && m.Name == name && catalog.FromCatalog(srv, m, catalogcmd.HasInstallDir(e, name)) {
			rep.Origin.Catalog = name
			if fi, err := os.Stat(install.InstallDir(e.Home, name)); err == nil && fi.IsDir() {
				rep.Origin.InstallDir = install.InstallDir(e.Home, name)
			}
		}
	}
	if j.On {
		m, _ := cmdkit.MaskValue(nil, srv.Written()).(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		rep.Entry = m
		j.Write(rep)
		return nil
	}
	PrintGet(e, rep, srv, ordered)
	return nil
}

// PrintGet prints the report as text.
func PrintGet(e *cmdkit.Env, rep GetReport, srv *config.Server, ordered yaml.MapSlice) {
	e.P.Header(rep.Name + ":")
	e.P.Line("  Status:    %s", ListStatus(rep.le))
	where := rep.Origin.File
	if rep.Origin.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, rep.Origin.Line)
	}
	switch {
	case srv.FromProject():
		where = fmt.Sprintf("project file %s (project %s)", srv.OriginText(), srv.Origin.Project)
		if srv.Origin.Overrides {
			where += ", in place of your entry of this name in config.yaml"
		}
	case rep.Origin.InstallDir != "":
		where += fmt.Sprintf(" (catalog entry '%s', installed in %s)", rep.Origin.Catalog, rep.Origin.InstallDir)
	case rep.Origin.Catalog != "":
		where += fmt.Sprintf(" (catalog entry '%s')", rep.Origin.Catalog)
	default:
		where += " (custom)"
	}
	e.P.Line("  Origin:    %s", where)
	e.P.Line("  Transport: %s", cmdkit.OrDefault(rep.le.Transport, "?"))
	e.P.Line("  Tools:     %s", rep.le.Tools)
	if rep.le.Auth != "" {
		e.P.Line("  Auth:      %s", rep.le.Auth)
	}
	if rep.samplingLine != "" {
		e.P.Line("  Sampling:  %s", rep.samplingLine)
	}
	if len(rep.AlwaysAllowed) > 0 {
		e.P.Line("  Always allowed (no approval asked): %s; forget with: hermes mcp get %s --revoke TOOL", termsafe.Escape(strings.Join(rep.AlwaysAllowed, ", ")), rep.Name)
	}
	if srv.FromProject() {
		for _, l := range cmdkit.ProjectDetails(srv) {
			e.P.Line("  %s", l)
		}
	}
	e.P.Line("  Entry:")
	var lines []string
	if ordered != nil {
		lines = cmdkit.YamlLines(cmdkit.MaskValue(nil, ordered))
	} else {
		lines = cmdkit.YamlLines(cmdkit.MaskValue(nil, srv.Written()))
	}
	for _, l := range lines {
		e.P.Line("    %s", l)
	}
	if len(rep.UnknownKeys) > 0 {
		e.P.Warn("Keys this version does not know (kept in the file): %s", strings.Join(rep.UnknownKeys, ", "))
	}
	for _, w := range rep.Warnings {
		e.P.Warn("%s", w)
	}
	e.P.Info("Connect and list its tools with: hermes mcp test %s", rep.Name)
}

// EntryAsWritten returns the server's entry as config.yaml writes it, keys
// in file order, and the line of its name (0 and nil when the file's
// layout does not say). The file was already read by config.Load, which
// bounds its size and its aliases.
func EntryAsWritten(path, name string) (yaml.MapSlice, int) {
	src, err := os.ReadFile(path)
	if err != nil || len(src) > config.MaxConfigBytes {
		return nil, 0
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil || len(f.Docs) == 0 {
		return nil, 0
	}
	servers := MappingEntry(f.Docs[0].Body, config.ServersKey)
	if servers == nil {
		return nil, 0
	}
	mv := MappingEntry(servers.Value, name)
	if mv == nil {
		return nil, 0
	}
	line := 0
	if tk := mv.Key.GetToken(); tk != nil && tk.Position != nil {
		line = tk.Position.Line
	}
	var v any
	if err := yaml.NodeToValue(mv.Value, &v, yaml.UseOrderedMap()); err != nil {
		return nil, line
	}
	ms, _ := v.(yaml.MapSlice)
	return ms, line
}

// MappingEntry returns the key: value pair of mapping n whose key is key.
func MappingEntry(n ast.Node, key string) *ast.MappingValueNode {
	for {
		switch t := n.(type) {
		case *ast.AnchorNode:
			n = t.Value
			continue
		case *ast.TagNode:
			n = t.Value
			continue
		}
		break
	}
	var values []*ast.MappingValueNode
	switch t := n.(type) {
	case *ast.MappingNode:
		values = t.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{t}
	}
	for _, mv := range values {
		if k, ok := mv.Key.(*ast.StringNode); ok && k.Value == key || mv.Key.GetToken() != nil && mv.Key.GetToken().Value == key {
			return mv
		}
	}
	return nil
}
