package transport

import "strings"

// Network modes of a Sandbox.
const (
	// NetworkAll leaves the network alone.
	NetworkAll = "all"
	// NetworkNone lets the server reach no address at all (Unix sockets
	// and the host's own stdin/stdout pipes still work).
	NetworkNone = "none"
	// NetworkHosts lets the server reach the host names in
	// Network.Hosts only, through a filtering proxy the transport runs
	// outside the sandbox (HTTP_PROXY / HTTPS_PROXY point at it).
	NetworkHosts = "hosts"
)

// Sandbox is the isolation the host asks a transport to put a local
// server process under. The host has already made every path absolute (~
// expanded) and applied every default; a transport applies exactly this.
// Paths are sent as declared: a transport resolves them again at every
// start, right before it builds its rules (sandboxpath.Check: a server may
// have swapped a path it can write for a symbolic link since its last
// start), uses the resolved paths, and refuses a writable path that check
// refuses with an sdk.CodeSandbox error, whatever Enforce says.
//
// A transport that is sent a Sandbox must either apply all of it or, when
// Enforce is true, refuse to start the server with an sdk.CodeSandbox error
// that says what cannot be enforced here and how to override it
// ("sandbox: {enforce: false}"). With Enforce false it applies what it can
// and lists the rest in SandboxReport.Gaps. A transport that does not
// support sandboxing at all reports no SandboxReport; the host then refuses
// to run a server that asked for one.
type Sandbox struct {
	// Enforce: refuse to start the server when any part cannot be
	// enforced by this kernel (the default the host sends is true).
	Enforce bool `json:"enforce"`
	// InstallDir is the server's own folder (a catalog entry's install
	// folder); readable and writable. Empty for none.
	InstallDir string `json:"install_dir,omitempty"`
	// Writable are further paths the server may write (besides
	// InstallDir and a private temporary folder the transport creates and
	// removes, exported to the server as TMPDIR). Everything else is
	// read-only.
	Writable []string `json:"writable,omitempty"`
	// DenyRead are paths the server can never read (nor list), not even
	// below a Writable or readable folder, except InstallDir and Writable
	// paths inside them, which stay usable.
	DenyRead []string `json:"deny_read,omitempty"`
	// Network is what the server may reach.
	Network Network `json:"network"`
	// Limits are resource limits of the server's processes; zero fields
	// set no limit.
	Limits Limits `json:"limits"`
}

// Network says what a sandboxed server may reach.
type Network struct {
	// Mode is NetworkAll, NetworkNone or NetworkHosts. Empty means
	// NetworkAll.
	Mode string `json:"mode"`
	// Hosts are the host names (exact, or "*.example.com" for every
	// subdomain; an optional ":port" restricts the port) reachable in
	// NetworkHosts mode.
	Hosts []string `json:"hosts,omitempty"`
}

// Limits are resource limits of a sandboxed server.
type Limits struct {
	// MemoryBytes bounds the private writable memory of each process
	// (RLIMIT_DATA on Linux: heap, anonymous mappings and thread stacks).
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// CPUSeconds bounds the CPU time of each process; past it the process
	// is killed.
	CPUSeconds uint64 `json:"cpu_seconds,omitempty"`
	// OpenFiles bounds the open file descriptors of each process.
	OpenFiles uint64 `json:"open_files,omitempty"`
	// Processes bounds the processes and threads of the server, all
	// together.
	Processes uint64 `json:"processes,omitempty"`
}

// SandboxReport is what a transport says it put a server under: the host
// shows it (hermes mcp test) and refuses a server that asked for a sandbox
// and got no report.
type SandboxReport struct {
	// Applied lists, one short line each, what is in force (e.g.
	// "filesystem: read-only except 3 paths (Landlock ABI 7)").
	Applied []string `json:"applied,omitempty"`
	// Gaps lists what was asked for and is not enforced (only with
	// Sandbox.Enforce false); the host shows them as warnings.
	Gaps []string `json:"gaps,omitempty"`
}

// String is the report on one line.
func (r *SandboxReport) String() string {
	if r == nil {
		return "none"
	}
	s := strings.Join(r.Applied, "; ")
	if len(r.Gaps) > 0 {
		s += "; NOT enforced: " + strings.Join(r.Gaps, "; ")
	}
	return s
}
