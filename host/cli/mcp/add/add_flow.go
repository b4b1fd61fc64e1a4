package add

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/cli/mcp/login"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// AddEntry is the add flow for an entry already built (by 'hermes mcp
// add', add-json or import): screen it, probe it, let the person pick its
// tools, save it with its secrets. The entry's own tools filter (an
// imported one) pre-checks the checklist and is kept when nobody picks.
func AddEntry(e *cmdkit.Env, ctx context.Context, o *AddOptions, plan *AddPlan) error {
	entry := plan.Entry
	_, isStdio := entry.Fields.Get("command")
	plan.stdio = isStdio
	plan.filter = EntryFilter(entry)
	// A suspicious entry is refused before anything else happens: no
	// prompt, no login, no probe, and config.yaml is left as it was.
	if err := ScreenAdd(e, o.Name, plan); err != nil {
		return err
	}
	KeepArgvFolders(e, o.Name, plan)
	if o.Tools != "" {
		plan.include = cmdkit.SplitList(o.Tools)
		if len(plan.include) == 0 {
			return cmdkit.Usagef("--tools needs at least one tool name, e.g. --tools read_file,list_dir")
		}
	}

	// An existing entry is replaced only when the person agrees.
	path, names, err := cmdkit.ServerNames(e)
	if err != nil {
		return err
	}
	existed := slices.Contains(names, o.Name)
	if existed && !o.Yes && !plan.overwrite {
		if !plan.interactive {
			return cmdkit.Failf("Server '%s' already exists in %s; pass --yes to overwrite it", o.Name, path)
		}
		if !e.P.Confirm(fmt.Sprintf("Server '%s' already exists. Overwrite?", o.Name), false) {
			return cmdkit.Failf("Cancelled; '%s' was not changed", o.Name)
		}
	}

	// A token is asked for up front only with --auth header; otherwise
	// only once the server has answered 401 (below).
	if !plan.stdio && !plan.noAuthPrompt && o.Auth == "header" {
		if err := AddAuth(e, o, plan); err != nil {
			return err
		}
	}

	if o.Auth == "exec" {
		// The exec: block (the command that prints the token) is not a
		// flag: the entry is saved for it to be added by hand.
		if len(plan.include) > 0 {
			entry.Include(plan.include...)
			e.P.Info("--tools was not checked against the server (--auth exec is not probed)")
		}
		if err := SaveAdd(e, o.Name, plan); err != nil {
			return err
		}
		plan.result = ResultUnprobed
		e.P.OK("Saved '%s' to %s with auth: exec (not connected)", o.Name, path)
		e.P.Info("Add its exec: block to '%s' in %s (command: the program that prints the token; args: its arguments), then check it with: hermes mcp login %s", o.Name, path, o.Name)
		return nil
	}
	if o.NoProbe {
		if len(plan.include) > 0 {
			entry.Include(plan.include...)
			e.P.Info("--tools was not checked against the server (--no-probe)")
		}
		if err := SaveAdd(e, o.Name, plan); err != nil {
			return err
		}
		plan.result = ResultUnprobed
		e.P.OK("Saved '%s' to %s (not connected: --no-probe)", o.Name, path)
		if o.logsIn() {
			e.P.Info("Log in with: hermes mcp login %s", o.Name)
		} else {
			e.P.Info("Check it with: hermes mcp test %s", o.Name)
		}
		return nil
	}

	// Tokens of a login made here for an entry that ends up not saved are
	// deleted again (unless an entry of that name was there before).
	loggedIn := false
	defer func() {
		if loggedIn && !plan.saved && !existed {
			if _, err := cmdkit.RemoveTokenFiles(e.Home, o.Name, nil); err != nil {
				e.Log.Warn("deleting the tokens of an entry not saved", "server", o.Name, "error", err)
			}
		}
	}()
	if o.logsIn() {
		if err := AddLogin(e, ctx, o, plan); err != nil {
			return err
		}
		loggedIn = true
	}

	e.P.Line("Connecting to '%s'...", o.Name)
	tools, err := AddProbe(e, ctx, o, plan)
	failShown := false
	if err != nil && o.Auth == "" && login.UsesOAuth(err) {
		// A 401 naming OAuth metadata: the server wants an OAuth login.
		// One piece of advice, the one that fits: the transport's
		// generic advice (a header, or auth: oauth in config.yaml) is
		// left out, since the server said it wants an OAuth login.
		if !plan.interactive && plan.imported {
			return cmdkit.WithCode(cmdkit.ErrorCode(err), cmdkit.Failf("Failed to connect to '%s': %s; it uses OAuth: pass --no-probe to save it, then run 'hermes mcp login %s'", o.Name, CredentialsRefused(err), o.Name))
		}
		if !plan.interactive {
			return cmdkit.WithCode(cmdkit.ErrorCode(err), cmdkit.Failf("Failed to connect to '%s': %s; it uses OAuth: add it again with --auth oauth to log in now", o.Name, CredentialsRefused(err)))
		}
		e.P.Fail("Failed to connect: %s", cmdkit.ShownErr(err))
		e.P.Warn("This server uses OAuth; run: hermes mcp login %s", o.Name)
		failShown = true
		if e.P.Confirm(fmt.Sprintf("Switch '%s' to OAuth and log in now?", o.Name), true) {
			o.Auth = "oauth"
			entry.Auth("oauth")
			if err := AddLogin(e, ctx, o, plan); err != nil {
				return err
			}
			loggedIn, failShown = true, false
			e.P.Line("Connecting to '%s'...", o.Name)
			tools, err = AddProbe(e, ctx, o, plan)
		} else if !plan.noAuthPrompt && !HasHeader(plan.Entry, "Authorization") &&
			e.P.Confirm("Use an API key or bearer token instead?", false) {
			// Some servers that offer OAuth take a static token too.
			if aerr := AddAuth(e, o, plan); aerr != nil {
				return aerr
			}
			if HasHeader(plan.Entry, "Authorization") {
				failShown = false
				e.P.Line("Connecting to '%s'...", o.Name)
				tools, err = AddProbe(e, ctx, o, plan)
			}
		}
	}
	if err != nil && o.Auth == "" && plan.interactive && !plan.stdio && !plan.noAuthPrompt && !failShown &&
		AuthChallenged(err) && !HasHeader(plan.Entry, "Authorization") {
		// The server wants credentials and names no OAuth: ask for the
		// token now, and try again with it.
		e.P.Fail("Failed to connect: %s", cmdkit.ShownErr(err))
		e.P.Info("The server wants credentials: paste its API key or bearer token (saved to .env, referenced from config.yaml)")
		if aerr := AddAuth(e, o, plan); aerr != nil {
			return aerr
		}
		if HasHeader(plan.Entry, "Authorization") {
			e.P.Line("Connecting to '%s'...", o.Name)
			tools, err = AddProbe(e, ctx, o, plan)
		} else {
			failShown = true
		}
	}
	if err != nil {
		msg := cmdkit.ShownErr(err)
		if cmdkit.ErrorCode(err) == string(failure.CodeTimeout) {
			msg += fmt.Sprintf("; a server that starts slowly (a first npx or uvx download, a large server) needs more time: add it again with --connect-timeout %s (saved as its connect_timeout)", LongerTimeout(o.ConnectTimeout))
		}
		if !plan.interactive {
			return cmdkit.WithCode(cmdkit.ErrorCode(err), cmdkit.Failf("Failed to connect to '%s': %s; nothing was saved: fix the problem and try again, or pass --no-probe to save without connecting", o.Name, msg))
		}
		if !failShown {
			e.P.Fail("Failed to connect: %s", msg)
		}
		if !e.P.Confirm("Save config anyway (you can test later)?", false) {
			return cmdkit.Failf("'%s' was not saved", o.Name)
		}
		if len(plan.include) > 0 {
			entry.Include(plan.include...)
		}
		entry.Enabled(false)
		if err := SaveAdd(e, o.Name, plan); err != nil {
			return err
		}
		plan.result = ResultDisabled
		e.P.OK("Saved '%s' to %s (disabled)", o.Name, path)
		e.P.Line("Fix the issue, then: hermes mcp test %s", o.Name)
		e.P.Info("and turn it on with: hermes mcp enable %s", o.Name)
		return nil
	}

	if len(tools) == 0 {
		if len(plan.include) > 0 {
			return cmdkit.Failf("'%s' reports no tools, so nothing matches --tools; nothing was saved", o.Name)
		}
		e.P.Warn("Server connected but reported no tools.")
		if !e.P.Confirm("Save config anyway?", true) {
			return cmdkit.Failf("'%s' was not saved", o.Name)
		}
		if err := SaveAdd(e, o.Name, plan); err != nil {
			return err
		}
		cmdkit.ApproveOffered(e, o.Name, tools, "add")
		plan.result, plan.tools = ResultSaved, "0/0"
		e.P.OK("Saved '%s' to %s (0/0 tools enabled)", o.Name, path)
		return nil
	}

	if plan.interactive && len(plan.include) == 0 {
		// The checklist below shows the tools: once is enough.
		e.P.OK("Connected! Found %d tool(s) from '%s'.", len(tools), o.Name)
	} else {
		e.P.OK("Connected! Found %d tool(s) from '%s':", len(tools), o.Name)
		for _, t := range tools {
			e.P.Line("  %-40s %s", t.Name, ui.Truncate(termsafe.Escape(cmdkit.OneLine(t.Description)), 60, "..."))
		}
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
				return cmdkit.Failf("'%s' has no tool matching '%s'; available tools: %s; nothing was saved", o.Name, p, strings.Join(all, ", "))
			}
		}
		if CountAllowed(toolview.Filter{Include: plan.include}, all) < len(all) {
			chosen = plan.include
		} else {
			SetToolsChoice(entry, nil)
			plan.filter = toolview.Filter{}
		}
	case plan.interactive:
		items := make([]ui.ChecklistItem, len(tools))
		for i, t := range tools {
			items[i] = ui.ChecklistItem{Key: t.Name, Description: cmdkit.OneLine(t.Description), Checked: plan.filter.Allows(t.Name)}
		}
		sel, err := e.P.Checklist(fmt.Sprintf("Tools to enable for '%s'", o.Name), items)
		if errors.Is(err, ui.ErrCancelled) {
			return cmdkit.Failf("Cancelled; '%s' was not saved", o.Name)
		}
		if err != nil {
			return cmdkit.Failf("tool checklist: %s", cmdkit.OneLine(err.Error()))
		}
		if len(sel) == 0 {
			return cmdkit.Failf("No tools selected; '%s' was not saved", o.Name)
		}
		if len(sel) < len(all) {
			chosen = sel
		} else {
			// Every tool picked: an imported filter goes too.
			SetToolsChoice(entry, nil)
			plan.filter = toolview.Filter{}
		}
	}
	// Non-interactive without --tools: every tool, like answering the
	// original's "Enable all N tools?" with its default (or the filter an
	// imported entry came with).

	enabled := CountAllowed(plan.filter, all)
	if chosen != nil {
		SetToolsChoice(entry, chosen)
		enabled = CountAllowed(toolview.Filter{Include: chosen}, all)
	}
	if err := SaveAdd(e, o.Name, plan); err != nil {
		return err
	}
	cmdkit.ApproveOffered(e, o.Name, tools, "add")
	plan.result, plan.tools = ResultSaved, fmt.Sprintf("%d/%d", enabled, len(all))
	e.P.OK("Saved '%s' to %s (%d/%d tools enabled)", o.Name, path, enabled, len(all))
	e.P.Line("%s", ReadyLine(o.Name))
	return nil
}

