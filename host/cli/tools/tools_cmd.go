package tools

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/app"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/urfave/cli/v3"
)

// ToolsReport is what 'hermes tools --json' prints.
type ToolsReport struct {
	Builtin   []app.Toolset      `json:"builtin"`
	SafeMode  bool               `json:"safe_mode,omitempty"`
	Servers   []ToolsServerEntry `json:"servers"`
	Available int                `json:"available_tools"`
}

// ToolsServerEntry is one server of 'hermes tools --json': every
// configured server, disabled ones too. State needs_auth: only 'hermes mcp
// login <name>' can connect it (the server's auth plugin needs a login, or
// a server without auth: answered with an OAuth challenge).
type ToolsServerEntry struct {
	cmdkit.JSONServer
	Toolset string `json:"toolset,omitempty"`
	// RegisteredTools are the model-visible names of its tools, utility
	// tools included; ToolsEnabled counts its own tools that pass the
	// filter, ToolsTotal the tools it offers.
	RegisteredTools []string `json:"registered_tools"`
	ToolsEnabled    int      `json:"tools_enabled"`
	ToolsTotal      int      `json:"tools_total"`
	// Hint says what to do about Error, when there is something.
	Hint string `json:"hint,omitempty"`
	// Drift lists its tools whose definitions changed since they were
	// approved (withheld ones are not in RegisteredTools).
	Drift []cmdkit.DriftNote `json:"drift,omitempty"`
	// ApprovalUnreadable says that its approved tools cannot be read (and
	// so every tool is withheld) and what to do.
	ApprovalUnreadable string `json:"approval_unreadable,omitempty"`
	// Running: hermes started the server for this report (state
	// connected). A server in state cached was not started: its tools
	// come from the record of its last connection, made at CachedAt.
	Running  bool   `json:"running"`
	CachedAt string `json:"cached_at,omitempty"`
	// registryState is the registry's word for the state, which the
	// text shows.
	registryState registry.State
	// cachedAge is how old the record of a cached server is, as the text
	// says it.
	cachedAge string
}

// ToolsOptions are what 'hermes tools' needs: the run, and its flags.
type ToolsOptions struct {
	Env *cmdkit.Env
	// JSON is --json and what it printed.
	JSON *cmdkit.JSONOutput
	// Live is --live: connect every enabled server instead of reading the
	// records of their last connections.
	Live bool
}

// NewCmdTools builds 'hermes tools'. Its action fills a ToolsOptions from
// the command line and hands it to runF when runF is not nil (a test's
// look at what was parsed), else to toolsRun.
func NewCmdTools(e *cmdkit.Env, runF func(context.Context, *ToolsOptions) error) *cli.Command {
	opts := &ToolsOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:  "tools",
		Usage: "show the tools a model would see, beside the built-in toolsets (servers with a fresh record of their tools are not started; --live connects every enabled server)",
		Flags: []cli.Flag{j.Flag("print a JSON report (see docs/JSON.md)"),
			&cli.BoolFlag{Name: "live", Usage: "connect every enabled server instead of reading what a server offered at its last connection", Destination: &opts.Live}},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return cmdkit.Usagef("usage: hermes tools [--live] [--json]")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return toolsRun(ctx, opts)
		}),
	}
}

