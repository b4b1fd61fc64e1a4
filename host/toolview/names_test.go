package toolview

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

func TestSanitizeComponent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain_name", "plain_name"},
		{"my-api", "my_api"},
		{"list-items.v2", "list_items_v2"},
		{"a--b", "a__b"},
		{"a/b c", "a_b_c"},
		{"ünï", "_n_"},
		{"日本", "__"},
		{"x\xffy", "x_y"},
		{"ABC_xyz_019", "ABC_xyz_019"},
	}
	for _, tt := range tests {
		if got := sanitizeComponent(tt.in); got != tt.want {
			t.Errorf("sanitizeComponent(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestToolName(t *testing.T) {
	tests := []struct{ server, tool, want string }{
		{"filesystem", "read_file", "mcp_filesystem_read_file"},
		{"my-api", "list-items.v2", "mcp_my_api_list_items_v2"},
		{"gh", "repos/list", "mcp_gh_repos_list"},
		{"s", "", "mcp_s_"},
		{"my_server", "tool", "mcp_my_server_tool"},
	}
	for _, tt := range tests {
		if got := ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
}

func TestToolNameClamp(t *testing.T) {
	server := "cloudflare-api"
	long := strings.Repeat("x", 80)
	full := "mcp_cloudflare_api_" + long
	got := ToolName(server, long)
	if len(got) != maxToolNameLen {
		t.Fatalf("len = %d, want %d (%q)", len(got), maxToolNameLen, got)
	}
	sum := sha256.Sum256([]byte(full))
	wantSuffix := "_" + hex.EncodeToString(sum[:])[:8]
	if !strings.HasSuffix(got, wantSuffix) {
		t.Errorf("%q does not end in %q", got, wantSuffix)
	}
	if want := full[:55] + wantSuffix; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if again := ToolName(server, long); again != got {
		t.Errorf("not deterministic: %q then %q", got, again)
	}

	// Two long names that differ only at the end stay distinct.
	a := ToolName(server, long+"_alpha")
	b := ToolName(server, long+"_beta")
	if a == b {
		t.Errorf("collision: %q", a)
	}
	if a[:55] != b[:55] {
		t.Errorf("readable prefixes differ: %q vs %q", a, b)
	}

	// Exactly 64 characters is left alone; 65 is clamped.
	tool64 := strings.Repeat("y", maxToolNameLen-len("mcp_s_"))
	if got := ToolName("s", tool64); got != "mcp_s_"+tool64 {
		t.Errorf("64-char name changed: %q", got)
	}
	if got := ToolName("s", tool64+"z"); len(got) != maxToolNameLen || got == "mcp_s_"+tool64 {
		t.Errorf("65-char name not clamped: %q", got)
	}
}

func TestToolset(t *testing.T) {
	if got := Toolset("my-api"); got != "mcp-my-api" {
		t.Errorf("Toolset = %q", got)
	}
}

func TestNameTable(t *testing.T) {
	tbl := NewNameTable("terminal", "mcp_web_search")

	// Config order: alpha before beta.
	steps := []struct {
		server, tool string
		wantName     string
		wantOK       bool
		wantWarn     string
	}{
		{"alpha", "read", "mcp_alpha_read", true, ""},
		{"web", "search", "mcp_web_search", false, "MCP server 'web': tool 'search' skipped: its name 'mcp_web_search' is already a built-in tool"},
		{"alpha", "read", "mcp_alpha_read", true, ""}, // idempotent
		{"alpha", "a-b", "mcp_alpha_a_b", true, ""},
		{"alpha", "a.b", "mcp_alpha_a_b", false, "MCP server 'alpha': tool 'a.b' skipped: its name 'mcp_alpha_a_b' is already used by tool 'a-b' of MCP server 'alpha'"},
		{"alpha_x", "y", "mcp_alpha_x_y", true, ""},
		{"alpha", "x_y", "mcp_alpha_x_y", false, "MCP server 'alpha': tool 'x_y' skipped: its name 'mcp_alpha_x_y' is already used by tool 'y' of MCP server 'alpha_x'"},
		{"beta", "read", "mcp_beta_read", true, ""},
	}
	for i, s := range steps {
		name, warn, ok := tbl.Register(s.server, s.tool)
		if name != s.wantName || ok != s.wantOK || warn != s.wantWarn {
			t.Errorf("step %d Register(%q, %q) = (%q, %q, %v), want (%q, %q, %v)",
				i, s.server, s.tool, name, warn, ok, s.wantName, s.wantWarn, s.wantOK)
		}
	}
	wantNames := []string{"mcp_alpha_read", "mcp_alpha_a_b", "mcp_alpha_x_y", "mcp_beta_read"}
	if got := tbl.names(); strings.Join(got, ",") != strings.Join(wantNames, ",") {
		t.Errorf("Names = %v, want %v", got, wantNames)
	}
	if ref, ok := tbl.lookup("mcp_alpha_a_b"); !ok || ref != (ToolRef{"alpha", "a-b"}) {
		t.Errorf("Lookup = %v, %v", ref, ok)
	}
	if _, ok := tbl.lookup("mcp_web_search"); ok {
		t.Error("built-in name resolved to an MCP tool")
	}
	if !tbl.isBuiltin("terminal") || tbl.isBuiltin("mcp_alpha_read") {
		t.Error("IsBuiltin wrong")
	}
	if got := tbl.serverNames("alpha"); len(got) != 2 {
		t.Errorf("ServerNames(alpha) = %v", got)
	}
	if warn, ok := tbl.RegisterName(ToolName("beta", UtilityReadResource), ToolRef{"beta", UtilityReadResource}); !ok || warn != "" {
		t.Errorf("RegisterName: %q %v", warn, ok)
	}
	if !tbl.unregister("mcp_beta_read") || tbl.unregister("mcp_beta_read") || tbl.unregister("terminal") {
		t.Error("Unregister wrong")
	}
	if got := tbl.removeServer("alpha"); strings.Join(got, ",") != "mcp_alpha_read,mcp_alpha_a_b" {
		t.Errorf("RemoveServer = %v", got)
	}
	// After alpha is gone its names are free again.
	if _, _, ok := tbl.Register("gamma-", "x_y"); !ok {
		t.Error("mcp_gamma__x_y refused")
	}
	if _, _, ok := tbl.Register("alpha", "a.b"); !ok {
		t.Error("freed name still refused")
	}
}

func TestNameTableZeroValue(t *testing.T) {
	var tbl NameTable
	if _, _, ok := tbl.Register("s", "t"); !ok {
		t.Fatal("zero table refused a name")
	}
	if _, _, ok := tbl.Register("s2", "t"); !ok {
		t.Fatal("distinct name refused")
	}
	if _, w, ok := tbl.Register("s", "t"); !ok || w != "" {
		t.Fatal("re-register not idempotent")
	}
}

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

func FuzzToolName(f *testing.F) {
	f.Add("filesystem", "read_file")
	f.Add("my-api", "list-items.v2")
	f.Add("", "")
	f.Add(strings.Repeat("s", 70), strings.Repeat("t", 70))
	f.Add("日本語", "\xff\xfe")
	f.Fuzz(func(t *testing.T, server, tool string) {
		got := ToolName(server, tool)
		if !toolNameRE.MatchString(got) {
			t.Fatalf("ToolName(%q, %q) = %q: not [A-Za-z0-9_]{1,64}", server, tool, got)
		}
		if got != ToolName(server, tool) {
			t.Fatal("not deterministic")
		}
		full := "mcp_" + sanitizeComponent(server) + "_" + sanitizeComponent(tool)
		if len(full) <= maxToolNameLen && got != full {
			t.Fatalf("short name changed: %q vs %q", got, full)
		}
		if len(full) > maxToolNameLen && len(got) != maxToolNameLen {
			t.Fatalf("clamped name has length %d", len(got))
		}
	})
}

func TestUniqueTools(t *testing.T) {
	tool := func(name, desc string) mcpvalue.Tool { return mcpvalue.Tool{Name: name, Description: desc} }
	clean := []mcpvalue.Tool{tool("a", ""), tool("b", "")}
	if kept, warns := UniqueTools("s", clean); &kept[0] != &clean[0] || len(kept) != 2 || warns != nil {
		t.Errorf("a clean listing was changed: %v %q", kept, warns)
	}
	in := []mcpvalue.Tool{tool("echo", "first"), tool("", "no name"), tool("add", ""), tool("echo", "second"), tool("echo", "third"), tool("", "")}
	kept, warns := UniqueTools("srv", in)
	var got []string
	for _, k := range kept {
		got = append(got, k.Name+":"+k.Description)
	}
	if strings.Join(got, ",") != "echo:first,add:" {
		t.Errorf("kept %q, want echo:first and add", got)
	}
	want := []string{
		"MCP server 'srv': tool 'echo' is listed 3 times; only the first is used, the others are skipped",
		"MCP server 'srv': 2 tool(s) without a name skipped",
	}
	if strings.Join(warns, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(want, "\n"))
	}
	if kept, warns := UniqueTools("s", nil); kept != nil || warns != nil {
		t.Errorf("nil listing: %v %v", kept, warns)
	}
}