// AddLogin logs in to the entry as it would be saved (the oauth: block
// and a client secret resolved through the config layer), before anything
// is written. A failed login is the add's error: nothing is saved.
func AddLogin(e *cmdkit.Env, ctx context.Context, o *AddOptions, plan *AddPlan) error {
	srv, err := cmdkit.CandidateServer(e, o.Name, plan.Entry, plan.pending())
	if err != nil {
		return cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
	}
	if srv.Err != nil {
		return cmdkit.Failf("'%s' cannot be used: %s; nothing was saved", o.Name, cmdkit.ShownErr(srv.Err))
	}
	e.P.Line("Logging in to '%s'...", o.Name)
	st, err := login.Login(e, ctx, srv, auth.LoginOptions{NoBrowser: o.NoBrowser, Device: o.Device})
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return cmdkit.Failf("%s; nothing was saved: run the same 'hermes mcp add' again to retry (with --no-browser to open the URL elsewhere), or add --no-probe to save '%s' now and log in later with 'hermes mcp login %s'", login.LoginMessage(o.Name, err), o.Name, o.Name)
	}
	e.P.OK("%s", login.LoggedInLine(o.Name, st, time.Now()))
	return nil
}

// AddAuth asks, on a terminal, for an HTTP server's bearer token (with
// --auth header, or once the server answered 401) and wires it in through
// .env; a key already in .env is used as it is.
func AddAuth(e *cmdkit.Env, o *AddOptions, plan *AddPlan) error {
	if (o.Auth != "" && o.Auth != "header") || HasHeader(plan.Entry, "Authorization") {
		return nil
	}
	if !plan.interactive && o.Auth != "header" {
		return nil
	}
	key := cmdkit.APIKeyVar(o.Name)
	dotenv, err := config.LoadDotEnv(e.Home)
	if err != nil {
		return cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
	}
	if _, ok := dotenv[key]; ok {
		e.P.OK("%s: already configured", key)
		plan.Entry.Header("Authorization", "Bearer ${"+key+"}")
		return nil
	}
	if !plan.interactive {
		return cmdkit.Failf("--auth header needs a terminal to type the token; set %s in %s/.env, or pass --header 'Authorization: Bearer ${%s}'", key, e.Home, key)
	}
	tok, err := e.P.Secret("API key / Bearer token")
	if err != nil {
		if errors.Is(err, ui.ErrCancelled) {
			return cmdkit.Failf("Cancelled; '%s' was not saved", o.Name)
		}
		return cmdkit.Failf("reading the token: %s", cmdkit.OneLine(err.Error()))
	}
	if len(tok) >= 7 && strings.EqualFold(tok[:7], "bearer ") {
		tok = strings.TrimSpace(tok[7:])
	}
	if tok == "" {
		e.P.Warn("No token entered; continuing without authentication")
		return nil
	}
	plan.Secrets = append(plan.Secrets, DotEnvValue{key, tok})
	plan.Entry.Header("Authorization", "Bearer ${"+key+"}")
	return nil
}

