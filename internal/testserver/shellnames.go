package testserver

import "strings"

// ShellToolNames are the tool names a server lists under --shell-names
// (hostile, stdio): each is shell code that, if a shell ever ran it, would
// create a file whose name starts with "pwned" in the shell's working
// folder, or is text a terminal or a shell would act on (a glob, a tilde, a
// variable, control characters, a line break), or is longer than a tool
// name may be. A client must never run them, and must not offer them where
// a shell reads them as words.
var ShellToolNames = []string{
	"a$(touch pwned1)b",
	"a`touch pwned2`b",
	"c;touch pwned3",
	"d'$(touch pwned4)'",
	`e"$(touch pwned5)"`,
	"f\n$(touch pwned6)",
	"$(touch pwned7)",
	"g|touch pwned8",
	"h&&touch pwned9",
	"i$(touch${IFS}pwned10)",
	`m\$(touch pwned11)`,
	"n\r$(touch pwned12)",
	"*",
	"~root",
	"$HOME",
	"k l",
	"j\x1b]2;pwned\x07",
	"t\u00f6\u00f6l",
	// Valid characters, but longer than the 128 a tool name may have.
	"long_" + strings.Repeat("v", 128),
}

// ShellSafeToolNames are the tools with plain names that --shell-names
// lists beside ShellToolNames (the hostile server's own attack, echo and
// burst_stats are listed too).
var ShellSafeToolNames = []string{"safe_tool", "safe-tool-2"}

// shellTools is the part of tools/list that --shell-names adds.
func (h *hostile) shellTools() []any {
	if !h.cfg.Hostile.ShellNames {
		return nil
	}
	obj := map[string]any{"type": "object"}
	var out []any
	for _, n := range append(append([]string(nil), ShellToolNames...), ShellSafeToolNames...) {
		out = append(out, map[string]any{"name": n, "description": "A tool with a chosen name.", "inputSchema": obj})
	}
	return out
}
