package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/mark3labs/mcp-go/mcp"
)

func (e *env) runAdd(ctx context.Context, o *addOptions) error {
	entry, err := buildAddEntry(o)
	if err != nil {
		return err
	}
	plan := &addPlan{entry: entry, interactive: e.p.Interactive() && !o.yes}
	_, isStdio := entry.Fields.Get("command")
	plan.stdio = isStdio
	if o.tools != "" {
		plan.include = splitList(o.tools)
		if len(plan.include) == 0 {
			return usagef("--tools needs at least one tool name, e.g. --tools read_file,list_dir")
		}
	}

	// An existing entry is replaced only when the person agrees.
	path, names, err := e.serverNames()
	if err != nil {
		return err
	}
	if slices.Contains(names, o.name) && !o.yes {
		if !plan.interactive {
			return failf("Server '%s' already exists in %s; pass --yes to overwrite it", o.name, path)
		}
		if !e.p.Confirm(fmt.Sprintf("Server '%s' already exists. Overwrite?", o.name), false) {
			return failf("Cancelled; '%s' was not changed", o.name)
		}
	}

	if !plan.stdio {
		if err := e.addAuth(o, plan); err != nil {
			return err
		}
	}

	if o.noProbe {
		if len(plan.include) > 0 {
			entry.Include(plan.include...)
			e.p.Info("--tools was not checked against the server (--no-probe)")
		}
		if err := e.saveAdd(o.name, plan); err != nil {
			return err
		}
		e.p.OK("Saved '%s' to %s (not connected: --no-probe)", o.name, path)
		e.p.Info("Check it with: hermes mcp test %s", o.name)
		e.p.Line("Start a new session to use these tools.")
		return nil
	}
	if o.auth == "oauth" {
		// OAuth sign-in is not part of this version: a probe could only
		// fail with 401, so the entry is saved as it is.
		if len(plan.include) > 0 {
			entry.Include(plan.include...)
		}
		if err := e.saveAdd(o.name, plan); err != nil {
			return err
		}
		e.p.OK("Saved '%s' to %s with auth: oauth", o.name, path)
		e.p.Info("Note: OAuth sign-in is not available in this version yet, so the server was not probed; 'hermes mcp login %s' will acquire tokens once it is.", o.name)
		e.p.Line("Start a new session to use these tools.")
		return nil
	}

	e.p.Line("Connecting to '%s'...", o.name)
	tools, err := e.addProbe(ctx, o, plan)
	if err != nil {
		msg := shownErr(err)
		if !plan.interactive {
			return failf("Failed to connect to '%s': %s; nothing was saved: fix the problem and try again, or pass --no-probe to save without connecting", o.name, msg)
		}
		e.p.Fail("Failed to connect: %s", msg)
		if !e.p.Confirm("Save config anyway (you can test later)?", false) {
			return failf("'%s' was not saved", o.name)
		}
		if len(plan.include) > 0 {
			entry.Include(plan.include...)
		}
		entry.Enabled(false)
		if err := e.saveAdd(o.name, plan); err != nil {
			return err
		}
		e.p.OK("Saved '%s' to %s (disabled)", o.name, path)
		e.p.Line("Fix the issue, then: hermes mcp test %s", o.name)
		e.p.Info("and turn it on with: hermes mcp enable %s", o.name)
		return nil
	}

	if len(tools) == 0 {
		if len(plan.include) > 0 {
			return failf("'%s' reports no tools, so nothing matches --tools; nothing was saved", o.name)
		}
		e.p.Warn("Server connected but reported no tools.")
		if !e.p.Confirm("Save config anyway?", true) {
			return failf("'%s' was not saved", o.name)
		}
		if err := e.saveAdd(o.name, plan); err != nil {
			return err
		}
		e.p.OK("Saved '%s' to %s (0/0 tools enabled)", o.name, path)
		e.p.Line("Start a new session to use these tools.")
		return nil
	}

	e.p.OK("Connected! Found %d tool(s) from '%s':", len(tools), o.name)
	for _, t := range tools {
		e.p.Line("  %-40s %s", t.Name, ui.Truncate(termsafe.Escape(oneLine(t.Description)), 60, "..."))
	}
	all := make([]string, len(tools))
	for i, t := range tools {
		all[i] = t.Name
	}

	var chosen []string // nil: no filter
	switch {
	case len(plan.include) > 0:
		for _, p := range plan.include {
			if !slices.Contains(all, p) && !(toolview.IsGlob(p) && slices.ContainsFunc(all, func(n string) bool { return toolview.GlobMatch(p, n) })) {
				return failf("'%s' has no tool matching '%s'; available tools: %s; nothing was saved", o.name, p, strings.Join(all, ", "))
			}
		}
		if countAllowed(toolview.Filter{Include: plan.include}, all) < len(all) {
			chosen = plan.include
		}
	case plan.interactive:
		items := make([]ui.ChecklistItem, len(tools))
		for i, t := range tools {
			items[i] = ui.ChecklistItem{Key: t.Name, Description: oneLine(t.Description), Checked: true}
		}
		sel, err := e.p.Checklist(fmt.Sprintf("Tools to enable for '%s'", o.name), items)
		if errors.Is(err, ui.ErrCancelled) {
			return failf("Cancelled; '%s' was not saved", o.name)
		}
		if err != nil {
			return failf("tool checklist: %s", oneLine(err.Error()))
		}
		if len(sel) == 0 {
			return failf("No tools selected; '%s' was not saved", o.name)
		}
		if len(sel) < len(all) {
			chosen = sel
		}
	}
	// Non-interactive without --tools: every tool, like answering the
	// original's "Enable all N tools?" with its default.

	enabled := len(all)
	if chosen != nil {
		entry.Include(chosen...)
		enabled = countAllowed(toolview.Filter{Include: chosen}, all)
	}
	if err := e.saveAdd(o.name, plan); err != nil {
		return err
	}
	e.p.OK("Saved '%s' to %s (%d/%d tools enabled)", o.name, path, enabled, len(all))
	e.p.Line("Start a new session to use these tools.")
	return nil
}

