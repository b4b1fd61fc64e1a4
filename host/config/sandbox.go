package config

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
	"github.com/hermes-agent/hermes/sdk/sandboxpath"
)

// Default limits of a sandboxed server, used when its sandbox: block does
// not set them. They are brakes against a runaway or hostile server, set
// well above what a normal node or python server needs (see
// docs/SANDBOX.md for the measurements).
const (
	// DefaultSandboxMemory bounds each process's private writable memory.
	DefaultSandboxMemory = 2 << 30
	// DefaultSandboxOpenFiles bounds each process's open files.
	DefaultSandboxOpenFiles = 1024
	// DefaultSandboxProcesses bounds the server's processes and threads.
	DefaultSandboxProcesses = 512
)

// DefaultDenyRead are the paths a sandboxed server can never read, besides
// $HERMES_HOME (always denied, apart from the server's own install folder):
// the user's keys and cloud credentials.
var DefaultDenyRead = []string{"~/.ssh", "~/.aws", "~/.config/gcloud", "~/.gnupg", "~/.netrc"}

var knownSandboxKeys = map[string]bool{
	"enforce": true, "writable": true, "deny_read": true, "network": true, "limits": true,
}

var knownLimitKeys = map[string]bool{
	"memory": true, "cpu_seconds": true, "open_files": true, "processes": true,
}

// SandboxSettings is the sandbox: block of a server entry, with paths
// expanded (~) and defaults applied. The host adds $HERMES_HOME to DenyRead
// and the install folder to the writable paths when it starts the server.
type SandboxSettings struct {
	// Enforce refuses to start the server where the kernel cannot enforce
	// the whole sandbox (default true); false runs it with a warning.
	Enforce bool
	// Writable are paths the server may write besides its install folder
	// and a private temporary folder.
	Writable []string
	// DenyRead are paths the server can never read; DefaultDenyRead unless
	// the block lists its own.
	DenyRead []string
	// Network is "all", "none" or "hosts" (then Hosts lists them).
	Network string
	Hosts   []string
	// Limits of the server's processes; zero is no limit.
	Memory, CPUSeconds, OpenFiles, Processes uint64
	// NoInstallFolder is set for a server that has no install folder of
	// its own to write (a project's): the host does not add one.
	NoInstallFolder bool
}

// Describe is the sandbox as a few short lines, for hermes mcp test and
// install.
func (s *SandboxSettings) Describe() []string {
	if s == nil {
		return []string{"none (runs with your user's rights)"}
	}
	net := s.Network
	if net == "hosts" {
		net = "only " + strings.Join(s.Hosts, ", ")
	}
	lines := []string{
		"files: read-only; writable: " + writableBase(s) + listSuffix(resolvedPaths(s.Writable)),
		"never readable: $HERMES_HOME" + listSuffix(resolvedPaths(s.DenyRead)),
		"network: " + net,
		fmt.Sprintf("limits: memory %s, cpu %s, open files %s, processes %s",
			sizeText(s.Memory), countText(s.CPUSeconds, "s"), countText(s.OpenFiles, ""), countText(s.Processes, "")),
	}
	if !s.Enforce {
		lines = append(lines, "enforce: false (runs even where the kernel cannot enforce this)")
	}
	return lines
}

// writableBase is what a sandboxed server may always write.
func writableBase(s *SandboxSettings) string {
	if s.NoInstallFolder {
		return "private temp"
	}
	return "install folder, private temp"
}

// resolvedPaths are paths as the sandbox will use them, resolved now
// (symbolic links followed, ".." after a link removed): "/real (declared
// /as/written)" where a link leads elsewhere.
func resolvedPaths(l []string) []string {
	out := make([]string, len(l))
	for i, p := range l {
		r, err := sandboxpath.Resolve(p)
		switch {
		case err != nil:
			out[i] = p + " (cannot be resolved: " + strings.TrimPrefix(err.Error(), sandboxpath.Show(p)+": ") + ")"
		case r.Path != p:
			out[i] = r.Path + " (declared " + p + ")"
		default:
			out[i] = p
		}
	}
	return out
}

