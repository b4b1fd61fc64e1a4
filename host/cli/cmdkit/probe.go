package cmdkit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hermes-agent/hermes/host/homedir"

	"github.com/hermes-agent/hermes/host/mcpvalue"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// ProbeConnectTimeout bounds a probe from the command line when the entry
// sets no connect_timeout of its own. The probe of add and install is a
// server's first start, the slowest one (npx or uvx fetches the package,
// caches are cold: desktop-commander took about 20 s, git-mcp-server 10 to
// 12 s on a loaded machine, and failed at 30 s), so it gets longer than
// the runtime default (config.DefaultConnectTimeout); the person sees
// "Connecting..." and can stop it with Ctrl-C.
const ProbeConnectTimeout = config.FirstConnectTimeout

// ProbeTools connects to srv through the registry, exactly as a session of
// the agent would (a Manager over this one server), and returns every tool
// the server offers as the registry listed them: the same pagination
// bounds, in the server's order, before the entry's tools filter (the
// caller shows the filter). A server without the tools capability has no
// tools (an empty, non-nil slice). A disabled entry is probed all the same,
// so that its tools can be picked before it is turned on.
//
// The probe is one-shot: once the tools are listed the Manager is
// detached, so the server's shutdown does not hold the prompt.
func ProbeTools(e *Env, ctx context.Context, srv *config.Server) ([]mcpvalue.Tool, error) {
	probe := *srv
	probe.Enabled = true
	m := NewManager(e, []*config.Server{&probe})
	defer m.Detach()
	if err := m.Start(ctx); err != nil {
		return nil, err
	}
	st := m.Status()[0]
	if st.State != registry.StateConnected {
		return nil, &ProbeError{Msg: OrDefault(st.Error, "no answer within connect_timeout"), Code: st.Code, Challenge: st.Challenge, Status: st.HTTPStatus}
	}
	tools, _ := m.ServerTools(srv.Name)
	if tools == nil {
		tools = []mcpvalue.Tool{}
	}
	return tools, nil
}

// WithProbeTimeout applies the command line's probe timeout to a server
// whose entry does not set connect_timeout.
func WithProbeTimeout(srv *config.Server) {
	if _, set := srv.Raw["connect_timeout"]; !set {
		srv.ConnectTimeout = ProbeConnectTimeout
	}
}

// CandidateServer turns an entry that is not saved yet into the Server the
// config package would load once it is saved, so that a probe sees exactly
// what a later session will: defaults, validation and ${VAR} interpolation
// from the environment and the home folder's .env. pending are .env values
// that will be saved with the entry (a token just typed); they resolve its
// ${VAR}s through the config layer only, and never enter the process
// environment or a file.
func CandidateServer(e *Env, name string, entry *config.ServerEntry, pending map[string]string) (*config.Server, error) {
	if config.SafeModeFrom(Getter(e)) {
		return nil, fmt.Errorf("HERMES_SAFE_MODE is set, so no MCP server is loaded; unset it, or pass --no-probe to save '%s' without connecting", name)
	}
	return config.LoadEntryEnv(e.Home, name, entry, pending, e.F.ConfigEnv())
}

// ServerNames reads the names of the configured servers, in file order,
// without changing the file. A config that does not parse is an error.
func ServerNames(e *Env) (path string, names []string, err error) {
	err = config.Edit(e.Home, func(d *config.Document) error {
		path = d.Path()
		names = d.Names()
		return nil
	})
	if err != nil {
		return "", nil, WithCode(CodeConfig, Failf("%s", OneLine(err.Error())))
	}
	return path, names, nil
}

// NotFound is the error for a server name that is not in the config, in
// the one wording every command uses, with the nearest configured name
// when one is close.
func NotFound(name string, names []string) error {
	if len(names) == 0 {
		return WithCode(CodeUnknownServer, Failf("no server named '%s': no MCP servers are configured; add one with 'hermes mcp add'", name))
	}
	return WithCode(CodeUnknownServer, Failf("no server named '%s'%s; configured: %s", name, DidYouMean("", name, names), strings.Join(names, ", ")))
}

// RequireServer fails unless name is configured in config.yaml, the file
// the commands that change a server edit; a name only a project file
// declares is refused with where to change it.
func RequireServer(e *Env, name string) error {
	_, names, err := ServerNames(e)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == name {
			return nil
		}
	}
	if p, err := e.F.Project(); err == nil && p != nil {
		for _, s := range p.Servers {
			if s.Name == name {
				return WithCode(CodeProjectServer, Failf("'%s' is declared by the project file %s, not by config.yaml; change it in that file, or keep it from running with: hermes mcp reject %s", name, s.Origin.File, name))
			}
		}
	}
	return NotFound(name, names)
}

var NonKeyChars = lazyregexp.New(`[^A-Za-z0-9_]`)

// APIKeyVar is the .env variable that holds the bearer token of an HTTP
// server added with 'hermes mcp add': MCP_<NAME>_API_KEY, the name upper-cased
// with every character other than a letter, digit or "_" turned into "_".
func APIKeyVar(name string) string {
	s := strings.Trim(NonKeyChars.ReplaceAllString(strings.ToUpper(name), "_"), "_")
	return "MCP_" + s + "_API_KEY"
}

// TokenFileBase is the file name stem of a server's credential files under
// $HERMES_HOME/mcp-tokens (<stem>.json, .client.json, .meta.json): the
// auth plugins' own rule, sdk/auth.FileStem, one-to-one, so that no
// server can reach another's tokens.
func TokenFileBase(name string) string { return auth.FileStem(name) }

// TokenFiles are the credential files an auth plugin may keep for the
// server named name (the OAuth plugin's three), in its folder: the user's
// mcp-tokens/, or for a project file's server (srv from a project) that
// project's own folder under it (credentials.ServerTokenDir), so that a
// project server named like one of the user's never counts or deletes the
// user's tokens. srv may be nil: a server of the user's config.
func TokenFiles(home, name string, srv *config.Server) []string {
	dir := homedir.Dir(home).Tokens()
	if srv != nil {
		dir = credentials.ServerTokenDir(srv, home)
	}
	base := TokenFileBase(name)
	return []string{
		filepath.Join(dir, base+".json"),
		filepath.Join(dir, base+".client.json"),
		filepath.Join(dir, base+".meta.json"),
	}
}

// RemoveTokenFiles deletes a server's OAuth files (tokenFiles) and
// reports how many existed.
func RemoveTokenFiles(home, name string, srv *config.Server) (int, error) {
	n := 0
	for _, f := range TokenFiles(home, name, srv) {
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

// SplitList splits a comma-separated flag value, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
