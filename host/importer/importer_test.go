package importer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
)

// install copies a fixture to dst (creating folders), replacing
// PROJECT_DIR with project.
func install(t *testing.T, fixture, dst, project string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte(strings.ReplaceAll(string(b), "PROJECT_DIR", project)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// readAll reads every existing source of c.
func readAll(t *testing.T, c Client, home, cwd string) []*Server {
	t.Helper()
	var lists [][]*Server
	for _, src := range Sources(c, home, cwd) {
		l, err := Read(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		lists = append(lists, l)
	}
	kept, _ := Merge([]Client{c}, lists...)
	return kept
}

func byName(t *testing.T, list []*Server, name string) *Server {
	t.Helper()
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no server %q in %v", name, names(list))
	return nil
}

func names(list []*Server) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Name)
	}
	return out
}

// fields returns the entry as plain values for comparison.
func fields(s *Server) map[string]any {
	out := map[string]any{}
	for _, kv := range s.Entry.Fields {
		out[kv.Key] = plainValue(kv.Value)
	}
	return out
}

func plainValue(v any) any {
	if m, ok := v.(config.Map); ok {
		out := map[string]any{}
		for _, kv := range m {
			out[kv.Key] = plainValue(kv.Value)
		}
		return out
	}
	return v
}

func secretVars(s *Server) map[string]string {
	out := map[string]string{}
	for _, x := range s.Secrets {
		out[x.Var] = x.Value
	}
	return out
}