// toolsRun lists the tools of every configured server, as text or as a
// ToolsReport.
func toolsRun(ctx context.Context, opts *ToolsOptions) error {
	e, j, live := opts.Env, opts.JSON, opts.Live
	asJSON := j.On
	cfg, err := e.F.Config()
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	cmdkit.AdmitProject(e, cfg.Servers...)
	rep := ToolsReport{Builtin: app.BuiltinToolsets(), SafeMode: cfg.SafeMode, Servers: []ToolsServerEntry{}}
	if n := ToConnect(e, cfg.Servers, live); !asJSON && n > 0 && !cfg.SafeMode {
		e.P.Info("Connecting to %d MCP server(s)...", n)
	}
	mode := app.Cached
	if live {
		mode = app.Snapshot
	}
	m, _ := e.F.Registry(mode, cfg.Servers)
	defer m.Detach() // the output is complete: do not wait for the servers to stop
	if err := m.Start(ctx); err != nil {
		return cmdkit.Failf("%s", cmdkit.ShownErr(err))
	}
	for _, st := range m.Status() {
		srv := cfg.Server(st.Name)
		ent := ToolsServerEntry{Toolset: st.Toolset, RegisteredTools: st.Registered, ToolsEnabled: st.Enabled, ToolsTotal: st.Total}
		if srv != nil {
			ent.JSONServer = cmdkit.ServerJSON(srv)
		} else {
			ent.JSONServer = cmdkit.JSONServer{Name: st.Name, Tools: cmdkit.ToolSelection(nil)}
		}
		ent.Transport, ent.registryState = st.Transport, st.State
		ent.State, ent.Error = cmdkit.RegistryState(st, srv)
		ent.Running, ent.CachedAt, ent.cachedAge = cmdkit.ListingSource(st, time.Now())
		if srv != nil && srv.Auth == "" && cmdkit.ChallengeNamesOAuth(st.Code, st.Challenge) {
			ent.Hint = fmt.Sprintf("This server uses OAuth; run: hermes mcp login %s", st.Name)
		}
		d := cmdkit.ManagerDrift(m, st.Name)
		ent.Drift, ent.ApprovalUnreadable = cmdkit.DriftNotes(d), cmdkit.ApprovalUnreadable(d)
		if ent.RegisteredTools == nil {
			ent.RegisteredTools = []string{}
		}
		rep.Servers = append(rep.Servers, ent)
	}
	rep.Available = m.ToolCount()
	if asJSON {
		j.Write(rep)
		return nil
	}
	PrintTools(e, rep, cfg.Path)
	return nil
}

// PrintTools prints rep as text; path is config.yaml, named when no
// server is configured.
func PrintTools(e *cmdkit.Env, rep ToolsReport, path string) {
	defer e.P.Hold()()
	e.P.Header("Built-in toolsets")
	if len(rep.Builtin) == 0 {
		e.P.Line("  none (this build has no built-in tools yet)")
	}
	for _, ts := range rep.Builtin {
		e.P.Line("  %s (%d tools)", ts.Name, len(ts.Tools))
	}
	e.P.Line("")
	e.P.Header("MCP servers")
	switch {
	case rep.SafeMode:
		e.P.Warn("HERMES_SAFE_MODE is set: no MCP servers are loaded")
		return
	case len(rep.Servers) == 0:
		e.P.Line("  none configured in %s; add one with 'hermes mcp add'", path)
		return
	}
	for _, s := range rep.Servers {
		switch s.registryState {
		case registry.StateDisabled:
			e.P.Line("- %s (%s): disabled; enable it with 'hermes mcp enable %s'", s.Name, s.Transport, s.Name)
			continue
		case registry.StateConnected:
			e.P.OK("%s (%s) %s: %d/%d tools enabled", s.Name, s.Transport, s.Toolset, s.ToolsEnabled, s.ToolsTotal)
		case registry.StateIdle:
			e.P.OK("%s (%s) %s: %d/%d tools enabled (cached %s ago, not running; --live connects it)", s.Name, s.Transport, s.Toolset, s.ToolsEnabled, s.ToolsTotal, s.cachedAge)
		default:
			reason := "no answer yet"
			if s.Error != nil && s.Error.Message != "" {
				reason = s.Error.Message
			}
			e.P.Fail("%s (%s): %s: %s", s.Name, s.Transport, s.registryState, reason)
			if s.Hint != "" {
				e.P.Info("    %s", s.Hint)
			}
			continue
		}
		// One tool a line: names are what people look for, and a long
		// comma-joined line wraps mid-word on a narrow terminal.
		for _, t := range s.RegisteredTools {
			e.P.Line("      %s", t)
		}
		cmdkit.PrintDrift(e, s.Name, s.Drift, s.ApprovalUnreadable)
	}
	e.P.Line("")
	e.P.Line("%s available to the model", cmdkit.Plural(rep.Available, "tool"))
}

// ToConnect counts the enabled servers 'hermes tools' is about to connect:
// every one with --live, else those without a saved listing (a record
// file; whether it is still usable is the registry's to decide, so this is
// a cheap look, not a read). Listing from the records connects nothing and
// says nothing.
func ToConnect(e *cmdkit.Env, servers []*config.Server, live bool) int {
	st := e.F.Offered()
	n := 0
	for _, s := range servers {
		if !s.Enabled || s.Err != nil {
			continue
		}
		if !live && st != nil && s.Start != config.StartEager {
			if _, err := os.Stat(st.RecordPath(s.StateKey())); err == nil {
				continue
			}
		}
		n++
	}
	return n
}
