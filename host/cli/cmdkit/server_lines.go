package cmdkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/hermes-agent/hermes/host/toolview"
)

// ListEntry is one server as 'hermes mcp list' shows it (its --json is
// serverJSON's). Command, Args and URL are as written in config.yaml: a
// ${VAR} stays a reference, so a secret resolved from it is never printed.
type ListEntry struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	URL       string   `json:"url,omitempty"`
	Enabled   bool     `json:"enabled"`
	// Tools is "all", "N selected" or "-N excluded".
	Tools   string   `json:"tools"`
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	Auth    string   `json:"auth,omitempty"`
	// Status is enabled, disabled, needs_vars, invalid, missing_command
	// (a stdio server whose executable is not there; Error says where it
	// was looked for) or rejected (the security check refuses the entry:
	// it is never started; Error says why).
	Status    string   `json:"status"`
	NeedsVars []string `json:"needs_vars,omitempty"`
	Error     string   `json:"error,omitempty"`
	// Origin is config.yaml or the project file (relative to the
	// project); Approval the person's decision on a project entry.
	Origin   string `json:"-"`
	Approval string `json:"-"`
}

// DescribeServer summarises a configured server without connecting to it.
func DescribeServer(s *config.Server) ListEntry {
	le := ListEntry{
		Name:      s.Name,
		Transport: s.Transport,
		Command:   ShownCommand(s),
		Args:      ShownArgs(s),
		URL:       ShownURL(s),
		Enabled:   s.Enabled,
		Include:   s.Tools.Include,
		Exclude:   s.Tools.Exclude,
		Auth:      s.Auth,
		NeedsVars: s.NeedsVars,
		Tools:     toolview.Filter{Include: s.Tools.Include, Exclude: s.Tools.Exclude}.Describe(),
		Origin:    s.OriginText(),
		Approval:  s.Origin.Approval,
	}
	if le.Transport != "" || s.URL != "" || s.Command != "" {
		le.Transport = s.Launch().Transport
	}
	switch {
	case !s.Enabled:
		le.Status = "disabled"
	case len(s.NeedsVars) > 0:
		le.Status = "needs_vars"
	case s.Err != nil:
		le.Status = "invalid"
	default:
		le.Status = "enabled"
		if why := MissingCommand(s); why != "" && le.Transport == "stdio" {
			le.Status = "missing_command"
			le.Error = why
		}
	}
	if s.Err != nil {
		le.Error = OneLine(s.Err.Error())
	} else if err := screening.Admit(s); err != nil {
		// Rejected wins over disabled and needs_vars: such an entry is
		// never started, and must not be turned on as it is.
		le.Status = "rejected"
		le.Error = OneLine(err.Error())
	} else if err := s.AdmitOrigin(); err != nil && s.Enabled {
		le.Status = "not_approved"
		le.Error = OneLine(err.Error())
	}
	return le
}

// MissingCommand says why a stdio server's executable cannot be started,
// without starting anything: a path that is not an executable file, or a
// Name not on the PATH the server gets (its env: PATH, else hermes's). ""
// when it is there.
func MissingCommand(s *config.Server) string {
	cmd := s.Command
	if cmd == "" {
		return ""
	}
	if strings.Contains(cmd, "/") {
		p := cmd
		if !filepath.IsAbs(p) && s.Cwd != "" {
			p = filepath.Join(s.Cwd, p)
		}
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Sprintf("command %s not found (no executable file there)", cmd)
		}
		return ""
	}
	path := os.Getenv("PATH")
	if v, ok := s.Env["PATH"]; ok {
		path = v
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if fi, err := os.Stat(filepath.Join(dir, cmd)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return ""
		}
	}
	return fmt.Sprintf("command %s not found on PATH", cmd)
}
