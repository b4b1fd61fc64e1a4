package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bearer token kept in .env never appears in anything hermes prints or
// logs, verbose or not, on success or on failure; `mcp test` shows it masked.
func TestSecretsNeverPrintedOrLogged(t *testing.T) {
	t.Parallel()
	const token = "tok-Sup3rS3cretValue-9876"
	url := startHTTPServer(t, "--require-bearer", token)
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  web:\n    url: "+url+"\n    headers:\n      Authorization: \"Bearer ${WEB_TOKEN}\"\n"+
		"  wrong:\n    url: "+url+"\n    headers:\n      Authorization: \"Bearer ${WRONG_TOKEN}\"\n")
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("WEB_TOKEN="+token+"\nWRONG_TOKEN="+token+"-not\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	test := runHermes(t, home, "-v", "mcp", "test", "web").must(t, 0)
	if !strings.Contains(test.stdout, "tok***876") {
		t.Errorf("mcp test does not show the masked token:\n%s", test.stdout)
	}
	for _, r := range []runResult{
		test,
		runHermes(t, home, "-v", "mcp", "test", "web", "--json").must(t, 0),
		runHermes(t, home, "-v", "mcp", "call", "web", "echo", "--arg", "message=hi").must(t, 0),
		runHermes(t, home, "-v", "mcp", "test", "wrong").must(t, 1),
		runHermes(t, home, "-v", "mcp", "call", "wrong", "echo", "--arg", "message=hi").must(t, 1),
		runHermes(t, home, "-v", "mcp", "list"),
		runHermes(t, home, "-v", "tools"),
	} {
		seen.WriteString(r.stdout)
		seen.WriteString(r.stderr)
	}
	out := seen.String()
	for _, f := range []string{"hermes.log", "mcp-stderr.log"} {
		b, _ := os.ReadFile(filepath.Join(home, "logs", f))
		out += string(b)
	}
	if i := strings.Index(out, "Sup3rS3cret"); i >= 0 {
		t.Fatalf("the token leaked:\n%s", out[max(0, i-300):min(len(out), i+100)])
	}
}