func hasNote(s *Server, sub string) bool {
	for _, n := range s.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// Claude Code: .mcp.json (project) and ~/.claude.json (this project's
// local servers, then the user's); local wins over project over user, a
// secret env value and X-API-Key go to .env, ${VAR} references stay, other
// projects' servers are not read.
func TestImportClaudeCode(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	install(t, "claude/mcp.json", filepath.Join(cwd, ".mcp.json"), cwd)
	install(t, "claude/claude.json", filepath.Join(home, ".claude.json"), cwd)
	list := readAll(t, Claude, home, cwd)
	if got, want := names(list), []string{"postgres", "notion", "github", "sentry", "asana", "boldsign", "memory"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("servers %v, want %v", got, want)
	}
	gh := byName(t, list, "github")
	if gh.Scope != ScopeProject || gh.Source.Path != filepath.Join(cwd, ".mcp.json") {
		t.Errorf("github from %s (%s); want the project's .mcp.json, which wins over the user's", gh.Source.Path, gh.Scope)
	}
	if got, want := fields(gh), map[string]any{
		"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-github"},
		"env": map[string]any{"GITHUB_PERSONAL_ACCESS_TOKEN": "${MCP_GITHUB_GITHUB_PERSONAL_ACCESS_TOKEN}"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("github entry %v\nwant %v", got, want)
	}
	if got := secretVars(gh); got["MCP_GITHUB_GITHUB_PERSONAL_ACCESS_TOKEN"] != "ghp_EXAMPLEexampleEXAMPLEexample00000000" || len(got) != 1 {
		t.Errorf("github secrets %v", got)
	}
	if got := fields(byName(t, list, "sentry")); !reflect.DeepEqual(got, map[string]any{"url": "https://mcp.sentry.dev/mcp"}) {
		t.Errorf("sentry %v", got)
	}
	asana := byName(t, list, "asana")
	if got := fields(asana); !reflect.DeepEqual(got, map[string]any{"url": "https://mcp.asana.com/sse", "transport": "sse", "headers": map[string]any{"Authorization": "Bearer ${ASANA_TOKEN}"}}) {
		t.Errorf("asana %v", got)
	}
	if len(asana.Secrets) != 0 {
		t.Errorf("a ${VAR} reference was taken for a secret: %v", asana.Secrets)
	}
	bs := byName(t, list, "boldsign")
	if got := fields(bs)["headers"]; !reflect.DeepEqual(got, map[string]any{"X-API-Key": "${MCP_BOLDSIGN_X_API_KEY}", "X-Region": "us"}) {
		t.Errorf("boldsign headers %v", got)
	}
	pg := byName(t, list, "postgres")
	if pg.Scope != ScopeLocal {
		t.Errorf("postgres scope %s", pg.Scope)
	}
	if got := secretVars(pg); got["MCP_POSTGRES_DATABASE_URL"] != "postgresql://app:hunter2pass@db.internal:5432/app" {
		t.Errorf("a URL with a password stayed in config.yaml: %v", got)
	}
	notion := byName(t, list, "notion")
	if got := fields(notion); !reflect.DeepEqual(got, map[string]any{"url": "https://mcp.notion.com/mcp", "auth": "oauth", "oauth": map[string]any{"client_id": "notion-client-123", "redirect_port": 8080}}) {
		t.Errorf("notion %v", got)
	}
	if !hasNote(notion, "headersHelper") {
		t.Errorf("notion notes %q lack headersHelper", notion.Notes)
	}
	for _, s := range list {
		if s.Name == "elsewhere" {
			t.Error("another project's server was read")
		}
	}
}

// Codex: [mcp_servers.NAME] tables in the project's .codex/config.toml and
// ~/.codex/config.toml; env_vars, bearer_token_env_var and
// env_http_headers become ${VAR} references, timeouts and tool lists map,
// enabled = false stays off, a secret env value goes to .env.
func TestImportCodex(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	t.Setenv("CODEX_HOME", "")
	install(t, "codex/config.toml", filepath.Join(home, ".codex", "config.toml"), cwd)
	list := readAll(t, Codex, home, cwd)
	if got, want := names(list), []string{"context7", "figma", "linear", "search"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("servers %v, want %v", got, want)
	}
	if got, want := fields(byName(t, list, "context7")), map[string]any{
		"command": "npx", "args": []string{"-y", "@upstash/context7-mcp"},
		"env":             map[string]any{"LOG_LEVEL": "info", "CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"},
		"connect_timeout": 20 * time.Second, "timeout": 120 * time.Second,
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("context7 %v\nwant %v", got, want)
	}
	if got, want := fields(byName(t, list, "figma")), map[string]any{
		"url":     "https://mcp.figma.com/mcp",
		"headers": map[string]any{"Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}", "X-Figma-Region": "us-east-1"},
		"tools":   map[string]any{"include": []string{"get_code", "get_image"}},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("figma %v\nwant %v", got, want)
	}
	linear := byName(t, list, "linear")
	if linear.Enabled() || fields(linear)["headers"].(map[string]any)["X-Linear-Key"] != "${LINEAR_API_KEY}" {
		t.Errorf("linear %v", fields(linear))
	}
	search := byName(t, list, "search")
	if got := fields(search)["env"]; !reflect.DeepEqual(got, map[string]any{"SEARCH_API_KEY": "${MCP_SEARCH_SEARCH_API_KEY}", "SEARCH_REGION": "eu"}) {
		t.Errorf("search env %v", got)
	}
	if secretVars(search)["MCP_SEARCH_SEARCH_API_KEY"] != "s3cr3t-search-key-value" || !hasNote(search, "required") {
		t.Errorf("search secrets %v notes %q", secretVars(search), search.Notes)
	}
	if got := fields(search)["tools"]; !reflect.DeepEqual(got, map[string]any{"exclude": []string{"delete_index"}}) {
		t.Errorf("search tools %v", got)
	}
}

// Gemini CLI: settings.json with comments and trailing commas; url is SSE
// and httpUrl streamable HTTP, timeout is milliseconds, $VAR becomes
// ${VAR}, includeTools/excludeTools become the tools filter, an oauth
// block becomes auth: oauth with its secret in .env, trust is noted.
func TestImportGemini(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	install(t, "gemini/settings.json", filepath.Join(home, ".gemini", "settings.json"), cwd)
	list := readAll(t, Gemini, home, cwd)
	if got, want := names(list), []string{"pythonTools", "httpServer", "sseServer", "oauthServer", "nodeServer"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("servers %v, want %v", got, want)
	}
	py := byName(t, list, "pythonTools")
	if got, want := fields(py), map[string]any{
		"command": "python", "args": []string{"-m", "my_mcp_server", "--port", "8080"},
		"env": map[string]any{"DATABASE_URL": "${DB_CONNECTION_STRING}", "API_KEY": "${EXTERNAL_API_KEY}"},
		"cwd": filepath.Join(cwd, "mcp-servers/python"), "timeout": 15 * time.Second,
		"tools": map[string]any{"include": []string{"safe_tool", "file_reader"}},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("pythonTools %v\nwant %v", got, want)
	}
	if !hasNote(py, "trust") || len(py.Secrets) != 0 {
		t.Errorf("pythonTools notes %q secrets %v", py.Notes, py.Secrets)
	}
	hs := byName(t, list, "httpServer")
	if got := fields(hs); !reflect.DeepEqual(got, map[string]any{"url": "http://localhost:3000/mcp", "headers": map[string]any{"Authorization": "Bearer ${MCP_HTTPSERVER_AUTHORIZATION}"}, "timeout": 5 * time.Second}) {
		t.Errorf("httpServer %v", got)
	}
	if secretVars(hs)["MCP_HTTPSERVER_AUTHORIZATION"] != "gmn-token-0123456789abcdef" {
		t.Errorf("httpServer secrets %v", secretVars(hs))
	}
	if got := fields(byName(t, list, "sseServer")); !reflect.DeepEqual(got, map[string]any{"url": "http://localhost:8080/sse", "transport": "sse"}) {
		t.Errorf("sseServer %v", got)
	}
	oa := byName(t, list, "oauthServer")
	if got := fields(oa); !reflect.DeepEqual(got, map[string]any{"url": "https://api.example.com/sse", "transport": "sse", "auth": "oauth",
		"oauth": map[string]any{"client_id": "your-client-id", "client_secret": "${MCP_OAUTHSERVER_CLIENT_SECRET}", "scope": "read write"}}) {
		t.Errorf("oauthServer %v", got)
	}
	if secretVars(oa)["MCP_OAUTHSERVER_CLIENT_SECRET"] != "your-client-secret-value" {
		t.Errorf("oauthServer secrets %v", secretVars(oa))
	}
	if got := fields(byName(t, list, "nodeServer"))["tools"]; !reflect.DeepEqual(got, map[string]any{"exclude": []string{"dangerous_tool", "file_deleter"}}) {
		t.Errorf("nodeServer tools %v", got)
	}
}

// Cursor: ~/.cursor/mcp.json and .cursor/mcp.json; ${workspaceFolder} is
// the project folder, ${env:VAR} stays, disabled: true is enabled: false,
// envFile is noted.
func TestImportCursor(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	install(t, "cursor/mcp.json", filepath.Join(cwd, ".cursor", "mcp.json"), cwd)
	list := readAll(t, Cursor, home, cwd)
	if got := fields(byName(t, list, "apilayer")); !reflect.DeepEqual(got, map[string]any{"url": "https://mcp.apilayer.com/mcp", "headers": map[string]any{"Authorization": "Bearer ${env:APILAYER_MCP_TOKEN}"}}) {
		t.Errorf("apilayer %v", got)
	}
	lap := byName(t, list, "lapras")
	if got := fields(lap); !reflect.DeepEqual(got, map[string]any{"command": "node", "args": []string{cwd + "/dist/server.js"}, "env": map[string]any{"LAPRAS_API_KEY": "${MCP_LAPRAS_LAPRAS_API_KEY}"}}) {
		t.Errorf("lapras %v", got)
	}
	if !hasNote(lap, "envFile") {
		t.Errorf("lapras notes %q", lap.Notes)
	}
	if byName(t, list, "old-server").Enabled() {
		t.Error("disabled: true was imported enabled")
	}
}

// VS Code: .vscode/mcp.json with comments, inputs and trailing commas;
// ${input:id} becomes ${MCP_<NAME>_<ID>} with a note naming the input's
// description, a name Hermes does not allow is turned into one it does.
func TestImportVSCode(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	install(t, "vscode/mcp.json", filepath.Join(cwd, ".vscode", "mcp.json"), cwd)
	list := readAll(t, VSCode, home, cwd)
	if got, want := names(list), []string{"Perplexity", "fetch", "github", "my-remote-server"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("servers %v, want %v", got, want)
	}
	px := byName(t, list, "Perplexity")
	if got := fields(px)["env"]; !reflect.DeepEqual(got, map[string]any{"PERPLEXITY_API_KEY": "${MCP_PERPLEXITY_PERPLEXITY_KEY}"}) {
		t.Errorf("Perplexity env %v", got)
	}
	if !hasNote(px, `set MCP_PERPLEXITY_PERPLEXITY_KEY in .env ("Perplexity API Key")`) {
		t.Errorf("Perplexity notes %q", px.Notes)
	}
	rs := byName(t, list, "my-remote-server")
	if rs.SourceName != "my.remote server" || fields(rs)["transport"] != "sse" {
		t.Errorf("remote %q %v", rs.SourceName, fields(rs))
	}
}

func TestImportDetect(t *testing.T) {
	for _, c := range []struct {
		fixture, name string
		want          Client
	}{
		{"claude/mcp.json", "servers.json", Claude},
		{"claude/claude.json", "backup.json", Claude},
		{"codex/config.toml", "config.toml", Codex},
		{"codex/config.toml", "codex-config", Codex},
		{"gemini/settings.json", "settings.json", Gemini},
		{"cursor/mcp.json", "mcp.json", Claude},
		{"vscode/mcp.json", "mcp.json", VSCode},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Detect(filepath.Join("x", c.name), data)
		if err != nil || got != c.want {
			t.Errorf("Detect(%s as %s) = %v, %v; want %v", c.fixture, c.name, got, err, c.want)
		}
	}
	if c, _ := Detect("/p/.cursor/mcp.json", []byte(`{"mcpServers":{}}`)); c != Cursor {
		t.Errorf("a file under .cursor: %v", c)
	}
	if _, err := Detect("x.json", []byte("not a config")); err == nil || !strings.Contains(err.Error(), "x.json") {
		t.Errorf("garbage: %v", err)
	}
	if _, err := Detect("x.json", []byte(`{"theme":"dark"}`)); err == nil || !strings.Contains(err.Error(), "no mcpServers") {
		t.Errorf("no servers: %v", err)
	}
}

func TestImportIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_PERSONAL_ACCESS_TOKEN": true, "API_KEY": true, "X-Api-Key": true, "Authorization": true, "DB_PASSWORD": true,
		"CLIENT_SECRET": true, "OPENAI_APIKEY": true, "accessToken": true, "Cookie": true, "AWS_SECRET_ACCESS_KEY": true,
		"GIT_AUTHOR_NAME": false, "KEYBOARD": false, "LOG_LEVEL": false, "PATH": false, "X-Region": false, "DEBUG": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestImportStripJSONC(t *testing.T) {
	in := `{
  // a comment with "quotes" and a , comma
  "a": "http://x/y // not a comment", /* block
  comment */ "b": [1, 2,],
  "c": {"d": "\"/*\"",},
}`
	o, err := parseObject(stripJSONC([]byte(in)))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.keys, ","); got != "a,b,c" || string(o.vals["a"]) != `"http://x/y // not a comment"` || string(o.vals["c"]) != `{"d": "\"/*\""}` {
		t.Errorf("keys %s, a %s, c %s", got, o.vals["a"], o.vals["c"])
	}
}

