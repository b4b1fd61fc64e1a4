package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
)

// Origin says where a server entry was declared: config.yaml (the zero
// Origin) or a project file in the working tree (.hermes/mcp.yaml, or a
// Claude Code .mcp.json), which the host package project reads and merges
// over config.yaml.
type Origin struct {
	// File is the project file that declared the entry; "" for config.yaml.
	File string
	// Project is the project's root folder; "" for config.yaml.
	Project string
	// Digest identifies the entry as hermes read it from the project file
	// (sha256, hex): an approval holds for this digest only, so a changed
	// entry is asked about again. "" for an entry that cannot be
	// identified, which is in error and gets no decision.
	Digest string
	// Approval is the person's decision on a project entry for this
	// digest: ApprovalPending, ApprovalApproved or ApprovalRejected.
	Approval string
	// Unsandboxed is set when the person approved the entry to run
	// without the sandbox project entries get by default.
	Unsandboxed bool
	// Overrides is set when the entry replaces an entry of the same name
	// in config.yaml for this project.
	Overrides bool
	// Reads are the ${VAR}s the entry as written reads from the run's
	// environment and .env, sorted: what it could send to its server.
	Reads []string
	// Ignored lists what the project file set and the host did not take
	// from it (keys a repository may not set, such as sandbox: or plugin:),
	// one line each, names only.
	Ignored []string
	// Literals are the values the project file itself gives the ${VAR}s
	// hermes named for its literal secrets, by name: a .mcp.json header
	// "Bearer abc..." is read as "Bearer ${MCP_<NAME>_AUTHORIZATION}" with
	// the literal here. No such variable exists anywhere else, so what
	// shows the entry shows the file's value (Server.Written), masked.
	// They are secrets: never print them unmasked.
	Literals map[string]string
}

// Decisions on a project entry (Origin.Approval).
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
)

// FromProject reports whether the entry was declared by a project file.
func (s *Server) FromProject() bool { return s != nil && s.Origin.File != "" }

// OriginText is where the entry comes from, for list and get: "config.yaml"
// or the project file's path relative to the project root.
func (s *Server) OriginText() string {
	if !s.FromProject() {
		return File
	}
	if rel, err := filepath.Rel(s.Origin.Project, s.Origin.File); err == nil {
		return rel
	}
	return s.Origin.File
}

// Written is the entry's settings as its file writes them: Raw, with the
// ${VAR}s that stand for a project file's own literal values
// (Origin.Literals) replaced by those values again. It is a copy when
// there are any, else Raw itself. Values in it may be secrets: mask them
// before showing them.
func (s *Server) Written() map[string]any {
	if len(s.Origin.Literals) == 0 {
		return s.Raw
	}
	out, _ := putLiterals(s.Raw, s.Origin.Literals).(map[string]any)
	return out
}

// putLiterals returns a copy of v with every ${VAR} of lit in its strings
// replaced by lit[VAR].
func putLiterals(v any, lit map[string]string) any {
	switch t := v.(type) {
	case string:
		for name, value := range lit {
			t = strings.ReplaceAll(t, "${"+name+"}", value)
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = putLiterals(x, lit)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = putLiterals(x, lit)
		}
		return out
	}
	return v
}

// StateKey names what hermes keeps about the server by name (what it
// offered, its approved tool definitions, allow-always grants): its Name
// for a config.yaml entry; for a project's, Name@ and 12 hex digits of its
// project folder's hash, which no config.yaml name can be, so that a
// project's server never takes on the state of one of the user's, nor of
// another project's of the same name.
func (s *Server) StateKey() string {
	if !s.FromProject() {
		return s.Name
	}
	sum := sha256.Sum256([]byte(s.Origin.Project))
	return s.Name + "@" + hex.EncodeToString(sum[:6])
}

