package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// get shows the whole entry with env values, headers and other secrets
// masked (${VAR} references shown), where it is configured (file and
// line) and its status, as text and JSON.
func TestGetMasksSecretsAndShowsOrigin(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, `# servers
mcp_servers:
  other:
    command: x
  web:
    url: https://example.com/mcp?api_key=UrlS3cret
    headers:
      Authorization: Bearer HeaderS3cret-123456
      X-Ref: Bearer ${WEB_TOKEN}
    auth: oauth
    oauth:
      client_id: cid
      client_secret: OAuthS3cret-abcdef
    timeout: 30
  local:
    command: npx
    args: [-y, pkg]
    env:
      API_KEY: EnvS3cret-abcdefgh
      FROM_DOTENV: ${NOT_SET_ANYWHERE}
    enabled: false
`)
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("WEB_TOKEN=DotEnvS3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	web := runHermes(t, home, "mcp", "get", "web").must(t, 0)
	for _, want := range []string{
		"Status:    ✓ enabled", "Origin:    " + filepath.Join(home, "config.yaml") + ":5 (custom)", "Auth:      oauth",
		"url: https://example.com/mcp?api_key=[REDACTED]", "Authorization: Bearer He***56", "X-Ref: Bearer ${WEB_TOKEN}",
		"client_id: cid", "client_secret: OA***ef", "timeout: 30",
	} {
		if !strings.Contains(web.stdout, want) {
			t.Errorf("get web lacks %q:\n%s", want, web.stdout)
		}
	}
	local := runHermes(t, home, "mcp", "get", "local").must(t, 0)
	for _, want := range []string{"Status:    ✗ disabled", "API_KEY: En***gh", "FROM_DOTENV: ${NOT_SET_ANYWHERE}", "- -y"} {
		if !strings.Contains(local.stdout, want) {
			t.Errorf("get local lacks %q:\n%s", want, local.stdout)
		}
	}
	j := runHermes(t, home, "mcp", "get", "web", "--json").must(t, 0)
	var rep struct {
		Name, State, Transport string
		Enabled                bool
		Origin                 struct {
			File string
			Line int
		}
		Entry map[string]any
	}
	if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, j.stdout)
	}
	if rep.Name != "web" || rep.State != "configured" || !rep.Enabled || rep.Transport != "http" || rep.Origin.File != filepath.Join(home, "config.yaml") || rep.Origin.Line != 5 {
		t.Errorf("report %+v", rep)
	}
	if h, _ := rep.Entry["headers"].(map[string]any); h["X-Ref"] != "Bearer ${WEB_TOKEN}" || h["Authorization"] != "Bearer He***56" {
		t.Errorf("entry %v", rep.Entry)
	}
	noLeak(t, []string{"UrlS3cret", "HeaderS3cret", "OAuthS3cret", "EnvS3cret", "DotEnvS3cret"}, web, local, j)
}

// A name that is not configured is a one-line error naming the servers
// there are, like every command that takes a name.
func TestGetNotFound(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  a:\n    command: x\n")
	// The wording is notFound's, shared with the other commands.
	runHermes(t, home, "mcp", "get", "b").must(t, 1).oneLineErr(t, "'b'", "a")
	runHermes(t, home, "mcp", "get").must(t, 2).oneLineErr(t, "usage: hermes mcp get <name>")
}

// A server named like a catalog entry says so, with its install folder
// when there is one.
func TestGetCatalogOrigin(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  fetch:\n    command: uvx\n    args: [mcp-server-fetch]\n")
	if err := os.MkdirAll(filepath.Join(home, "mcp-installs", "fetch"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := runHermesEnv(t, home, []string{"HERMES_OPTIONAL_MCPS="}, "mcp", "get", "fetch").must(t, 0)
	if !strings.Contains(r.stdout, "config.yaml:2 (catalog entry 'fetch', installed in "+filepath.Join(home, "mcp-installs", "fetch")+")") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}
