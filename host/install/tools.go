package install

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/host/ui"
)

// probeOutcome is how the server answered the probe of an install.
type probeOutcome int

const (
	// probeListed: the server connected and listed its tools.
	probeListed probeOutcome = iota
	// probeNeedsLogin: the server needs a login first (auth:), so it was
	// not probed; the install says to log in.
	probeNeedsLogin
	// probeKept: the probe failed and the install is kept, disabled
	// (Options.KeepFailed, or the person said so).
	probeKept
)

// ProbeError is an install that failed because its server did not
// connect or did not list its tools. Err is the probe's reason.
type ProbeError struct {
	Name string
	Err  error
}

func (e *ProbeError) Error() string {
	return fmt.Sprintf("'%s' did not start: %v", e.Name, e.Err)
}

func (e *ProbeError) Unwrap() error { return e.Err }

// chooseTools probes the server and sets the entry's tools: block
// (REFERENCE §8.3 step 6). An install is not done until its server works:
// the probe must connect and list the tools, or the install fails
// (*ProbeError) and is undone, unless o.KeepFailed is set or the person
// on the terminal asks to keep it; a kept install is saved disabled, with
// the prior selection, else default_enabled, else every tool. An entry
// that needs a login first (auth:) cannot be probed before it: it is saved
// enabled, and the caller says to log in. The selection: from --tools;
// else the manifest's default_excluded; else from the checklist on a
// terminal, pre-checked with the prior selection, else the manifest's
// default_enabled, else every tool; without a terminal the prior
// selection, else default_enabled (of the tools the server has), else
// every tool.
func (in *Installer) chooseTools(ctx context.Context, m *catalog.Manifest, srv *config.Server, e *config.ServerEntry, pr priorEntryInfo, o Options) (probeOutcome, error) {
	p := in.Prompter
	name := m.Name
	keepPrior := func() bool {
		switch {
		case len(pr.include) > 0:
			e.Include(pr.include...)
		case len(pr.exclude) > 0:
			e.Exclude(pr.exclude...)
		default:
			return false
		}
		return true
	}

	var tools []Tool
	var err error
	outcome := probeListed
	switch {
	case in.Probe == nil:
		err = errors.New("this hermes has no way to start it")
	case srv.Auth != "":
		p.Tell(NoteDetail, "'%s' needs a login first (auth: %s), so it is not probed now.", name, srv.Auth)
		outcome = probeNeedsLogin
	default:
		p.Tell(NoteText, "Connecting to '%s'...", name)
		tools, err = in.Probe(ctx, srv)
	}
	if ctx.Err() != nil {
		return outcome, ctx.Err()
	}
	if err != nil {
		p.Tell(NoteFailure, "'%s' did not start: %s", name, err)
		keep := o.KeepFailed
		if !keep && p.Interactive() && !o.Yes {
			keep = p.Approve(fmt.Sprintf("Keep '%s' installed but disabled (you can fix it and test it later)?", name))
		}
		if !keep {
			return outcome, &ProbeError{Name: name, Err: err}
		}
		outcome = probeKept
		e.Enabled(false)
	}
	if outcome != probeListed {
		switch {
		case len(o.Tools) > 0:
			e.Include(o.Tools...)
			p.Tell(NoteDetail, "Enabled only %s, not checked against the server. Run `hermes mcp configure %s` once it connects to check.", strings.Join(o.Tools, ", "), name)
		case keepPrior():
			p.Tell(NoteDetail, "Kept your previous tool selection. Run `hermes mcp configure %s` once it connects to change it.", name)
		case len(m.Tools.DefaultExcluded) > 0:
			e.Exclude(m.Tools.DefaultExcluded...)
			p.Tell(NoteDetail, "Every tool but %s is enabled (pick others with: hermes mcp configure %s)", strings.Join(m.Tools.DefaultExcluded, ", "), name)
		case len(m.Tools.DefaultEnabled) > 0:
			e.Include(m.Tools.DefaultEnabled...)
			p.Tell(NoteDetail, "Applied the manifest's default (%d tools). Run `hermes mcp configure %s` once it connects to pick tools.", len(m.Tools.DefaultEnabled), name)
		default:
			p.Tell(NoteDetail, "Every tool the server offers will be enabled. Run `hermes mcp configure %s` once it connects to pick tools.", name)
		}
		return outcome, nil
	}
	if len(m.Tools.DefaultExcluded) > 0 && len(pr.include) == 0 && len(o.Tools) == 0 {
		p.Tell(NoteDone, "Connected! Found %d tool(s) from '%s'.", len(tools), name)
		exc := pr.exclude
		if len(exc) == 0 {
			exc = m.Tools.DefaultExcluded
		}
		e.Exclude(exc...)
		p.Tell(NoteDetail, "Every tool but %s is enabled (pick others with: hermes mcp configure %s)", strings.Join(exc, ", "), name)
		return outcome, nil
	}
	if len(tools) == 0 {
		if len(o.Tools) > 0 {
			return outcome, fmt.Errorf("'%s' reports no tools, so nothing matches --tools %s", name, strings.Join(o.Tools, ","))
		}
		p.Tell(NoteWarning, "Server connected but reported no tools.")
		keepPrior()
		return outcome, nil
	}
	p.Tell(NoteDone, "Connected! Found %d tool(s) from '%s':", len(tools), name)
	all := make([]string, len(tools))
	for i, t := range tools {
		all[i] = t.Name
		p.Tell(NoteText, "  %-40s %s", t.Name, ui.Truncate(termsafe.Escape(strings.Join(strings.Fields(t.Description), " ")), 60, "..."))
	}
	allows := func(f toolview.Filter) []string {
		var on []string
		for _, n := range all {
			if f.Allows(n) {
				on = append(on, n)
			}
		}
		return on
	}
	setInclude := func(sel []string) {
		switch {
		case len(sel) == len(all):
			// No filter: tools the server adds later are enabled too.
		default:
			e.Include(sel...)
		}
	}

	switch {
	case len(o.Tools) > 0:
		for _, pat := range o.Tools {
			if !slices.Contains(all, pat) && !(toolview.IsGlob(pat) && slices.ContainsFunc(all, func(n string) bool { return toolview.GlobMatch(pat, n) })) {
				return outcome, fmt.Errorf("'%s' has no tool matching '%s'; available tools: %s", name, pat, strings.Join(all, ", "))
			}
		}
		if len(allows(toolview.Filter{Include: o.Tools})) < len(all) {
			e.Include(o.Tools...)
		}
	case p.Interactive() && !o.Yes:
		on := all
		switch {
		case len(pr.include) > 0 || len(pr.exclude) > 0:
			on = allows(toolview.Filter{Include: pr.include, Exclude: pr.exclude})
		case len(m.Tools.DefaultEnabled) > 0:
			on = allows(toolview.Filter{Include: m.Tools.DefaultEnabled})
		}
		choices := make([]ToolChoice, len(tools))
		for i, t := range tools {
			choices[i] = ToolChoice{Name: t.Name, Description: t.Description, Enabled: slices.Contains(on, t.Name)}
		}
		sel, err := p.PickTools(name, choices)
		if errors.Is(err, ErrDeclined) {
			return outcome, fmt.Errorf("%w: nothing was installed", ErrDeclined)
		}
		if err != nil {
			return outcome, fmt.Errorf("tool checklist: %w", err)
		}
		switch {
		case len(sel) == 0:
			e.Include()
			p.Tell(NoteWarning, "No tools selected: '%s' is installed with none enabled; pick some with: hermes mcp configure %s", name, name)
		case len(sel) == len(all):
			p.Tell(NoteDetail, "All %d tools enabled; new tools the server adds later will be auto-enabled.", len(all))
		default:
			e.Include(sel...)
			p.Tell(NoteDetail, "%d/%d tools enabled.", len(sel), len(all))
		}
	default:
		switch {
		case keepPrior():
			p.Tell(NoteDetail, "Kept your previous tool selection.")
		case len(m.Tools.DefaultEnabled) > 0:
			on := allows(toolview.Filter{Include: m.Tools.DefaultEnabled})
			if len(on) > 0 {
				setInclude(on)
				p.Tell(NoteDetail, "%d/%d tools enabled (the manifest's default).", len(on), len(all))
			}
		}
	}
	return outcome, nil
}
