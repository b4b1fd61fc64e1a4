package testserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The flags for the server's own text reach initialize and tools/list as
// given, control characters and all.
func TestNameFlags(t *testing.T) {
	const name, version, desc = "n\x1b]0;t\x07", "1\u202e", "d\r\x1b[2J"
	c := client.NewClient(transport.NewStdio(binPath, nil, "--name", name, "--server-version", version, "--tool-desc", desc,
		"--extra-tool", "x\ny", "--dup-tools", "--empty-tool-name"))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	init := initialize(t, c, "")
	if init.ServerInfo.Name != name || init.ServerInfo.Version != version {
		t.Errorf("serverInfo %q %q", init.ServerInfo.Name, init.ServerInfo.Version)
	}
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	descs := map[string]string{}
	for _, tl := range res.Tools {
		count[tl.Name]++
		if count[tl.Name] == 1 {
			descs[tl.Name] = tl.Description
		}
	}
	if count["echo"] != 2 || count["x\ny"] != 2 || count[""] != 1 {
		t.Errorf("counts: echo %d, extra %d, empty %d", count["echo"], count["x\ny"], count[""])
	}
	if descs["echo"] != desc || descs["x\ny"] != desc {
		t.Errorf("descriptions %q %q", descs["echo"], descs["x\ny"])
	}
	last := res.Tools[len(res.Tools)-2]
	if !strings.HasPrefix(last.Description, "Duplicate of ") {
		t.Errorf("copies do not come last: %q", last.Description)
	}
	if got := callText(t, c, "x\ny", nil); got != "x\ny" {
		t.Errorf("extra tool answered %q", got)
	}
}