// ValidStateKey reports whether k is a StateKey: a valid name, or one
// followed by @ and 12 lower-case hex digits.
func ValidStateKey(k string) bool {
	name, sum, found := strings.Cut(k, "@")
	if !found {
		return ValidName(k)
	}
	if !ValidName(name) || len(sum) != 12 {
		return false
	}
	for _, c := range sum {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ProjectAuth reports whether a project file may name the auth: method
// (lower-cased, as Server.Auth): none, or oauth, hermes's own plugin
// (hermes-auth-oauth), which keeps a project's tokens apart from the
// user's. Any other method starts a process of the file's choosing with
// the person's rights: exec runs the command of its exec: block, and a
// plugin's name picks the binary hermes-auth-<name> and hands it the
// file's block of settings. Such an entry belongs in config.yaml, where
// the person wrote it.
func ProjectAuth(method string) bool { return method == "" || method == "oauth" }

// ProjectAuthError is the refusal of a project entry whose auth: method a
// project file may not name (ProjectAuth); it names the file and says
// how the person adds the server themselves.
type ProjectAuthError struct {
	Server, File, Method string
}

func (e *ProjectAuthError) Error() string {
	return fmt.Sprintf("%s: server '%s': auth: %s starts a command of the project's choosing with your rights, so hermes does not take it from a project file; "+
		"if you trust it, add the server to your config.yaml with: hermes mcp add %s --url <url> --auth %s", e.File, e.Server, e.Method, e.Server, e.Method)
}

// ProjectTransport reports whether a project file may name the transport
// t (as written under transport:, or as Server.Transport): none, or one of
// the built-in transports TransportName knows (stdio, http however it is
// spelled, sse), which hermes's own plugins serve. Any other name picks
// the binary hermes-transport-<name> from the plugin search path and hands
// it the file's settings: the repository would choose what runs with the
// person's rights. Such an entry belongs in config.yaml, where the person
// wrote it.
func ProjectTransport(t string) bool {
	if strings.TrimSpace(t) == "" {
		return true
	}
	_, builtin := TransportName(t)
	return builtin
}

// ProjectTransportError is the refusal of a project entry whose
// transport: a project file may not name (ProjectTransport); it names the
// file and says how the person adds the server themselves.
type ProjectTransportError struct {
	Server, File, Transport string
}

func (e *ProjectTransportError) Error() string {
	return fmt.Sprintf("%s: server '%s': transport: %s starts the plugin hermes-transport-%s, a program of the project's choosing, with your rights, so hermes does not take it from a project file; "+
		"if you trust it, add the server to your config.yaml with: hermes mcp add %s --transport %s --url <url>", e.File, e.Server, e.Transport, e.Transport, e.Server, e.Transport)
}

// NotApprovedError is the refusal to start a project entry the person has
// not approved (or has rejected) for its current digest.
type NotApprovedError struct {
	Server, File string
	Rejected     bool
}

func (e *NotApprovedError) Error() string {
	if e.Rejected {
		return fmt.Sprintf("project server '%s' (from %s) was rejected; to run it after all: hermes mcp approve %s", e.Server, e.File, e.Server)
	}
	return fmt.Sprintf("project server '%s' (from %s) has not been approved to run; review and approve it with: hermes mcp approve %s", e.Server, e.File, e.Server)
}

// AdmitOrigin is nil when the entry may start as far as its origin goes: a
// config.yaml entry always, a project entry once approved for its digest.
func (s *Server) AdmitOrigin() error {
	if !s.FromProject() || s.Origin.Approval == ApprovalApproved {
		return nil
	}
	return &NotApprovedError{Server: s.Name, File: s.OriginText(), Rejected: s.Origin.Approval == ApprovalRejected}
}

// ServersFrom reads the mcp_servers entries of src, the content of a file
// at path written like config.yaml (a project's .hermes/mcp.yaml), with
// Load's defaults, validation and ${VAR} interpolation (the run's
// environment through env, then <home>/.env). Nothing else of the file is
// read. An entry's keys named in ignore ("sandbox", or "tools.on_change"
// for a key of a block) are left out before it is read (they are listed
// in its Origin.Ignored, so that the caller can say so), so that its Raw
// holds only what was read. A file that does not parse is an error; a bad
// entry has Err set.
func ServersFrom(path string, src []byte, home string, env func(string) (string, bool), ignore ...string) ([]*Server, error) {
	servers, err := decodeServers(path, src)
	if err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, nil
	}
	dotenv, err := LoadDotEnv(home)
	if err != nil {
		return nil, err
	}
	lookup := varLookupEnv(env, dotenv)
	envPath := homedir.Dir(home).DotEnv()
	out := make([]*Server, 0, len(servers))
	for _, it := range servers {
		value, dropped := dropKeys(it.Value, ignore)
		s := buildServer(keyString(it.Key), value, lookup, envPath, env)
		s.Origin.Ignored = dropped
		out = append(out, s)
	}
	return out, nil
}

// dropKeys returns the decoded entry value without the keys named in
// ignore ("key", or "block.key" for a key of a mapping under block) and
// the names of those it held, in ignore's order. value itself is left as
// it is.
func dropKeys(value any, ignore []string) (any, []string) {
	ms, ok := value.(yaml.MapSlice)
	if !ok || len(ignore) == 0 {
		return value, nil
	}
	kept := slices.Clone(ms)
	var dropped []string
	for _, key := range ignore {
		block, sub, nested := strings.Cut(key, ".")
		i := slices.IndexFunc(kept, func(kv yaml.MapItem) bool { return keyString(kv.Key) == block })
		if i < 0 {
			continue
		}
		if !nested {
			kept = slices.Delete(kept, i, i+1)
			dropped = append(dropped, key)
			continue
		}
		inner, ok := kept[i].Value.(yaml.MapSlice)
		if !ok {
			continue
		}
		j := slices.IndexFunc(inner, func(kv yaml.MapItem) bool { return keyString(kv.Key) == sub })
		if j < 0 {
			continue
		}
		kept[i] = yaml.MapItem{Key: kept[i].Key, Value: slices.Delete(slices.Clone(inner), j, j+1)}
		dropped = append(dropped, key)
	}
	return kept, dropped
}
