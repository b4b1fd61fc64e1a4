package gateway_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hermes-agent/hermes/internal/testnpm"
)

// The official TypeScript SDK client, through three replicas: it sees the
// person's tools and calls one.
func TestOfficialTypeScriptClient(t *testing.T) {
	t.Parallel()
	node, sdk := testnpm.Package(t, "@modelcontextprotocol/sdk")
	if node == "" {
		return
	}
	url, _, _ := replicas(t, 3)
	out, err := exec.CommandContext(t.Context(), node, filepath.Join("testdata", "tsclient.mjs"), sdk, url+"/mcp", "token-of-bob").CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, out)
	}
	var got struct {
		Tools   []string
		Echo    string
		IsError bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the TypeScript client printed %q: %v", out, err)
	}
	if !slices.Equal(got.Tools, []string{"mcp_ts_echo"}) || got.Echo != "from the TypeScript SDK" || got.IsError {
		t.Fatalf("the TypeScript client saw %+v", got)
	}
}
