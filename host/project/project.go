// Package project owns the MCP servers a project declares in its working
// tree: finding the project's files (hermes's own .hermes/mcp.yaml and a
// Claude Code .mcp.json, read as Claude Code writes it), reading them as
// the untrusted input a cloned repository is (each entry read once, its
// digest computed from that reading; what a project file may not grant
// itself left out or refused), the sandbox their local servers get by
// default, merging them over the user's config.yaml, and the person's
// decision on each entry, remembered per project and per entry digest
// (approvals.go) so that a changed entry is asked about again.
//
// The package starts nothing and prints nothing: the session refuses a
// project entry that is not approved (config.Server.AdmitOrigin), and the
// command line asks the person.
package project

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/importer"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// The project files, relative to the project root, in the order their
// entries win when both declare a name.
const (
	// HermesFile is hermes's own project file: an mcp_servers mapping
	// written like config.yaml's.
	HermesFile = ".hermes/mcp.yaml"
	// ClaudeFile is Claude Code's project file, read as it is.
	ClaudeFile = ".mcp.json"
)

// maxDepth bounds how many folders Find climbs.
const maxDepth = 64

// MaxServers bounds the servers one project declares.
const MaxServers = 100

// Project is what a working folder's project declares.
type Project struct {
	// Root is the folder that holds the project files.
	Root string
	// Files are the project files found, HermesFile's first.
	Files []string
	// Servers are the entries of Files, each with its Origin (approval
	// looked up) and, for a local server, the project sandbox.
	Servers []*config.Server
	// Notes are one-line remarks on the files (an entry both files
	// declare, an ignored key), names only.
	Notes []string
}

// Find returns the project root for dir and the project files it holds:
// the nearest folder, from dir upwards, that holds a project file. The
// climb stops at a repository's top (a folder holding .git), at the
// user's home folder (never a project: ~/.hermes is hermes's own home)
// and at the root of the file system. No project is "", nil.
func Find(dir, userHome string) (string, []string) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", nil
	}
	if userHome != "" {
		if h, err := filepath.Abs(userHome); err == nil {
			userHome = h
		}
	}
	for range maxDepth {
		if dir == userHome {
			return "", nil
		}
		var files []string
		for _, f := range []string{HermesFile, ClaudeFile} {
			if fi, err := os.Lstat(filepath.Join(dir, f)); err == nil && !fi.IsDir() {
				files = append(files, filepath.Join(dir, f))
			}
		}
		if len(files) > 0 {
			return dir, files
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return "", nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", nil
		}
		dir = up
	}
	return "", nil
}

// Options are what Load needs besides the working folder.
type Options struct {
	// Home is $HERMES_HOME: its .env resolves ${VAR}s, its approvals
	// file holds the decisions.
	Home string
	// UserHome is the user's home folder, where Find stops.
	UserHome string
	// Env is the run's environment (nil: the process's).
	Env func(string) (string, bool)
}

// Load finds the project of dir and reads its servers. No project is a nil
// Project and no error. A project file that cannot be read or parsed is an
// error naming it (the user's own config is not at fault, so callers may
// go on without the project and say so).
func Load(dir string, o Options) (*Project, error) {
	root, files := Find(dir, o.UserHome)
	if root == "" {
		return nil, nil
	}
	p := &Project{Root: root, Files: files}
	decisions, err := readDecisions(o.Home)
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, f := range files {
		servers, err := readFile(f, o)
		if err != nil {
			return nil, err
		}
		for _, s := range servers {
			rel, _ := filepath.Rel(root, f)
			if prev, dup := seen[s.Name]; dup {
				p.Notes = append(p.Notes, fmt.Sprintf("server '%s' of %s is also declared in %s, whose entry is used", s.Name, rel, prev))
				continue
			}
			seen[s.Name] = rel
			read := s.Origin
			s.Origin = config.Origin{File: f, Project: root, Digest: read.Digest, Approval: config.ApprovalPending, Reads: read.Reads, Literals: read.Literals}
			for _, k := range read.Ignored {
				s.Origin.Ignored = append(s.Origin.Ignored, k+": is not taken from a project file; "+whatApplies[k])
			}
			if s.Err == nil && !config.ProjectTransport(s.Transport) {
				s.Err = &config.ProjectTransportError{Server: s.Name, File: f, Transport: s.Transport}
			}
			if s.Err == nil && !config.ProjectAuth(s.Auth) {
				s.Err = &config.ProjectAuthError{Server: s.Name, File: f, Method: s.Auth}
			}
			if d, ok := decisions.lookup(root, s.Name); ok && s.Origin.Digest != "" && d.Digest == s.Origin.Digest {
				s.Origin.Approval, s.Origin.Unsandboxed = d.Decision, d.Unsandboxed
			}
			confine(s, root, o)
			p.Servers = append(p.Servers, s)
		}
	}
	if len(p.Servers) > MaxServers {
		return nil, fmt.Errorf("the project at %s declares %d servers, over the limit of %d; declare fewer", root, len(p.Servers), MaxServers)
	}
	return p, nil
}

