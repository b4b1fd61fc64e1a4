package importer

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
)

// Client is another MCP client whose configuration can be imported.
type Client string

// The clients whose configuration files are known.
const (
	Claude Client = "claude"
	Codex  Client = "codex"
	Gemini Client = "gemini"
	Cursor Client = "cursor"
	VSCode Client = "vscode"
)

// Clients lists every known client in the order their servers are offered
// (and win a name clash) when no client is named.
var Clients = []Client{Claude, Codex, Gemini, Cursor, VSCode}

// ParseClient returns the client called s ("claude", "codex", "gemini",
// "cursor", "vscode", any case), and whether there is one.
func ParseClient(s string) (Client, bool) {
	for _, c := range Clients {
		if strings.EqualFold(s, string(c)) {
			return c, true
		}
	}
	return "", false
}

// Scopes of a source file, most specific first (a server defined in
// several scopes of one client is taken from the most specific one, as the
// client itself does).
const (
	// ScopeLocal is a per-project section of a user file (Claude Code's
	// projects map in ~/.claude.json).
	ScopeLocal = "local"
	// ScopeProject is a file in the project folder (.mcp.json,
	// .cursor/mcp.json, ...).
	ScopeProject = "project"
	// ScopeUser is a file in the home folder.
	ScopeUser = "user"
	// ScopeFile is a file named on the command line.
	ScopeFile = "file"
)

func scopeRank(s string) int {
	switch s {
	case ScopeLocal:
		return 0
	case ScopeProject:
		return 1
	case ScopeUser:
		return 2
	}
	return 3
}

// Source is one configuration file of a client.
type Source struct {
	Client Client
	// Path is the file.
	Path string
	// Scope is ScopeProject, ScopeUser or ScopeFile (Claude Code's
	// ~/.claude.json holds both user and local servers).
	Scope string
	// Dir is the project folder the file's ${workspaceFolder} and
	// ${CLAUDE_PROJECT_DIR} stand for: the working folder.
	Dir string
	// Home is the user's home folder, for ${userHome} and "~".
	Home string
}

// Sources returns the files client c reads, for the user whose home folder
// is home, working in folder cwd: project files first, then user files.
// The files need not exist.
func Sources(c Client, home, cwd string) []Source { return SourcesFrom(c, home, cwd, os.Getenv) }

// SourcesFrom is Sources with the environment (CODEX_HOME, APPDATA) read
// through getenv.
func SourcesFrom(c Client, home, cwd string, getenv func(string) string) []Source {
	mk := func(path, scope string) Source {
		return Source{Client: c, Path: path, Scope: scope, Dir: cwd, Home: home}
	}
	switch c {
	case Claude:
		return []Source{mk(filepath.Join(cwd, ".mcp.json"), ScopeProject), mk(filepath.Join(home, ".claude.json"), ScopeUser)}
	case Codex:
		codexHome := getenv("CODEX_HOME")
		if codexHome == "" {
			codexHome = filepath.Join(home, ".codex")
		}
		return []Source{mk(filepath.Join(cwd, ".codex", "config.toml"), ScopeProject), mk(filepath.Join(codexHome, "config.toml"), ScopeUser)}
	case Gemini:
		return []Source{mk(filepath.Join(cwd, ".gemini", "settings.json"), ScopeProject), mk(filepath.Join(home, ".gemini", "settings.json"), ScopeUser)}
	case Cursor:
		return []Source{mk(filepath.Join(cwd, ".cursor", "mcp.json"), ScopeProject), mk(filepath.Join(home, ".cursor", "mcp.json"), ScopeUser)}
	case VSCode:
		return []Source{mk(filepath.Join(cwd, ".vscode", "mcp.json"), ScopeProject), mk(vscodeUserFile(home, getenv), ScopeUser)}
	}
	return nil
}

// vscodeUserFile is VS Code's user-profile mcp.json.
func vscodeUserFile(home string, getenv func(string) string) string {
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Code", "User", "mcp.json")
	case "windows":
		if d := getenv("APPDATA"); d != "" {
			return filepath.Join(d, "Code", "User", "mcp.json")
		}
	}
	return filepath.Join(home, ".config", "Code", "User", "mcp.json")
}

// ReadFile reads a client's file, refusing one over config.MaxConfigBytes
// (a *config.TooLargeError) without reading it all. A missing file is an
// error that matches fs.ErrNotExist.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a config file; name the file itself", path)
	}
	if fi.Mode().IsRegular() && fi.Size() > config.MaxConfigBytes {
		return nil, &config.TooLargeError{Path: path, Size: fi.Size(), Limit: config.MaxConfigBytes}
	}
	data, err := io.ReadAll(io.LimitReader(f, config.MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > config.MaxConfigBytes {
		return nil, &config.TooLargeError{Path: path, Size: config.MaxConfigBytes + 1, Limit: config.MaxConfigBytes}
	}
	return data, nil
}

// Read reads and parses src. A missing file gives no servers and an
// error matching fs.ErrNotExist.
func Read(src Source) ([]*Server, error) {
	data, err := ReadFile(src.Path)
	if err != nil {
		return nil, err
	}
	return Parse(src, data)
}

// Detect tells which client's format data (read from path) is in: TOML
// (by the .toml extension or by content) is Codex's; JSON with a servers
// object is VS Code's; JSON with a projects map, or a file named
// .claude.json, is Claude Code's; JSON whose servers use Gemini CLI's own
// keys (httpUrl, trust, includeTools, excludeTools), or a settings.json
// under .gemini, is Gemini CLI's; a file under .cursor is Cursor's; any
// other mcpServers file is read like Claude Code's .mcp.json, the shape
// the others share.
func Detect(path string, data []byte) (Client, error) {
	base := strings.ToLower(filepath.Base(path))
	if strings.HasSuffix(base, ".toml") {
		return Codex, nil
	}
	top, err := topObject(data)
	if err != nil {
		if looksTOML(data) {
			return Codex, nil
		}
		return "", fmt.Errorf("%s is neither JSON nor TOML (%s); pass a client's MCP config file", path, err)
	}
	_, hasMCP := top["mcpServers"]
	_, hasServers := top["servers"]
	switch {
	case !hasMCP && hasServers:
		return VSCode, nil
	case !hasMCP && !hasServers:
		if m, ok := top["mcp"]; ok {
			if inner, err := topObject(m); err == nil {
				if _, ok := inner["servers"]; ok {
					return VSCode, nil
				}
			}
		}
		if _, ok := top["projects"]; ok {
			return Claude, nil
		}
		return "", fmt.Errorf("%s has no mcpServers or servers object; pass a client's MCP config file", path)
	}
	if base == ".claude.json" {
		return Claude, nil
	}
	if _, ok := top["projects"]; ok {
		return Claude, nil
	}
	dir := filepath.Base(filepath.Dir(path))
	if dir == ".gemini" || usesGeminiKeys(top["mcpServers"]) {
		return Gemini, nil
	}
	if dir == ".cursor" {
		return Cursor, nil
	}
	return Claude, nil
}

// looksTOML reports whether data starts (after comments) with a TOML
// table header or key.
func looksTOML(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "[{") || strings.Contains(t, "=")
	}
	return false
}
