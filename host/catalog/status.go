package catalog

import (
	"fmt"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
)

// Statuses of a Row, as hermes mcp catalog and the picker show them.
const (
	// StatusAvailable: in the catalog, not in config.yaml.
	StatusAvailable = "available"
	// StatusInstalledDisabled: installed, enabled: false.
	StatusInstalledDisabled = "installed (disabled)"
	// StatusEnabled: installed and enabled.
	StatusEnabled = "enabled"
	// StatusCustomEnabled and StatusCustomDisabled: a server of
	// config.yaml that is not in the catalog.
	StatusCustomEnabled  = "custom — enabled"
	StatusCustomDisabled = "custom — disabled"
	// StatusNeedsNewer: the entry's manifest is for a newer hermes.
	StatusNeedsNewer = "needs a newer Hermes"
	// StatusNameTaken: config.yaml has a server of the entry's name that
	// was not installed from the catalog (the user's own); installing
	// the entry would replace it.
	StatusNameTaken = "name in use"
)

// FromCatalog reports whether s was installed from catalog entry m: its
// entry says so (catalog:). An entry written before hermes recorded that
// counts when an install folder of its name exists (hasInstallDir) or it
// launches what m launches (the same command and args, or url, as
// written). A server of the user's that only shares the name is not; m may
// be nil (no such entry in the catalog).
func FromCatalog(s *config.Server, m *Manifest, hasInstallDir bool) bool {
	if s == nil {
		return false
	}
	if s.Catalog != "" {
		return m != nil && s.Catalog == m.Name
	}
	if _, declared := s.Raw["catalog"]; declared {
		return false
	}
	return hasInstallDir || (m != nil && launchesAs(s, m))
}

// launchesAs reports whether s, as written in config.yaml, starts what m
// does: its command and args, or its url.
func launchesAs(s *config.Server, m *Manifest) bool {
	t := m.Transport
	if t.Type == "http" {
		u, _ := s.Raw["url"].(string)
		return u != "" && strings.TrimSpace(u) == t.URL
	}
	cmd, _ := s.Raw["command"].(string)
	args, _ := s.Raw["args"].([]any)
	if strings.TrimSpace(cmd) != t.Command || len(args) != len(t.Args) {
		return false
	}
	for i, a := range args {
		if fmt.Sprint(a) != t.Args[i] {
			return false
		}
	}
	return true
}

// Row is one line of the catalog as the user sees it: a catalog entry, or
// a server of config.yaml that is not in the catalog.
type Row struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	// Description is the manifest's; for a custom server, its url or
	// command line as written in config.yaml (${VAR}s unresolved).
	Description string `json:"description"`
	// Custom is true for a server of config.yaml that is not in the
	// catalog.
	Custom bool `json:"custom"`
	// Installed is true when config.yaml has a server of this name;
	// Enabled when that server is enabled.
	Installed bool `json:"installed"`
	Enabled   bool `json:"enabled"`
	// Manifest is the entry (nil for custom servers and entries that need
	// a newer hermes).
	Manifest *Manifest `json:"-"`
}

// Rows lists the catalog's entries, then the servers of cfg that are not
// in it (in config order). Entries that need a newer hermes are listed
// too; invalid ones are not (see Catalog.Diagnostics). cfg may be nil.
func Rows(c *Catalog, cfg *config.Config) []Row {
	return RowsWith(c, cfg, nil)
}

// RowsWith is Rows, with installDir telling whether an install folder of
// a name exists (nil: none does); see FromCatalog.
func RowsWith(c *Catalog, cfg *config.Config, installDir func(name string) bool) []Row {
	if installDir == nil {
		installDir = func(string) bool { return false }
	}
	var servers []*config.Server
	if cfg != nil {
		servers = cfg.Servers
	}
	server := func(name string) *config.Server {
		for _, s := range servers {
			if s.Name == name {
				return s
			}
		}
		return nil
	}
	known := map[string]bool{}
	var rows []Row
	add := func(r Row) {
		if s := server(r.Name); s != nil && r.Status == "" && !FromCatalog(s, r.Manifest, installDir(r.Name)) {
			// The user's own server of that name: listed as custom
			// below, the entry as not installed.
			r.Status = StatusNameTaken
			rows = append(rows, r)
			return
		}
		if s := server(r.Name); s != nil {
			r.Installed, r.Enabled = true, s.Enabled
			if r.Status == "" {
				r.Status = StatusInstalledDisabled
				if s.Enabled {
					r.Status = StatusEnabled
				}
			}
		} else if r.Status == "" {
			r.Status = StatusAvailable
		}
		known[r.Name] = true
		rows = append(rows, r)
	}
	if c != nil {
		// Entries and future manifests, merged in name order.
		var future []Diagnostic
		for _, d := range c.Diagnostics {
			if d.Kind == KindFutureManifest {
				future = append(future, d)
			}
		}
		i, j := 0, 0
		for i < len(c.Entries) || j < len(future) {
			if j == len(future) || i < len(c.Entries) && c.Entries[i].Name < future[j].Entry {
				m := c.Entries[i]
				add(Row{Name: m.Name, Description: m.Description, Manifest: m})
				i++
				continue
			}
			add(Row{Name: future[j].Entry, Description: future[j].Description, Status: StatusNeedsNewer})
			j++
		}
	}
	for _, s := range servers {
		if known[s.Name] {
			continue
		}
		st := StatusCustomDisabled
		if s.Enabled {
			st = StatusCustomEnabled
		}
		rows = append(rows, Row{Name: s.Name, Status: st, Description: serverTarget(s), Custom: true, Installed: true, Enabled: s.Enabled})
	}
	return rows
}

// serverTarget is a server's url, or its command line, as written in
// config.yaml.
func serverTarget(s *config.Server) string {
	if s.Raw == nil {
		if s.URL != "" {
			return s.URL
		}
		return strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
	}
	if u, ok := s.Raw["url"].(string); ok && strings.TrimSpace(u) != "" {
		return strings.TrimSpace(u)
	}
	cmd, _ := s.Raw["command"].(string)
	line := strings.TrimSpace(cmd)
	switch a := s.Raw["args"].(type) {
	case string:
		line += " " + a
	case []any:
		for _, x := range a {
			line += " " + fmt.Sprint(x)
		}
	}
	return strings.TrimSpace(line)
}
