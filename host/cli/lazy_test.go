package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/session"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/mark3labs/mcp-go/mcp"
)

// cachedHome is a home whose server "cached" has a fresh record of two
// tools; starting it (touch) would create the returned marker file, so a
// test sees whether anything started it. "never" has no record.
func cachedHome(t *testing.T) (home, marker string) {
	t.Helper()
	home = newHome(t)
	marker = filepath.Join(t.TempDir(), "started")
	writeConfig(t, home, "mcp_servers:\n"+
		"  cached:\n    command: touch\n    args: ["+marker+"]\n"+
		"  never:\n    command: touch\n    args: ["+marker+"-never]\n    enabled: false\n")
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	srv := cfg.Server("cached")
	rec := &offered.Record{Server: "cached", SettingsDigest: offered.SettingsDigest(srv),
		Capabilities: mcpvalue.Capabilities{Tools: json.RawMessage(`{}`)},
		Tools:        session.ToolValues([]mcp.Tool{mcp.NewTool("echo", mcp.WithDescription("echo")), mcp.NewTool("add", mcp.WithDescription("add"))})}
	if err := offered.Open(home, nil).Save(rec); err != nil {
		t.Fatal(err)
	}
	return home, marker
}

func notStarted(t *testing.T, marker, what string) {
	t.Helper()
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("%s started the cached server", what)
	}
}

// hermes tools lists a server with a fresh record from it, without
// starting it, and says so; --live connects it as before.
func TestToolsFromRecord(t *testing.T) {
	t.Parallel()
	home, marker := cachedHome(t)
	out := runHermes(t, home, "tools").must(t, 0).stdout
	for _, want := range []string{"cached (stdio) mcp-cached: 2/2 tools enabled (cached ", " ago, not running; --live connects it)", "\n        mcp_cached_echo\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("hermes tools lacks %q:\n%s", want, out)
		}
	}
	notStarted(t, marker, "hermes tools")
	// Nothing is connected, so nothing says it is ("Connecting to 2 MCP
	// server(s)..." was printed over a listing read from the records).
	if strings.Contains(out, "Connecting to") {
		t.Errorf("hermes tools from the record says it connects:\n%s", out)
	}

	var rep struct {
		Servers []struct {
			Name, State string
			Running     bool   `json:"running"`
			CachedAt    string `json:"cached_at"`
		} `json:"servers"`
	}
	out = runHermes(t, home, "tools", "--json").must(t, 0).stdout
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Servers) != 2 {
		t.Fatalf("tools --json: %v\n%s", err, out)
	}
	if s := rep.Servers[0]; s.State != "cached" || s.Running || s.CachedAt == "" {
		t.Errorf("cached = %+v", s)
	}
	notStarted(t, marker, "hermes tools --json")

	if out := runHermes(t, home, "tools", "--live").must(t, 0).stdout; !strings.Contains(out, "Connecting to 1 MCP server(s)...") {
		t.Errorf("hermes tools --live does not say it connects:\n%s", out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("hermes tools --live did not start the server: %v", err)
	}
}

// hermes mcp list says, without connecting, which servers have a record
// (and how old), which a stale one, and which never connected.
func TestListShowsRecords(t *testing.T) {
	t.Parallel()
	home, marker := cachedHome(t)
	out := runHermes(t, home, "mcp", "list").must(t, 0).stdout
	if !strings.Contains(out, "Last listed") || !regexp.MustCompile(`2 tools, [0-9]+[smhd] ago`).MatchString(out) || !strings.Contains(out, "never connected") {
		t.Errorf("mcp list:\n%s", out)
	}
	out = runHermes(t, home, "mcp", "list", "--json").must(t, 0).stdout
	var list []struct {
		Name  string
		Cache *struct {
			State     string
			Tools     int    `json:"tools_listed"`
			FetchedAt string `json:"fetched_at"`
		}
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	if c := list[0].Cache; c == nil || c.State != "fresh" || c.Tools != 2 || c.FetchedAt == "" {
		t.Errorf("cached: %+v", c)
	}
	if list[1].Cache != nil {
		t.Errorf("never: %+v", list[1].Cache)
	}
	// Other settings: the record is stale, and not used.
	writeConfig(t, home, "mcp_servers:\n  cached:\n    command: touch\n    args: ["+marker+", again]\n")
	if out := runHermes(t, home, "mcp", "list").must(t, 0).stdout; !regexp.MustCompile(`stale \(settings changed\), [0-9]+[smhd] ago`).MatchString(out) {
		t.Errorf("mcp list after a change:\n%s", out)
	}
	notStarted(t, marker, "hermes mcp list")
}

// hermes mcp call NAME <TAB> completes from the record without starting
// the server.
func TestCompletionFromRecord(t *testing.T) {
	t.Parallel()
	home, marker := cachedHome(t)
	out := runHermesEnv(t, home, []string{"HERMES_COMPLETION_TIMEOUT=10m"}, "mcp", "call", "cached", "--generate-shell-completion").must(t, 0).stdout
	if out != "echo\nadd\n" {
		t.Errorf("hermes mcp call cached <TAB> = %q, want the record's tools", out)
	}
	notStarted(t, marker, "a TAB")
}