// CheckPaths resolves the sandbox's paths as the transport will at every
// start, with $HERMES_HOME home (never readable) and the install folder
// installDir ("" for none), and refuses a writable path a symbolic link
// carries into a deny path, into $HERMES_HOME, or out of the writable
// place that holds the link (sandboxpath.Check): the error, on one line,
// names the path, what it resolves to and what to do.
func (s *SandboxSettings) CheckPaths(home, installDir string) error {
	if s == nil {
		return nil
	}
	deny := append([]string{filepath.Clean(home)}, s.DenyRead...)
	if home == "" {
		deny = s.DenyRead
	}
	_, err := sandboxpath.Check(installDir, s.Writable, deny)
	return err
}

func listSuffix(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return ", " + strings.Join(l, ", ")
}

func countText(n uint64, unit string) string {
	if n == 0 {
		return "unlimited"
	}
	return strconv.FormatUint(n, 10) + unit
}

func sizeText(n uint64) string {
	switch {
	case n == 0:
		return "unlimited"
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dG", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	}
	return strconv.FormatUint(n, 10)
}

var sizeRE = lazyregexp.New(`^\s*([0-9]+)\s*([kKmMgGtT]?)[iI]?[bB]?\s*$`)

// ParseSize reads a size: a number of bytes, or a number with a K, M, G or
// T suffix (binary units; "512M", "2GiB", "1g").
func ParseSize(s string) (uint64, error) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("want a size such as 512M or 2G, got %q", s)
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[strings.ToLower(m[2])]
	if n > math.MaxUint64>>shift {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n << shift, nil
}

// hostRE is one entry of a network allow-list: a host name, optionally
// "*." for every subdomain, optionally ":port".
var hostRE = lazyregexp.New(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)

// ValidSandboxHost reports whether h is a usable network allow-list entry.
func ValidSandboxHost(h string) bool { return len(h) <= 260 && hostRE.MatchString(h) }

// sandbox reads the sandbox: block; nil when absent.
func (d *decoder) sandbox(v, raw any, unknown *[]string) *SandboxSettings {
	if v == nil {
		return nil
	}
	m := d.rawMap("sandbox", v, raw)
	if m == nil {
		return nil
	}
	for k := range m {
		if !knownSandboxKeys[k] {
			*unknown = append(*unknown, "sandbox."+k)
		}
	}
	s := &SandboxSettings{
		Enforce:   d.boolish("sandbox.enforce", m["enforce"], sub(raw, "enforce"), true),
		Memory:    DefaultSandboxMemory,
		OpenFiles: DefaultSandboxOpenFiles,
		Processes: DefaultSandboxProcesses,
	}
	paths := func(key string) []string {
		l := d.strList("sandbox."+key, m[key], sub(raw, key))
		for i, p := range l {
			p = d.expandHome(strings.TrimSpace(p))
			if !filepath.IsAbs(p) {
				d.fail("sandbox."+key, "want absolute paths (or ~/...), got %q", l[i])
				return nil
			}
			l[i] = filepath.Clean(p)
		}
		return l
	}
	s.Writable = paths("writable")
	if _, set := m["deny_read"]; set {
		s.DenyRead = paths("deny_read")
	} else {
		for _, p := range DefaultDenyRead {
			s.DenyRead = append(s.DenyRead, filepath.Clean(d.expandHome(p)))
		}
	}
	switch nv := m["network"].(type) {
	case nil:
		s.Network = "all"
	case bool:
		// network: false / true read as none / all.
		s.Network = map[bool]string{true: "all", false: "none"}[nv]
	case string:
		switch strings.ToLower(strings.TrimSpace(nv)) {
		case "all":
			s.Network = "all"
		case "none":
			s.Network = "none"
		default:
			d.fail("sandbox.network", "want all, none or a list of host names, got %s", got(sub(raw, "network")))
		}
	case []any:
		s.Network = "hosts"
		s.Hosts = d.strList("sandbox.network", nv, sub(raw, "network"))
		for _, h := range s.Hosts {
			if !ValidSandboxHost(h) {
				d.fail("sandbox.network", "want host names such as api.example.com, *.example.com or example.com:443, got %q", h)
				break
			}
		}
	default:
		d.fail("sandbox.network", "want all, none or a list of host names, got %s", got(sub(raw, "network")))
	}
	if lv := m["limits"]; lv != nil {
		rl := sub(raw, "limits")
		lm := d.rawMap("sandbox.limits", lv, rl)
		for k := range lm {
			if !knownLimitKeys[k] {
				*unknown = append(*unknown, "sandbox.limits."+k)
			}
		}
		if mv, ok := lm["memory"]; ok {
			s.Memory = d.size("sandbox.limits.memory", mv, sub(rl, "memory"))
		}
		count := func(key string, def uint64) uint64 {
			x, ok := lm[key]
			if !ok {
				return def
			}
			n := d.int("sandbox.limits."+key, x, sub(rl, key))
			if n < 0 {
				d.fail("sandbox.limits."+key, "want 0 (no limit) or a positive number, got %d", n)
				return def
			}
			return uint64(n)
		}
		s.CPUSeconds = count("cpu_seconds", 0)
		s.OpenFiles = count("open_files", s.OpenFiles)
		s.Processes = count("processes", s.Processes)
	}
	return s
}

// size reads a size (bytes, or with a K/M/G/T suffix); 0 is no limit.
func (d *decoder) size(key string, v, raw any) uint64 {
	switch t := v.(type) {
	case nil:
		return 0
	case int:
		if t >= 0 {
			return uint64(t)
		}
	case uint64:
		return t
	case string:
		n, err := ParseSize(t)
		if err == nil {
			return n
		}
	}
	d.fail(key, "want a size such as 512M or 2G (0 for no limit), got %s", got(raw))
	return 0
}

// PluginPin is the plugin: block of a server entry that runs a plugin
// shipped by its catalog entry: the binary's path and the sha256 it must
// have every time it is started.
type PluginPin struct {
	// Kind is "transport" or "auth"; Name is the plugin's name (the
	// binary is hermes-<kind>-<name>).
	Kind, Name string
	// Path is the binary's absolute path.
	Path string
	// SHA256 is the hex sha256 recorded at install.
	SHA256 string
}

var sha256RE = lazyregexp.New(`^[0-9a-fA-F]{64}$`)

// plugin reads the plugin: block; nil when absent.
func (d *decoder) plugin(v, raw any, unknown *[]string) *PluginPin {
	if v == nil {
		return nil
	}
	m := d.rawMap("plugin", v, raw)
	if m == nil {
		return nil
	}
	p := &PluginPin{
		Kind:   d.str("plugin.kind", m["kind"], sub(raw, "kind")),
		Name:   d.str("plugin.name", m["name"], sub(raw, "name")),
		Path:   d.expandHome(d.str("plugin.path", m["path"], sub(raw, "path"))),
		SHA256: strings.ToLower(d.str("plugin.sha256", m["sha256"], sub(raw, "sha256"))),
	}
	for k := range m {
		if k != "kind" && k != "name" && k != "path" && k != "sha256" {
			*unknown = append(*unknown, "plugin."+k)
		}
	}
	switch {
	case p.Kind != "transport" && p.Kind != "auth":
		d.fail("plugin.kind", "want transport or auth, got %s", got(sub(raw, "kind")))
	case !ValidName(p.Name):
		d.fail("plugin.name", "want a plugin name of letters, digits, - and _, got %s", got(sub(raw, "name")))
	case !filepath.IsAbs(p.Path):
		d.fail("plugin.path", "want the binary's absolute path, got %s", got(sub(raw, "path")))
	case filepath.Base(p.Path) != "hermes-"+p.Kind+"-"+p.Name:
		d.fail("plugin.path", "the binary must be named hermes-%s-%s, got %s", p.Kind, p.Name, filepath.Base(p.Path))
	case !sha256RE.MatchString(p.SHA256):
		d.fail("plugin.sha256", "want the 64 hex digits of the binary's sha256; run hermes mcp install again to record it")
	}
	return p
}

// ParseSandbox reads a sandbox: block given as a decoded YAML mapping (a
// catalog manifest declares one), with the same rules and messages as in
// config.yaml. A leading "~" of its paths is $HOME of env, the run's
// environment (as LoadEnv's; nil, or a run without HOME, is the
// process's home).
func ParseSandbox(m map[string]any, env func(string) (string, bool)) (*SandboxSettings, error) {
	d := &decoder{home: runHome(env)}
	var unknown []string
	s := d.sandbox(m, m, &unknown)
	if d.err != nil {
		return nil, d.err
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown sandbox keys %s; use writable, deny_read, network, limits and enforce", strings.Join(unknown, ", "))
	}
	return s, nil
}