// FromJSON reads one server in the shared shape, for hermes mcp add-json;
// a whole file is refused with a pointer to import.
func TestImportFromJSON(t *testing.T) {
	s, err := FromJSON("weather", []byte(`{"type":"http","url":"https://w.example/mcp","headers":{"Authorization":"Bearer tok-123456789"}}`), "/h", "/p")
	if err != nil || s.Err != nil {
		t.Fatal(err, s.Err)
	}
	if got := fields(s); !reflect.DeepEqual(got, map[string]any{"url": "https://w.example/mcp", "headers": map[string]any{"Authorization": "Bearer ${MCP_WEATHER_AUTHORIZATION}"}}) {
		t.Errorf("%v", got)
	}
	if _, err := FromJSON("x", []byte(`{"mcpServers":{}}`), "/h", "/p"); err == nil || !strings.Contains(err.Error(), "hermes mcp import --from FILE") {
		t.Errorf("a whole file: %v", err)
	}
	if _, err := FromJSON("x", []byte(`[1]`), "/h", "/p"); err == nil {
		t.Error("a list was taken for a server")
	}
	for in, want := range map[string]string{
		`{"args":["x"]}`:                               "neither a command nor a url",
		`{"command":"x","url":"https://h/"}`:           "both command and url",
		`{"type":"ws","url":"wss://h/"}`:               `type "ws"`,
		`{"type":"http","command":"x"}`:                "needs a url",
		`{"command":"x","env":{"BAD NAME":"1"},"z":1}`: "",
	} {
		s, err := FromJSON("x", []byte(in), "/h", "/p")
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == "" && s.Err != nil:
			t.Errorf("%s: %v", in, s.Err)
		case want == "":
			if !hasNote(s, `env "BAD NAME"`) || !hasNote(s, "key z") {
				t.Errorf("%s: notes %q", in, s.Notes)
			}
		case s.Err == nil || !strings.Contains(s.Err.Error(), want):
			t.Errorf("%s: %v, want %q", in, s.Err, want)
		}
	}
}

