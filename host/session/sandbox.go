package session

import (
	"github.com/hermes-agent/hermes/host/homedir"
	"os"
	"path/filepath"
	"slices"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// InstallDir is the folder a catalog install put server name's files in.
func InstallDir(home, name string) string {
	return homedir.Dir(home).Install(name)
}

// sandboxPolicy turns a server's sandbox: block (l.Sandbox) into what its
// transport applies: $HERMES_HOME is never readable (its .env, tokens and
// config), apart from the server's own install folder, which is writable
// when it exists. nil when the server asked for no sandbox.
func sandboxPolicy(home string, srv *config.Server, l config.Launch) *transport.Sandbox {
	s := l.Sandbox
	if s == nil {
		return nil
	}
	home = absHome(home)
	p := &transport.Sandbox{
		Enforce:  s.Enforce,
		Writable: slices.Clone(s.Writable),
		DenyRead: []string{filepath.Clean(home)},
		Network:  transport.Network{Mode: s.Network, Hosts: slices.Clone(s.Hosts)},
		Limits: transport.Limits{MemoryBytes: s.Memory, CPUSeconds: s.CPUSeconds,
			OpenFiles: s.OpenFiles, Processes: s.Processes},
	}
	switch s.Network {
	case "", "all":
		p.Network.Mode = transport.NetworkAll
	case "none":
		p.Network.Mode = transport.NetworkNone
	case "hosts":
		p.Network.Mode = transport.NetworkHosts
	}
	for _, d := range s.DenyRead {
		if !slices.Contains(p.DenyRead, d) {
			p.DenyRead = append(p.DenyRead, d)
		}
	}
	p.InstallDir = installDir(home, srv, l)
	return p
}

// installDir is the install folder the sandbox of srv is given, or "": a
// server named like a catalog install is not given that install's folder
// unless it is the install (a project's server never is), nor when its
// sandbox: block says no_install_folder or the folder does not exist.
func installDir(home string, srv *config.Server, l config.Launch) string {
	dir := InstallDir(absHome(home), srv.Name)
	if l.Sandbox == nil || l.Sandbox.NoInstallFolder || srv.FromProject() || !isDir(dir) {
		return ""
	}
	return dir
}

// absHome is home made absolute, as the sandbox names it; home itself
// when it cannot be.
func absHome(home string) string {
	if abs, err := filepath.Abs(home); err == nil {
		return abs
	}
	return home
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// checkSandboxed refuses a connection whose server asked for a sandbox the
// transport did not report applying: a transport that cannot sandbox must
// not run the server unconfined.
func checkSandboxed(plan Plan, props transport.Properties) error {
	if plan.Transport.Sandbox == nil || props.Sandbox != nil {
		return nil
	}
	return connectErr(plan.Server.Name, sdk.CodeSandbox,
		"transport %s cannot sandbox a server, so %q was not started; use the built-in stdio transport or remove sandbox: from the entry",
		plan.Launch.Plugin, plan.Server.Name)
}

// Sandbox is what the transport reported putting the server under; nil
// when the server runs without a sandbox.
func (s *Session) Sandbox() *transport.SandboxReport {
	if s.conn == nil {
		return nil
	}
	return s.conn.Properties().Sandbox
}