// addAuth asks, on a terminal, whether an HTTP server needs a bearer token
// and wires it in through .env.
func (e *env) addAuth(o *addOptions, plan *addPlan) error {
	if o.auth == "oauth" || hasHeader(plan.entry, "Authorization") {
		return nil
	}
	if !plan.interactive && o.auth != "header" {
		return nil
	}
	key := APIKeyVar(o.name)
	dotenv, err := config.LoadDotEnv(e.home)
	if err != nil {
		return failf("%s", oneLine(err.Error()))
	}
	if o.auth != "header" && !e.p.Confirm("Does this server require authentication?", true) {
		return nil
	}
	if _, ok := dotenv[key]; ok {
		e.p.OK("%s: already configured", key)
		plan.entry.Header("Authorization", "Bearer ${"+key+"}")
		return nil
	}
	if !plan.interactive {
		return failf("--auth header needs a terminal to type the token; set %s in %s/.env, or pass --header 'Authorization: Bearer ${%s}'", key, e.home, key)
	}
	tok, err := e.p.Secret("API key / Bearer token")
	if err != nil {
		if errors.Is(err, ui.ErrCancelled) {
			return failf("Cancelled; '%s' was not saved", o.name)
		}
		return failf("reading the token: %s", oneLine(err.Error()))
	}
	if len(tok) >= 7 && strings.EqualFold(tok[:7], "bearer ") {
		tok = strings.TrimSpace(tok[7:])
	}
	if tok == "" {
		e.p.Warn("No token entered; continuing without authentication")
		return nil
	}
	plan.secretKey, plan.secret = key, tok
	plan.entry.Header("Authorization", "Bearer ${"+key+"}")
	return nil
}

// addProbe connects to the entry as it would be saved and lists its tools.
// A token typed for it reaches the entry's ${VAR} through the config layer
// as a pending .env value: until the entry is saved it exists nowhere else.
func (e *env) addProbe(ctx context.Context, o *addOptions, plan *addPlan) ([]mcp.Tool, error) {
	var pending map[string]string
	if plan.secret != "" {
		pending = map[string]string{plan.secretKey: plan.secret}
	}
	srv, err := e.candidateServer(o.name, plan.entry, pending)
	if err != nil {
		return nil, err
	}
	if srv.Err != nil {
		return nil, srv.Err
	}
	withProbeTimeout(srv)
	return e.probeTools(ctx, srv)
}

// countAllowed counts the tools f lets through.
func countAllowed(f toolview.Filter, tools []string) int {
	n := 0
	for _, t := range tools {
		if f.Allows(t) {
			n++
		}
	}
	return n
}