// readFile reads one project file's servers, each with its digest, the
// ${VAR}s it reads and the keys left out in its Origin. Each entry is read
// once, by the reader of its file's format; its digest is computed from
// what that reading produced (digest), so an approval binds what runs.
func readFile(path string, o Options) ([]*config.Server, error) {
	data, err := readUntrusted(path, config.MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	if filepath.Base(path) == filepath.Base(ClaudeFile) {
		return readClaude(path, data, o)
	}
	servers, err := config.ServersFrom(path, data, o.Home, o.Env, notFromProject...)
	if err != nil {
		return nil, err
	}
	for _, s := range servers {
		identify(s, path, "yaml", nil)
	}
	return servers, nil
}

// readClaude reads a Claude Code .mcp.json: its mcpServers, each mapped as
// 'hermes mcp import' maps it. A literal secret stays where it is (the
// file is the project's, not hermes's to move): it resolves the entry's
// ${VAR} as if it were in .env, and nothing is written.
func readClaude(path string, data []byte, o Options) ([]*config.Server, error) {
	src := importer.Source{Client: importer.Claude, Path: path, Scope: importer.ScopeProject}
	found, err := importer.Parse(src, data)
	if err != nil {
		var pe *importer.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("project file %s: %s; fix the file: none of its servers is used until it reads", path, pe.Problem())
		}
		return nil, fmt.Errorf("project file %s: %w", path, err)
	}
	servers := make([]*config.Server, 0, len(found))
	for _, f := range found {
		var s *config.Server
		pending := map[string]string{}
		if f.Err != nil {
			s = &config.Server{Name: f.Name, Err: fmt.Errorf("%s: server %q: %w", path, f.SourceName, f.Err)}
		} else {
			for _, sec := range f.Secrets {
				pending[sec.Var] = sec.Value
			}
			s, err = config.LoadEntryEnv(o.Home, f.Name, f.Entry, pending, o.Env, notFromProject...)
			if err != nil {
				s = &config.Server{Name: f.Name, Err: fmt.Errorf("%s: server %q: %w", path, f.SourceName, err)}
			}
		}
		identify(s, path, "claude", pending)
		servers = append(servers, s)
	}
	return servers, nil
}

// identify sets s.Origin.Digest, Reads and Literals from what s was built
// from: s.Raw, the entry as its file's reader read it (without the keys
// left out), and pending, the values the file itself gives its ${VAR}s (a
// .mcp.json's literal secrets). An entry whose digest cannot be computed
// gets no digest and an error naming its file: it is never approved, so
// it never runs.
func identify(s *config.Server, path, kind string, pending map[string]string) {
	d, err := digest(s.Name, kind, s.Raw, pending)
	if err != nil {
		if s.Err == nil {
			s.Err = fmt.Errorf("%s: server '%s': its settings cannot be identified for approval (%v); write them as strings, numbers, lists and mappings", path, s.Name, err)
		}
		d = ""
	}
	s.Origin.Digest = d
	s.Origin.Reads = slices.DeleteFunc(varsOf(s.Raw), func(v string) bool { _, own := pending[v]; return own })
	if len(pending) > 0 {
		s.Origin.Literals = pending
	}
}

