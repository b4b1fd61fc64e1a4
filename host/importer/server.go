package importer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// MaxServers bounds the servers read from one file: more is not a person's
// configuration.
const MaxServers = 1000

// maxNameLen bounds a Hermes name made from another client's name.
const maxNameLen = 64

// Server is one server found in another client's file, mapped to Hermes.
type Server struct {
	// Name is the Hermes name: the client's name, with every character
	// Hermes does not allow in a name turned into "-".
	Name string
	// SourceName is the name as the client's file has it.
	SourceName string
	// Source is the file it came from; Scope the part of it (ScopeLocal
	// for Claude Code's per-project servers in ~/.claude.json).
	Source Source
	Scope  string
	// Entry is what config.yaml gets: secrets replaced by ${VAR}
	// references to Secrets.
	Entry *config.ServerEntry
	// Secrets go to .env.
	Secrets []Secret
	// Notes say what was not carried over or needs doing, one line each;
	// they hold names, never values.
	Notes []string
	// Err is set when the server cannot be imported (no command or url,
	// a transport Hermes does not have); Entry is then nil.
	Err error
}

// Enabled reports whether the entry is on (the client's disabled or
// enabled key).
func (s *Server) Enabled() bool {
	if s.Entry == nil {
		return false
	}
	v, ok := s.Entry.Fields.Get("enabled")
	b, isBool := v.(bool)
	return !ok || !isBool || b
}

// Transport is "stdio", "http" or "sse" ("" when the server cannot be
// imported).
func (s *Server) Transport() string {
	if s.Entry == nil {
		return ""
	}
	if _, ok := s.Entry.Fields.Get("command"); ok {
		return "stdio"
	}
	if t, ok := s.Entry.Fields.Get("transport"); ok {
		ts, _ := t.(string)
		return ts
	}
	return "http"
}

// Target is the url, or the command and args, as config.yaml will have
// them.
func (s *Server) Target() string {
	if s.Entry == nil {
		return ""
	}
	if u, ok := s.Entry.Fields.Get("url"); ok {
		us, _ := u.(string)
		return us
	}
	c, _ := s.Entry.Fields.Get("command")
	cs, _ := c.(string)
	a, _ := s.Entry.Fields.Get("args")
	as, _ := a.([]string)
	return strings.TrimSpace(cs + " " + strings.Join(as, " "))
}

func (s *Server) notef(format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

var badNameChars = lazyregexp.New(`[^A-Za-z0-9_-]+`)

// HermesName turns another client's server name into a valid Hermes name:
// every run of characters other than letters, digits, "_" and "-" becomes
// one "-", leading and trailing "-" go, and the result is cut to 64
// characters; "server" when nothing is left.
func HermesName(name string) string {
	n := strings.Trim(badNameChars.ReplaceAllString(name, "-"), "-")
	if len(n) > maxNameLen {
		n = strings.TrimRight(n[:maxNameLen], "-")
	}
	if n == "" {
		n = "server"
	}
	return n
}

// Merge puts the servers of several files into one list: by client in the
// order of clients (the order Clients has when nil), each client's most
// specific scope first, then file order. A server whose Hermes name an
// earlier one already has is left out and returned in shadowed.
func Merge(clients []Client, lists ...[]*Server) (kept, shadowed []*Server) {
	if clients == nil {
		clients = Clients
	}
	rank := map[Client]int{}
	for i, c := range clients {
		rank[c] = i
	}
	var all []*Server
	for _, l := range lists {
		all = append(all, l...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if rank[a.Source.Client] != rank[b.Source.Client] {
			return rank[a.Source.Client] < rank[b.Source.Client]
		}
		return scopeRank(a.Scope) < scopeRank(b.Scope)
	})
	seen := map[string]bool{}
	for _, s := range all {
		if seen[s.Name] {
			shadowed = append(shadowed, s)
			continue
		}
		seen[s.Name] = true
		kept = append(kept, s)
	}
	return kept, shadowed
}

// UniqueVars renames secrets whose .env variable another server of
// servers (or an earlier secret of the same server) already uses, or that
// is reserved (a variable .env already holds for something else), adding
// _2, _3, ..., and updates the entries' references to match.
func UniqueVars(servers []*Server, reserved map[string]bool) {
	used := map[string]bool{}
	for v := range reserved {
		used[v] = true
	}
	for _, s := range servers {
		for i := range s.Secrets {
			v := s.Secrets[i].Var
			if !used[v] {
				used[v] = true
				continue
			}
			n := 2
			for used[fmt.Sprintf("%s_%d", v, n)] {
				n++
			}
			nv := fmt.Sprintf("%s_%d", v, n)
			used[nv] = true
			s.Secrets[i].Var = nv
			renameRef(s.Entry, v, nv)
		}
	}
}

// renameRef replaces ${from} with ${to} in every string of the entry.
func renameRef(e *config.ServerEntry, from, to string) {
	if e == nil {
		return
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case string:
			return strings.ReplaceAll(t, "${"+from+"}", "${"+to+"}")
		case []string:
			out := make([]string, len(t))
			for i, s := range t {
				out[i] = walk(s).(string)
			}
			return out
		case config.Map:
			out := make(config.Map, len(t))
			for i, kv := range t {
				out[i] = config.KV{Key: kv.Key, Value: walk(kv.Value)}
			}
			return out
		}
		return v
	}
	for i, kv := range e.Fields {
		e.Fields[i].Value = walk(kv.Value)
	}
}

func sortStrings(s []string) { sort.Strings(s) }
