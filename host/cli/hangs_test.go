package cli_test

import (
	"strings"
	"testing"
)

// hungConfig is a server that answers initialize but never a listing,
// with a connect_timeout (which bounds its listings too) long enough that
// the plugin's start and initialize fit in it on a loaded machine, so the
// bound hit is the listing's.
func hungConfig(t *testing.T) string {
	return "mcp_servers:\n  hung:\n    command: " + testServerPath(t) + "\n    args: [--hang-list]\n    connect_timeout: 20\n"
}

const hungError = "tools/list: no answer in 20 s; if 'hung' is just slow, raise connect_timeout in its entry in config.yaml"

// hermes mcp test does not wait forever for tools/list: it fails with
// what was not answered, and how long it waited.
func TestMcpTestToolsListNeverAnswered(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, hungConfig(t))
	r := runHermes(t, home, "mcp", "test", "hung").must(t, 1)
	if !strings.Contains(r.stdout, "✗ "+hungError+"\n") {
		t.Fatalf("stdout lacks the listing error:\n%s", r.stdout)
	}
	j := runHermes(t, home, "mcp", "test", "hung", "--json").must(t, 1)
	if !strings.Contains(j.stdout, `"message": "`+hungError+`"`) || !strings.Contains(j.stdout, `"state": "failed"`) {
		t.Fatalf("JSON lacks the listing error:\n%s", j.stdout)
	}
}

// hermes tools says why such a server is not connected, not just that it
// has not answered yet.
func TestToolsCommandNamesTheHungListing(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, hungConfig(t))
	r := runHermes(t, home, "tools").must(t, 0)
	if !strings.Contains(r.stdout, "✗ hung (stdio): failed: "+hungError+"\n") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
}

// A tool whose schema nests thousands of levels is skipped with a warning
// that names it; the server's other tools are listed.
func TestMcpTestDeepSchema(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  d:\n    command: "+testServerPath(t)+"\n    args: [--deep-schema, \"4000\"]\n")
	r := runHermes(t, home, "mcp", "test", "d").must(t, 0)
	for _, want := range []string{
		"✓ Tools discovered: 3\n",
		"⚠ tool \"deep\" of 'd' skipped: its schema nests 8,001 levels deep, more than the 100 hermes accepts (MaxSchemaDepth)\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}