// digest identifies an entry as it is read: its name, its file's kind,
// the settings its Server was built from and the values its file gives
// its own ${VAR}s (names and values), in one canonical encoding (every
// value tagged with its type, strings with their length, mappings sorted
// by key), so that entries that differ in anything that runs differ in
// digest. A value of a type the encoding does not know is an error, never
// a guess.
func digest(name, kind string, raw map[string]any, pending map[string]string) (string, error) {
	var b bytes.Buffer
	for _, v := range []any{name, kind, raw, pending} {
		if err := canonical(&b, v); err != nil {
			return "", err
		}
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// canonical appends v's canonical encoding to b: n (nothing), t/f, s<len>:
// (a string), x<len>: (bytes), i and u (whole numbers), d (other numbers,
// shortest exact form), l<count>: (a list), m<count>: (a mapping, sorted by
// key).
func canonical(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteByte('n')
	case bool:
		if x {
			b.WriteByte('t')
		} else {
			b.WriteByte('f')
		}
	case string:
		fmt.Fprintf(b, "s%d:%s", len(x), x)
	case []byte:
		fmt.Fprintf(b, "x%d:%s", len(x), x)
	case int:
		fmt.Fprintf(b, "i%d;", x)
	case int64:
		fmt.Fprintf(b, "i%d;", x)
	case uint64:
		fmt.Fprintf(b, "u%d;", x)
	case float64:
		fmt.Fprintf(b, "d%s;", strconv.FormatFloat(x, 'g', -1, 64))
	case []any:
		fmt.Fprintf(b, "l%d:", len(x))
		for _, e := range x {
			if err := canonical(b, e); err != nil {
				return err
			}
		}
	case map[string]any:
		fmt.Fprintf(b, "m%d:", len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			canonical(b, k)
			if err := canonical(b, x[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	case map[string]string:
		fmt.Fprintf(b, "m%d:", len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			canonical(b, k)
			canonical(b, x[k])
		}
	default:
		return fmt.Errorf("a value of type %T", v)
	}
	return nil
}

// varRE finds the ${VAR} references of a value: ${VAR}, ${VAR:-default}
// and ${env:VAR}.
var varRE = lazyregexp.New(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)`)

// varsOf lists the ${VAR} names in every string of v, sorted, once each.
func varsOf(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, m := range varRE.Regexp().FindAllStringSubmatch(x, -1) {
				out = append(out, m[1])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				walk(k)
				walk(e)
			}
		}
	}
	walk(v)
	slices.Sort(out)
	return slices.Compact(out)
}

// notFromProject are the keys of an entry a project file may not set,
// left out before the entry is read: a repository cannot open its own
// sandbox, pin a transport binary of its choosing, claim to be a catalog
// install, or grant itself the model (sampling), the person's attention
// (elicitation) or a laxer drift policy (tools.on_change): those are the
// person's, and their defaults apply. (An auth: method or a transport:
// that starts a process of the file's choosing makes the entry an error
// instead: config.ProjectAuth, config.ProjectTransport.)
var notFromProject = []string{"sandbox", "plugin", "catalog", "sampling", "elicitation", "tools.on_change"}

// whatApplies says, for each key of notFromProject, what applies instead.
var whatApplies = map[string]string{
	"sandbox":         "the project sandbox applies",
	"plugin":          "plugins are found on your plugin path",
	"catalog":         "it is not a catalog install",
	"sampling":        "the default sampling policy applies",
	"elicitation":     "the default elicitation settings apply",
	"tools.on_change": "the default, warn, applies",
}

// Merge puts the project's servers over cfg's: an entry of the same name
// is replaced (its Origin says Overrides), the others are added after the
// user's. cfg is changed in place.
func Merge(cfg *config.Config, p *Project) {
	if cfg == nil || p == nil {
		return
	}
	for _, s := range p.Servers {
		if i := slices.IndexFunc(cfg.Servers, func(u *config.Server) bool { return u.Name == s.Name }); i >= 0 {
			s.Origin.Overrides = true
			cfg.Servers[i] = s
			continue
		}
		cfg.Servers = append(cfg.Servers, s)
	}
}

// confine takes from a project entry what a repository may not decide for
// the person, and gives a local server the project sandbox:
//
//   - a local server runs under Sandbox unless the person approved it
//     without (the file's own sandbox: and plugin: were left out when it
//     was read, notFromProject);
//   - a relative cwd, and a relative command path, are the project's:
//     they resolve against the root, which is also the default cwd.
func confine(s *config.Server, root string, o Options) {
	if s.Err != nil {
		return
	}
	s.Sandbox, s.Plugin = nil, nil
	if s.Command != "" && !filepath.IsAbs(s.Command) && strings.ContainsRune(s.Command, '/') {
		s.Command = filepath.Join(root, s.Command)
	}
	switch {
	case s.Cwd == "":
		s.Cwd = root
	case !filepath.IsAbs(s.Cwd):
		s.Cwd = filepath.Join(root, s.Cwd)
	}
	if s.Launch().Local && !s.Origin.Unsandboxed {
		s.Sandbox = Sandbox(root, s.Command, o.UserHome)
	}
}

// Sandbox is the sandbox a project's local server runs under by default:
// every file read-only but the project folder and the package cache of
// its runner (npx, uvx...); $HERMES_HOME and the user's keys unreadable;
// the network open (a package runner fetches its package); the default
// limits. The kernel must enforce it all (Enforce), or the server does not
// start.
func Sandbox(root, command, userHome string) *config.SandboxSettings {
	s := &config.SandboxSettings{
		Enforce:   true,
		Writable:  []string{root},
		Network:   "all",
		Memory:    config.DefaultSandboxMemory,
		OpenFiles: config.DefaultSandboxOpenFiles,
		Processes: config.DefaultSandboxProcesses,
		// A project server named like a catalog install never gets that
		// install's folder.
		NoInstallFolder: true,
	}
	for _, p := range config.DefaultDenyRead {
		if userHome != "" && strings.HasPrefix(p, "~/") {
			p = filepath.Join(userHome, p[2:])
		}
		s.DenyRead = append(s.DenyRead, p)
	}
	if userHome == "" {
		return s
	}
	for _, c := range runnerCaches[strings.TrimSuffix(filepath.Base(command), ".exe")] {
		p := filepath.Join(userHome, c)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			s.Writable = append(s.Writable, p)
		}
	}
	return s
}

// runnerCaches are the folders under the user's home a package runner
// writes to, by its command's base name.
var runnerCaches = map[string][]string{
	"npx":  {".npm"},
	"npm":  {".npm"},
	"node": {".npm"},
	"pnpm": {".local/share/pnpm", ".cache/pnpm"},
	"bunx": {".bun"},
	"bun":  {".bun"},
	"uvx":  {".cache/uv", ".local/share/uv"},
	"uv":   {".cache/uv", ".local/share/uv"},
}

// errNotRegular refuses a project file that is not a regular file (a
// symbolic link, a FIFO, a device): a repository could point one at a file
// of the user's or at something that never ends.
var errNotRegular = errors.New("is not a regular file")

// isNotExist reports a missing file.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
