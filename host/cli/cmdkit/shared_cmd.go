package cmdkit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/importer"
	"github.com/hermes-agent/hermes/host/project"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/ui"
)

// AdmitProject asks the person, on a terminal, about each enabled project
// server of servers that waits for a decision, before a command uses it:
// y approves it (sandboxed) for its current digest, n rejects it (it is
// not asked about again until the entry changes), anything else leaves it
// pending. Without a terminal nothing is asked: the connection is refused
// with the command that approves. An entry the security screening refuses
// is never offered for approval.
func AdmitProject(e *Env, servers ...*config.Server) {
	for _, srv := range servers {
		if !srv.FromProject() || !srv.Enabled || srv.Err != nil || srv.Origin.Approval != config.ApprovalPending {
			continue
		}
		if !e.P.Interactive() || screening.Admit(srv) != nil {
			continue
		}
		ShowProjectServer(e, srv)
		ans, err := e.P.Ask(fmt.Sprintf("Run '%s'? y: approve, n: reject, Enter: not now", srv.Name), "")
		if err != nil {
			continue
		}
		decision := ""
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			decision = config.ApprovalApproved
		case "n", "no":
			decision = config.ApprovalRejected
		default:
			e.P.Info("'%s' stays pending; approve it later with: hermes mcp approve %s", srv.Name, srv.Name)
			continue
		}
		if err := project.Decide(e.Home, srv, decision, false); err != nil {
			e.P.Warn("could not record the decision on '%s': %s", srv.Name, OneLine(err.Error()))
			continue
		}
		srv.Origin.Approval = decision
		if decision == config.ApprovalApproved {
			e.P.OK("Approved '%s' for this project; a change to its entry asks again.", srv.Name)
		} else {
			e.P.Info("Rejected '%s'; run it after all with: hermes mcp approve %s", srv.Name, srv.Name)
		}
	}
}

func Plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// NewManager builds a registry for servers, for a command that lists or
// calls once and exits (app.Snapshot: no notification streams).
func NewManager(e *Env, servers []*config.Server) *registry.Manager {
	m, _ := e.F.Registry(app.Snapshot, servers)
	return m
}

func OrDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ShowProjectServer prints srv for a decision.
func ShowProjectServer(e *Env, srv *config.Server) {
	e.P.Header(fmt.Sprintf("Project server '%s' from %s (project %s):", srv.Name, srv.OriginText(), srv.Origin.Project))
	for _, l := range ProjectDetails(srv) {
		e.P.Line("  %s", l)
	}
}

// ProjectDetails are the lines that show a person what a project entry
// would do: its approval, what it runs or reaches, the variables it reads,
// its sandbox and what hermes did not take from the file.
func ProjectDetails(srv *config.Server) []string {
	o := srv.Origin
	short := o.Digest
	if len(short) > 12 {
		short = short[:12]
	}
	lines := []string{fmt.Sprintf("Approval:  %s (entry digest %s)", o.Approval, short)}
	l := srv.Launch()
	switch {
	case l.Local:
		lines = append(lines, "Runs:      "+ShownCommandLine(srv), "In:        "+srv.Cwd)
		if len(srv.Env) > 0 {
			lines = append(lines, "Env:       "+strings.Join(slices.Sorted(maps.Keys(srv.Env)), ", "))
		}
	case l.Remote:
		lines = append(lines, "Reaches:   "+ShownURL(srv))
		if len(srv.Headers) > 0 {
			lines = append(lines, "Headers:   "+ShownHeaders(srv)+" (as "+srv.OriginText()+" writes them)")
		}
	}
	if srv.Auth != "" {
		lines = append(lines, "Auth:      "+srv.Auth+" (its tokens are this project's own)")
	}
	if len(o.Reads) > 0 {
		lines = append(lines, "Reads:     "+JoinVars(o.Reads)+" from your environment and .env, and may send them to the server")
	}
	switch sb := l.Sandbox; {
	case sb != nil:
		for i, d := range sb.Describe() {
			if i == 0 {
				lines = append(lines, "Sandbox:   "+d)
			} else {
				lines = append(lines, "           "+d)
			}
		}
	case l.Local && o.Unsandboxed:
		lines = append(lines, "Sandbox:   none: you approved it to run with your user's rights")
	}
	if o.Overrides {
		lines = append(lines, "Replaces:  your own entry of this name in config.yaml, in this project")
	}
	for _, ig := range o.Ignored {
		lines = append(lines, "Ignored:   "+ig)
	}
	return lines
}

// ShownHeaders is "Name: value, ..." of srv's headers as its file writes
// them (a .mcp.json's literal included, config.Server.Written), each value
// masked unless it is made of ${VAR} references only.
func ShownHeaders(srv *config.Server) string {
	written, _ := srv.Written()["headers"].(map[string]any)
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(srv.Headers)) {
		v, ok := written[k].(string)
		if !ok {
			v = srv.Headers[k]
		}
		parts = append(parts, k+": "+termsafe.Escape(MaskSecret(v)))
	}
	return strings.Join(parts, ", ")
}

// MaskSecret shows a value made of ${VAR} references as it is, and masks
// any other (keeping a "Bearer " scheme).
func MaskSecret(v string) string {
	if importer.OnlyReferences(v) {
		return v
	}
	if scheme, rest, ok := strings.Cut(v, " "); ok && !strings.ContainsAny(scheme, "${}") && len(scheme) <= 10 && rest != "" {
		return scheme + " " + ui.Mask(rest)
	}
	return ui.Mask(v)
}