// AddProbe connects to the entry as it would be saved and lists its tools.
// A token typed for it reaches the entry's ${VAR} through the config layer
// as a pending .env value: until the entry is saved it exists nowhere else.
func AddProbe(e *cmdkit.Env, ctx context.Context, o *AddOptions, plan *AddPlan) ([]mcpvalue.Tool, error) {
	srv, err := cmdkit.CandidateServer(e, o.Name, plan.Entry, plan.pending())
	if err != nil {
		return nil, err
	}
	if srv.Err != nil {
		return nil, srv.Err
	}
	cmdkit.WithProbeTimeout(srv)
	return cmdkit.ProbeTools(e, ctx, srv)
}

// CountAllowed counts the tools f lets through.
func CountAllowed(f toolview.Filter, tools []string) int {
	n := 0
	for _, t := range tools {
		if f.Allows(t) {
			n++
		}
	}
	return n
}

// EntryFilter is the tools filter an entry already has (an imported one).
func EntryFilter(entry *config.ServerEntry) toolview.Filter {
	v, _ := entry.Fields.Get("tools")
	m, _ := v.(config.Map)
	inc, _ := m.Get("include")
	exc, _ := m.Get("exclude")
	incl, _ := inc.([]string)
	excl, _ := exc.([]string)
	return toolview.Filter{Include: incl, Exclude: excl}
}

