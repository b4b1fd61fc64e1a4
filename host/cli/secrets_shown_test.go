package cli_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
)

// Values resolved from ${VAR} (a token in the args, a key in the url's
// query) are never printed by 'mcp list' or 'mcp test': both show the entry
// as configured.
func TestListAndTestShowConfiguredText(t *testing.T) {
	t.Parallel()
	const argSecret, urlSecret = "ghp_ArgSecretValue1234567890", "UrlSecretValue0987"
	url := startHTTPServer(t)
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n"+
		"  gh:\n    command: "+testbin.Path(t, "hermes-testserver")+"\n    args: [\"--fail-start=bye\", \"--name=${GH_TOKEN}\"]\n"+
		"  gh2:\n    command: "+testbin.Path(t, "hermes-testserver")+"\n    args: \"--name ${GH_TOKEN}\"\n    enabled: false\n"+
		"  web:\n    url: "+url+"?api_key=${WEB_KEY}\n")
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("GH_TOKEN="+argSecret+"\nWEB_KEY="+urlSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	list := runHermes(t, home, "mcp", "list", "--json").must(t, 0)
	var entries []struct {
		Name string   `json:"name"`
		Args []string `json:"args"`
		URL  string   `json:"url"`
	}
	if err := json.Unmarshal([]byte(list.stdout), &entries); err != nil || len(entries) != 3 {
		t.Fatalf("%v\n%s", err, list.stdout)
	}
	if got := strings.Join(entries[0].Args, " "); got != "--fail-start=bye --name=${GH_TOKEN}" {
		t.Errorf("gh args = %q, want the configured text", got)
	}
	if got := strings.Join(entries[1].Args, "|"); got != "--name|${GH_TOKEN}" {
		t.Errorf("gh2 args = %q, want the configured words", got)
	}
	if entries[2].URL != url+"?api_key=${WEB_KEY}" {
		t.Errorf("web url = %q, want the configured text", entries[2].URL)
	}
	for _, r := range []runResult{
		list,
		runHermes(t, home, "mcp", "list").must(t, 0),
		runHermes(t, home, "mcp", "test", "web").must(t, 0),
		runHermes(t, home, "mcp", "test", "web", "--json").must(t, 0),
		runHermes(t, home, "mcp", "test", "gh", "--json").must(t, 1),
		runHermes(t, home, "-v", "mcp", "test", "gh").must(t, 1),
	} {
		out.WriteString(r.stdout + r.stderr)
	}
	test := runHermes(t, home, "mcp", "test", "gh").must(t, 1)
	if !strings.Contains(test.stdout, "--fail-start=bye --name=${GH_TOKEN}") {
		t.Errorf("mcp test does not show the configured args:\n%s", test.stdout)
	}
	out.WriteString(test.stdout + test.stderr)
	for _, s := range []string{argSecret, urlSecret} {
		if i := strings.Index(out.String(), s); i >= 0 {
			t.Errorf("%s was printed:\n%s", s, out.String()[max(0, i-200):min(out.Len(), i+50)])
		}
	}
	if !strings.Contains(out.String(), "api_key=${WEB_KEY}") {
		t.Errorf("the url is not shown as configured:\n%s", out.String())
	}
}

// A server whose error body echoes the request URL does not show the
// query's secret in 'mcp test', 'mcp call' or 'tools': every command
// redacts through the same path. The name of the parameter stays.
func TestErrorEchoingURLIsRedacted(t *testing.T) {
	t.Parallel()
	const secret = "QuerySecretValue4242"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "internal error handling "+r.Method+" "+r.URL.RequestURI(), http.StatusInternalServerError)
	}))
	defer echo.Close()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  web:\n    url: "+echo.URL+"/mcp?api_key=${WEB_KEY}\n")
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("WEB_KEY="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"mcp", "test", "web"},
		{"mcp", "test", "web", "--json"},
		{"mcp", "call", "web", "echo"},
		{"tools"},
		{"tools", "--json"},
	} {
		r := runHermes(t, home, args...)
		out := r.stdout + r.stderr
		if strings.Contains(out, secret) {
			t.Errorf("hermes %s shows the secret:\n%s", strings.Join(args, " "), out)
		}
		if args[0] == "mcp" && args[1] == "test" && !strings.Contains(out, "api_key=[REDACTED]") {
			t.Errorf("hermes %s does not say what was redacted:\n%s", strings.Join(args, " "), out)
		}
	}
}

// The advice for a 401 stays readable after redaction: the header to set
// and the .env variable are named, nothing is cut.
func TestAuthAdviceReadable(t *testing.T) {
	t.Parallel()
	url := startHTTPServer(t, "--require-bearer", "tok-needed-1234")
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  web:\n    url: "+url+"\n")
	for _, args := range [][]string{{"mcp", "test", "web"}, {"mcp", "call", "web", "echo"}, {"tools", "--json"}} {
		r := runHermes(t, home, args...)
		out := r.stdout + r.stderr
		if args[0] == "tools" {
			var rep struct {
				Servers []struct {
					Error struct{ Message string } `json:"error"`
				} `json:"servers"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Servers) != 1 {
				t.Fatalf("tools --json: %v\n%s", err, r.stdout)
			}
			out = rep.Servers[0].Error.Message
		}
		for _, want := range []string{"--header 'Authorization: Bearer ...'", `Authorization: "Bearer ${MCP_WEB_API_KEY}"`} {
			if !strings.Contains(out, want) {
				t.Errorf("hermes %s: the advice lacks %q:\n%s", strings.Join(args, " "), want, out)
			}
		}
	}
}
