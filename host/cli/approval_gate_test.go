package cli_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testmodel"
	"github.com/hermes-agent/hermes/statedb"
)

// destructiveEntry is a config entry of the Go test server whose tools
// are listed as mcp-go lists them: destructiveHint: true. --extra-tool
// adds "destroy", which answers with its own name.
func destructiveEntry(t *testing.T, name string, args ...string) string {
	a := ""
	if len(args) > 0 {
		a = "\n    args: [" + strings.Join(args, ", ") + "]"
	}
	return fmt.Sprintf("  %s:\n    command: %s%s\n", name, testServerPath(t), a)
}

// approvals returns the approvals recorded in home's state.db.
func approvals(t *testing.T, home string) []statedb.Approval {
	t.Helper()
	db, err := statedb.OpenRead(filepath.Join(home, statedb.FileName))
	if err != nil {
		t.Fatalf("state.db: %v", err)
	}
	defer db.Close()
	apps, err := statedb.ApprovalsSince(context.Background(), db, 0)
	if err != nil {
		t.Fatal(err)
	}
	return apps
}

// TestChatToolSearchGatesUnloadedDestructiveTool: with tool search on, a
// destructive tool the model calls without loading it first is not run
// (no result of the tool, no approval asked): the model is told to load
// it. Once loaded, calling it asks for approval (denied here by
// approval.timeout, nobody being there to answer), and it does not run.
func TestChatToolSearchGatesUnloadedDestructiveTool(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Script(
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "direct", Name: "mcp_ts_destroy", Arguments: `{}`}}},
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "load", Name: "load_tools", Arguments: `{"names":["mcp_ts_destroy"]}`}}},
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "loaded", Name: "mcp_ts_destroy", Arguments: `{}`}}},
		testmodel.Reply{Text: "Refused twice."},
	)
	servers := "approval:\n  timeout: 1\ntools:\n  search_over: 1\nmcp_servers:\n" + destructiveEntry(t, "ts", `"--extra-tool"`, `"destroy"`)
	home := chatHome(t, srv, "", servers)
	r := runHermes(t, home, "chat", "destroy it").must(t, 0)
	if r.stdout != "Refused twice.\n" {
		t.Errorf("stdout %q (stderr %s)", r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("want 4 model requests, got %d", len(reqs))
	}
	if strings.Contains(string(reqs[0].Raw), `"mcp_ts_destroy"`) {
		t.Fatalf("the destructive tool was offered before it was loaded: %s", reqs[0].Raw)
	}
	direct := toolMessages(reqs[1])["direct"]
	if !strings.Contains(direct, "tool mcp_ts_destroy is not loaded: call load_tools with its name first") || strings.Contains(direct, `"result"`) {
		t.Fatalf("the direct call of the unloaded tool was answered %q", direct)
	}
	loaded := toolMessages(reqs[3])["loaded"]
	if !strings.Contains(loaded, "not approved") || strings.Contains(loaded, `"result"`) {
		t.Fatalf("the loaded tool's call was answered %q", loaded)
	}
	apps := approvals(t, home)
	if len(apps) != 1 || apps[0].Decision != statedb.DecisionDeny || !strings.Contains(apps[0].Description, "Call tool mcp_ts_destroy (server 'ts', tool 'destroy')") {
		t.Fatalf("approvals %+v; want one, for the call after load_tools", apps)
	}
}

// TestChatApprovedDestructiveNowReadOnlyStillAsks: a tool approved as
// destructive ('hermes mcp add' recorded its definition) that the server
// now lists readOnlyHint: true still asks for approval under the default
// tools.on_change: warn; nobody answering, it does not run.
func TestChatApprovedDestructiveNowReadOnlyStillAsks(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Script(
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "echo", Name: "mcp_ts_echo", Arguments: `{"message":"ran unasked"}`}}},
		testmodel.Reply{Text: "Asked."},
	)
	home := chatHome(t, srv, "", "approval:\n  timeout: 1\n")
	runHermes(t, home, "mcp", "add", "ts", "--command", testServerPath(t)).must(t, 0)
	// The server drops destructiveHint from echo (mcp-go lists it
	// read-only).
	cfg := readConfig(t, home)
	cut := strings.Index(cfg, "mcp_servers:")
	if cut < 0 {
		t.Fatalf("no mcp_servers after add:\n%s", cfg)
	}
	writeConfig(t, home, cfg[:cut]+"mcp_servers:\n"+destructiveEntry(t, "ts", `"--echo-read-only"`))

	r := runHermes(t, home, "chat", "echo").must(t, 0)
	if r.stdout != "Asked.\n" {
		t.Errorf("stdout %q (stderr %s)", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "readOnlyHint changed") {
		t.Errorf("no drift warning:\n%s", r.stderr)
	}
	got := toolMessages(srv.Last(t))["echo"]
	if strings.Contains(got, "ran unasked") || !strings.Contains(got, "not approved") {
		t.Fatalf("the call was answered %q", got)
	}
	apps := approvals(t, home)
	if len(apps) != 1 || !strings.Contains(apps[0].Description, "mcp_ts_echo") {
		t.Fatalf("approvals %+v; want the echo call's", apps)
	}
}

// TestChatApprovalShowsKeyAfterPadding: the approval question of a chat
// on a terminal shows the arguments key by key: a dangerous key after 2 KB
// of padding in another key is shown, and the cut of the padding is said
// with its size. The person denies; the tool does not run.
func TestChatApprovalShowsKeyAfterPadding(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	pad := strings.Repeat("x", 2048)
	srv.Script(
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "d", Name: "mcp_ts_destroy",
			Arguments: `{"a_padding":"` + pad + `","target":"/etc/passwd"}`}}},
		testmodel.Reply{Text: "Denied, as you wished."},
	)
	servers := "mcp_servers:\n" + destructiveEntry(t, "ts", `"--extra-tool"`, `"destroy"`)
	home := chatHome(t, srv, "", servers)
	tm := startTerm(t, home, nil, "chat")
	tm.WaitFor("› ")
	tm.Press("destroy the file\r")
	tm.WaitFor("Allow? [o]nce, [a]lways, [d]eny: ")
	out := tm.Output()
	if !strings.Contains(out, `target: "/etc/passwd"`) {
		t.Fatalf("the key after the padding is not in the question:\n%s", out)
	}
	if !strings.Contains(out, "a_padding: \"xxx") || !strings.Contains(out, "… 1.7 KB more not shown") {
		t.Fatalf("the cut of the padding is not said with its size:\n%s", out)
	}
	tm.Press("d\r")
	tm.WaitFor("Denied, as you wished.")
	if got := toolMessages(srv.Last(t))["d"]; !strings.Contains(got, "not approved") {
		t.Errorf("the model was told %q", got)
	}
	tm.Press("/exit\r")
	if code := tm.Wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.Output())
	}
}