// SetToolsChoice makes the entry's tools filter the picked tools (nil:
// every tool), dropping a filter it came with.
func SetToolsChoice(entry *config.ServerEntry, chosen []string) {
	v, _ := entry.Fields.Get("tools")
	m, _ := v.(config.Map)
	m.Delete("include")
	m.Delete("exclude")
	if len(chosen) > 0 {
		m.Set("include", append([]string(nil), chosen...))
	}
	if len(m) == 0 {
		entry.Fields.Delete("tools")
		return
	}
	entry.Set("tools", m)
}

// AuthChallenged reports whether a failed connect was the server asking
// for credentials (HTTP 401, or 403 with a challenge).
func AuthChallenged(err error) bool { return failure.Of(err) == failure.CodeAuth }

// LongerTimeout is the connect timeout to suggest after a probe that timed
// out with used (0: probeConnectTimeout): twice as long, in whole minutes,
// written as --connect-timeout takes it ("4m").
func LongerTimeout(used time.Duration) string {
	if used <= 0 {
		used = cmdkit.ProbeConnectTimeout
	}
	mins := max(int((2*used+time.Minute-1)/time.Minute), 2)
	return fmt.Sprintf("%dm", mins)
}

// KeepArgvFolders turns roots off for a stdio server whose command line
// names folders, unless the entry says otherwise: a server that takes its
// allowed folders from its argv may replace them with the client's roots
// when offered some (server-filesystem does: it served the folder hermes
// was started from, not the one the person named). The person is told why
// and how to offer roots anyway.
func KeepArgvFolders(e *cmdkit.Env, name string, plan *AddPlan) {
	if !plan.stdio {
		return
	}
	if _, set := plan.Entry.Fields.Get("roots"); set {
		return
	}
	v, _ := plan.Entry.Fields.Get("args")
	args, _ := v.([]string)
	cwd := ""
	if c, ok := plan.Entry.Fields.Get("cwd"); ok {
		cwd, _ = c.(string)
	}
	folders := ArgvFolders(args, cwd, e.F.UserHome, e.F.WorkDir)
	if len(folders) == 0 {
		return
	}
	plan.Entry.Set("roots", false)
	e.P.Info("'%s' names folders on its command line (%s): it is saved with roots: false, so it keeps them (a server such as server-filesystem replaces them with the client's roots when offered some); set roots: true in config.yaml to offer it the working folder and roots:", name, strings.Join(folders, ", "))
}

