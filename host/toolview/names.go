package toolview

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// maxToolNameLen is the longest tool name a model provider accepts. Longer
// names are clamped by ToolName.
const maxToolNameLen = 64

// toolNamePrefix starts every MCP tool name; toolsetPrefix starts every
// server's toolset name.
const (
	toolNamePrefix = "mcp_"
	toolsetPrefix  = "mcp-"
)

// hashSuffixLen is the number of hex digits of the sha256 kept at the end of
// a clamped name.
const hashSuffixLen = 8

// sanitizeComponent replaces every character outside [A-Za-z0-9_] with an
// underscore, one underscore per character (runes, not bytes; an invalid
// UTF-8 byte counts as one character). Runs are not collapsed, so "a--b"
// becomes "a__b".
func sanitizeComponent(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ToolName returns the name the model sees for tool of server:
// "mcp_<server>_<tool>" with both parts sanitized by sanitizeComponent
// (every character outside [A-Za-z0-9_] becomes an underscore). A name
// longer than 64 characters (maxToolNameLen), the longest a model provider
// accepts, is clamped to a prefix of itself, an underscore and the first 8
// hex digits of the sha256 of the full (unclamped) name, 64 characters in
// total, so two long names that differ only at the end stay distinct.
func ToolName(server, tool string) string {
	return clampName(toolNamePrefix + sanitizeComponent(server) + "_" + sanitizeComponent(tool))
}

// clampName cuts name to maxToolNameLen as described on ToolName. name must
// be ASCII (it is, after sanitizing).
func clampName(name string) string {
	if len(name) <= maxToolNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := hex.EncodeToString(sum[:])[:hashSuffixLen]
	return name[:maxToolNameLen-hashSuffixLen-1] + "_" + suffix
}

// Toolset returns the name of the group of server's tools: "mcp-<server>",
// with the server name as configured (not sanitized).
func Toolset(server string) string {
	return toolsetPrefix + server
}

// UniqueTools returns the tools of one server's listing that can be offered
// to the model, in the server's order. A tool without a name is skipped
// (it would register as "mcp_<server>_"), and when the server lists a name
// more than once the first tool of that name is kept and the others are
// skipped: two functions with one name make a model provider refuse the
// whole request. warnings has one line for each name skipped, however
// often it was repeated, and one for the tools without a name, each naming
// the server. The input is returned as it is when nothing is skipped.
func UniqueTools(server string, tools []mcpvalue.Tool) (kept []mcpvalue.Tool, warnings []string) {
	seen := make(map[string]int, len(tools))
	unnamed, dups := 0, 0
	for _, t := range tools {
		switch {
		case t.Name == "":
			unnamed++
		case seen[t.Name] > 0:
			dups++
		}
		seen[t.Name]++
	}
	if unnamed == 0 && dups == 0 {
		return tools, nil
	}
	kept = make([]mcpvalue.Tool, 0, len(tools)-unnamed-dups)
	warned := map[string]bool{}
	for _, t := range tools {
		switch {
		case t.Name == "":
			continue
		case warned[t.Name]:
			continue
		case seen[t.Name] > 1:
			warned[t.Name] = true
			warnings = append(warnings, fmt.Sprintf("MCP server '%s': tool '%s' is listed %d times; only the first is used, the others are skipped",
				server, t.Name, seen[t.Name]))
		}
		kept = append(kept, t)
	}
	if unnamed > 0 {
		warnings = append(warnings, fmt.Sprintf("MCP server '%s': %d tool(s) without a name skipped", server, unnamed))
	}
	return kept, warnings
}

// ToolRef says where a registered tool name leads: the configured server
// name and the tool's original (unsanitized) MCP name, which is the name
// used when calling the server.
type ToolRef struct {
	Server string
	Tool   string
}

// NameTable assigns model-visible names to MCP tools and refuses
// collisions. Built-in tool names always win; among MCP servers the first
// registration wins, so registering servers in config order makes the
// outcome deterministic. A refused tool is reported with a warning and never
// overwrites an existing entry.
//
// The zero value is an empty table with no built-in names. A NameTable is
// safe for concurrent use.
type NameTable struct {
	mu       sync.RWMutex
	builtins map[string]struct{}
	entries  map[string]ToolRef
	order    []string
}

// NewNameTable returns a table in which the given built-in tool names are
// already taken.
func NewNameTable(builtins ...string) *NameTable {
	t := &NameTable{builtins: make(map[string]struct{}, len(builtins))}
	for _, b := range builtins {
		t.builtins[b] = struct{}{}
	}
	return t
}

// Grow makes room for n more names, so that registering a whole listing
// does not grow the table name by name.
func (t *NameTable) Grow(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.entries == nil {
		t.entries = make(map[string]ToolRef, n)
	}
	t.order = slices.Grow(t.order, n)
}

// Register assigns ToolName(server, tool) to the tool and returns that name.
// ok is false when the name is taken by a built-in tool or by a different
// tool registered earlier (by another server, or by the same server under a
// name that sanitizes identically); warning then says which, and the table
// is unchanged. Registering the same server and tool again returns the same
// name with ok true.
func (t *NameTable) Register(server, tool string) (name, warning string, ok bool) {
	return t.register(ToolName(server, tool), ToolRef{Server: server, Tool: tool})
}

// RegisterName is Register for a name computed elsewhere, such as a utility
// tool's name from UtilityTools; ref says what the name leads to.
func (t *NameTable) RegisterName(name string, ref ToolRef) (warning string, ok bool) {
	_, warning, ok = t.register(name, ref)
	return warning, ok
}

func (t *NameTable) register(name string, ref ToolRef) (string, string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, builtin := t.builtins[name]; builtin {
		return name, fmt.Sprintf("MCP server '%s': tool '%s' skipped: its name '%s' is already a built-in tool",
			ref.Server, ref.Tool, name), false
	}
	if prev, taken := t.entries[name]; taken {
		if prev == ref {
			return name, "", true
		}
		return name, fmt.Sprintf("MCP server '%s': tool '%s' skipped: its name '%s' is already used by tool '%s' of MCP server '%s'",
			ref.Server, ref.Tool, name, prev.Tool, prev.Server), false
	}
	if t.entries == nil {
		t.entries = make(map[string]ToolRef)
	}
	t.entries[name] = ref
	t.order = append(t.order, name)
	return name, "", true
}

// lookup returns what a registered name leads to.
func (t *NameTable) lookup(name string) (ToolRef, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ref, ok := t.entries[name]
	return ref, ok
}

// isBuiltin reports whether name is one of the table's built-in names.
func (t *NameTable) isBuiltin(name string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	_, ok := t.builtins[name]
	return ok
}

// names returns the registered MCP tool names in registration order.
func (t *NameTable) names() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return append([]string(nil), t.order...)
}

// serverNames returns the names registered for server, in registration
// order.
func (t *NameTable) serverNames(server string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []string
	for _, n := range t.order {
		if t.entries[n].Server == server {
			out = append(out, n)
		}
	}
	return out
}

// unregister removes a registered name and reports whether it was present.
// Built-in names cannot be removed.
func (t *NameTable) unregister(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.entries[name]; !ok {
		return false
	}
	delete(t.entries, name)
	for i, n := range t.order {
		if n == name {
			t.order = append(t.order[:i], t.order[i+1:]...)
			break
		}
	}
	return true
}

// removeServer removes every name registered for server and returns them in
// registration order.
func (t *NameTable) removeServer(server string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var removed []string
	kept := t.order[:0]
	for _, n := range t.order {
		if t.entries[n].Server == server {
			removed = append(removed, n)
			delete(t.entries, n)
			continue
		}
		kept = append(kept, n)
	}
	t.order = kept
	return removed
}
