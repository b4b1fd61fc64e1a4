package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/mark3labs/mcp-go/mcp"
)

// probeConnectTimeout bounds a probe from the command line when the entry
// sets no connect_timeout of its own (shorter than the runtime default: a
// person is waiting).
const probeConnectTimeout = 30 * time.Second

// probeTools connects to srv through the registry, exactly as a session of
// the agent would (a Manager over this one server), and returns every tool
// the server offers as the registry listed them: the same pagination
// bounds, in the server's order, before the entry's tools filter (the
// caller shows the filter). A server without the tools capability has no
// tools (an empty, non-nil slice). A disabled entry is probed all the same,
// so that its tools can be picked before it is turned on.
//
// The probe is one-shot: once the tools are listed the Manager is
// detached, so the server's shutdown does not hold the prompt.
func (e *env) probeTools(ctx context.Context, srv *config.Server) ([]mcp.Tool, error) {
	probe := *srv
	probe.Enabled = true
	m := e.newManager([]*config.Server{&probe})
	defer m.Detach()
	if err := m.Start(ctx); err != nil {
		return nil, err
	}
	st := m.Status()[0]
	if st.State != registry.StateConnected {
		return nil, errors.New(orDefault(st.Error, "no answer within connect_timeout"))
	}
	tools, _ := m.ServerTools(srv.Name)
	if tools == nil {
		tools = []mcp.Tool{}
	}
	return tools, nil
}

// withProbeTimeout applies the command line's probe timeout to a server
// whose entry does not set connect_timeout.
func withProbeTimeout(srv *config.Server) {
	if _, set := srv.Raw["connect_timeout"]; !set {
		srv.ConnectTimeout = probeConnectTimeout
	}
}

// candidateServer turns an entry that is not saved yet into the Server the
// config package would load once it is saved, so that a probe sees exactly
// what a later session will: defaults, validation and ${VAR} interpolation
// from the environment and the home folder's .env. pending are .env values
// that will be saved with the entry (a token just typed); they resolve its
// ${VAR}s through the config layer only, and never enter the process
// environment or a file.
func (e *env) candidateServer(name string, entry *config.ServerEntry, pending map[string]string) (*config.Server, error) {
	if config.SafeMode() {
		return nil, fmt.Errorf("HERMES_SAFE_MODE is set, so no MCP server is loaded; unset it, or pass --no-probe to save '%s' without connecting", name)
	}
	return config.LoadEntry(e.home, name, entry, pending)
}

// serverNames reads the names of the configured servers, in file order,
// without changing the file. A config that does not parse is an error.
func (e *env) serverNames() (path string, names []string, err error) {
	err = config.Edit(e.home, func(d *config.Document) error {
		path = d.Path()
		names = d.Names()
		return nil
	})
	if err != nil {
		return "", nil, failf("%s", oneLine(err.Error()))
	}
	return path, names, nil
}

// notFound is the error for a server name that is not in the config.
func notFound(name string, names []string) error {
	if len(names) == 0 {
		return failf("Server '%s' not found in config. No MCP servers are configured; add one with 'hermes mcp add'", name)
	}
	return failf("Server '%s' not found in config. Available servers: %s", name, strings.Join(names, ", "))
}

// requireServer fails unless name is configured.
func (e *env) requireServer(name string) error {
	_, names, err := e.serverNames()
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == name {
			return nil
		}
	}
	return notFound(name, names)
}

var nonKeyChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

// APIKeyVar is the .env variable that holds the bearer token of an HTTP
// server added with 'hermes mcp add': MCP_<NAME>_API_KEY, the name upper-cased
// with every character other than a letter, digit or "_" turned into "_".
func APIKeyVar(name string) string {
	s := strings.Trim(nonKeyChars.ReplaceAllString(strings.ToUpper(name), "_"), "_")
	return "MCP_" + s + "_API_KEY"
}

// TokenFileBase is the file name stem of a server's OAuth files under
// $HERMES_HOME/mcp-tokens (<stem>.json, .client.json, .meta.json). The
// mapping is one-to-one, so that no server can reach another's tokens: a
// valid server name (letters, digits, "_" and "-") is its own stem, which is
// also the name the original Hermes gave it unless the name starts or ends
// with "_" or is longer than 128 characters (it trimmed those "_" and cut
// long names, so "_a" and "a" shared one file: such old files are left
// alone, since they cannot be told apart). Any other name, which config
// validation rejects, has each byte outside that set written as %XX, and
// "" is "%": the stem then contains "%", which a valid name never does. A
// stem never contains a path separator and is never "." or "..". Every
// program that keeps tokens for hermes (the OAuth plugin) must name them
// the same way.
func TokenFileBase(name string) string {
	if config.ValidName(name) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if b.Len() == 0 {
		return "%"
	}
	return b.String()
}

// tokenFiles are the OAuth files kept for a server.
func tokenFiles(home, name string) []string {
	dir := filepath.Join(home, "mcp-tokens")
	base := TokenFileBase(name)
	return []string{
		filepath.Join(dir, base+".json"),
		filepath.Join(dir, base+".client.json"),
		filepath.Join(dir, base+".meta.json"),
	}
}

// removeTokenFiles deletes a server's OAuth files and reports how many
// existed.
func removeTokenFiles(home, name string) (int, error) {
	n := 0
	for _, f := range tokenFiles(home, name) {
		err := os.Remove(f)
		switch {
		case err == nil:
			n++
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENAMETOOLONG):
			// No such file (a name too long for a file has none).
		default:
			return n, fmt.Errorf("remove %s: %w", f, err)
		}
	}
	return n, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