// Merge keeps the first server of each Hermes name by client order;
// UniqueVars gives two servers' secrets distinct .env names, avoiding
// reserved ones.
func TestImportMergeAndUniqueVars(t *testing.T) {
	a, _ := FromJSON("my-srv", []byte(`{"command":"a","env":{"API_KEY":"k1-abcdefgh"}}`), "", "")
	a.Source.Client = Cursor
	b, _ := FromJSON("my_srv", []byte(`{"command":"b","env":{"API_KEY":"k2-abcdefgh"}}`), "", "")
	b.Source.Client = Claude
	c, _ := FromJSON("my-srv", []byte(`{"command":"c"}`), "", "")
	c.Source.Client = Claude
	kept, shadowed := Merge(nil, []*Server{a}, []*Server{b, c})
	if got := []string{kept[0].Target(), kept[1].Target()}; !reflect.DeepEqual(got, []string{"b", "c"}) || len(shadowed) != 1 || shadowed[0] != a {
		t.Fatalf("kept %v shadowed %v", got, shadowed)
	}
	UniqueVars([]*Server{b, a}, map[string]bool{"MCP_MY_SRV_API_KEY_2": true})
	if b.Secrets[0].Var != "MCP_MY_SRV_API_KEY" || a.Secrets[0].Var != "MCP_MY_SRV_API_KEY_3" {
		t.Errorf("vars %s %s", b.Secrets[0].Var, a.Secrets[0].Var)
	}
	if env, _ := a.Entry.Fields.Get("env"); env.(config.Map)[0].Value != "${MCP_MY_SRV_API_KEY_3}" {
		t.Errorf("reference not renamed: %v", env)
	}
}

// Files are bounded, and a broken one names itself.
func TestImportReadLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, config.MaxConfigBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	var tl *config.TooLargeError
	if _, err := Read(Source{Client: Claude, Path: big}); !errors.As(err, &tl) {
		t.Errorf("a file over the limit: %v", err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[mcp_servers.x\ncommand = 1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(Source{Client: Codex, Path: bad}); err == nil || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "\n") {
		t.Errorf("broken TOML: %v", err)
	}
	if _, err := Read(Source{Client: Cursor, Path: filepath.Join(dir, "none.json")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

func TestImportHermesName(t *testing.T) {
	for in, want := range map[string]string{
		"github": "github", "my.remote server": "my-remote-server", "@scope/pkg": "scope-pkg", "\x1b[31mred": "31mred",
		"": "server", "...": "server", strings.Repeat("a", 100): strings.Repeat("a", 64),
	} {
		if got := HermesName(in); got != want || !config.ValidName(got) {
			t.Errorf("HermesName(%q) = %q, want %q", in, got, want)
		}
	}
}
