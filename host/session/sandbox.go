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

// SandboxPolicy turns a server's sandbox: block into what its transport
// applies: $HERMES_HOME is never readable (its .env, tokens and config),
// apart from the server's own install folder, which is writable when it
// exists. nil when the server asked for no sandbox.
func SandboxPolicy(home string, srv *config.Server) *transport.Sandbox {
	s := srv.Launch().Sandbox
	if s == nil {
		return nil
	}
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
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
	// A server named like a catalog install is not given that install's
	// folder unless it is the install: a project's server never is.
	if dir := InstallDir(home, srv.Name); isDir(dir) && !s.NoInstallFolder && !srv.FromProject() {
		p.InstallDir = dir
	}
	return p
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// checkSandboxPaths resolves the sandbox's paths when the plan is made,
// before any plugin starts, and refuses a writable path a symbolic link
// carries where the server must not write (config.SandboxSettings
// .CheckPaths). The transport resolves and checks them again at the start
// itself: this refusal only comes first.
func checkSandboxPaths(home string, srv *config.Server) error {
	if srv.Sandbox == nil || sandboxMisplaced(srv) != "" {
		return nil
	}
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	dir := InstallDir(home, srv.Name)
	if !isDir(dir) || srv.Sandbox.NoInstallFolder || srv.FromProject() {
		dir = ""
	}
	if err := srv.Sandbox.CheckPaths(home, dir); err != nil {
		return connectErr(srv.Name, sdk.CodeSandbox, "sandbox of server %q refused: %v", srv.Name, err)
	}
	return nil
}

// checkSandboxed refuses a connection whose server asked for a sandbox the
// transport did not report applying: a transport that cannot sandbox must
// not run the server unconfined.
func checkSandboxed(srv *config.Server, props transport.Properties) error {
	if srv.Sandbox == nil || props.Sandbox != nil {
		return nil
	}
	return connectErr(srv.Name, sdk.CodeSandbox,
		"transport %s cannot sandbox a server, so %q was not started; use the built-in stdio transport or remove sandbox: from the entry",
		PluginName(srv), srv.Name)
}

// sandboxMisplaced says why a sandbox: block cannot apply to srv (a
// remote server has no process here to confine); "" when it can.
func sandboxMisplaced(srv *config.Server) string { return srv.SandboxMisplaced() }

// Sandbox is what the transport reported putting the server under; nil
// when the server runs without a sandbox.
func (s *Session) Sandbox() *transport.SandboxReport {
	if s.conn == nil {
		return nil
	}
	return s.conn.Properties().Sandbox
}