// ArgvFolders are the words of args (or the values of --flag=VALUE words)
// that name existing folders: absolute, under ~, or relative to cwd (the
// entry's, else the working folder). At most 3 are returned, for a line.
func ArgvFolders(args []string, cwd string, home, work func() (string, error)) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			_, val, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			a = val
		}
		if a == "" || strings.Contains(a, "://") || strings.Contains(a, "${") {
			continue
		}
		p := a
		switch {
		case p == "~" || strings.HasPrefix(p, "~/"):
			h, err := home()
			if err != nil {
				continue
			}
			p = filepath.Join(h, strings.TrimPrefix(p, "~"))
		case !filepath.IsAbs(p):
			base := cwd
			if base == "" {
				w, err := work()
				if err != nil {
					continue
				}
				base = w
			}
			if !filepath.IsAbs(base) {
				continue
			}
			p = filepath.Join(base, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() && len(out) < 3 {
			out = append(out, a)
		}
	}
	return out
}

// ReadyLine says where a server just saved can be used: every command
// from now on, and a chat already running after /reload-mcp ("Start a new
// session" was said after every add, untrue for hermes mcp call and for a
// chat that reloads).
func ReadyLine(name string) string {
	return fmt.Sprintf("Use them now: 'hermes mcp call %s <tool>' or 'hermes chat' (/reload-mcp in a running chat).", name)
}

// ChangedLine says where a changed server takes effect.
const ChangedLine = "Commands from now on use the change; a chat already running picks it up with /reload-mcp."

// CredentialsRefused says what a failure that asked for credentials was,
// from its typed error (the HTTP status the transport reported), without
// the transport's own advice: the caller gives the advice that fits. An
// error without a status is shown whole.
func CredentialsRefused(err error) string {
	status := 0
	var se *sdk.Error
	var pe *cmdkit.ProbeError
	switch {
	case errors.As(err, &pe):
		status = pe.Status
	case errors.As(err, &se):
		status = se.Status
	}
	if status == 0 {
		return cmdkit.ShownErr(err)
	}
	return fmt.Sprintf("it needs credentials (HTTP %d %s)", status, http.StatusText(status))
}
