package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testmodel"
	"github.com/hermes-agent/hermes/statedb"
)

// TestChatRecordsAndGatesCalls: a chat's conversation is written to
// state.db as a terminal session (the user's prompt, the model's calls,
// the tool results, its answer), and a call that approval.require names
// waits for a decision recorded in mcp_approvals: with nobody to answer
// it, approval.timeout denies it, the tool does not run and the model is
// told why, while the other call runs.
func TestChatRecordsAndGatesCalls(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Script(
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{
			{ID: "call_echo", Name: "mcp_ts_echo", Arguments: `{"message":"recorded"}`},
			{ID: "call_add", Name: "mcp_ts_add", Arguments: `{"a":1,"b":2}`},
		}},
		testmodel.Reply{Text: "One ran, one was refused."},
	)
	servers := "approval:\n  require: [mcp_ts_add]\n  timeout: 1\nmcp_servers:\n" + tsEntry(t, "ts", "", "--echo-read-only")
	home := chatHome(t, srv, "", servers)
	r := runHermes(t, home, "chat", "use the tools").must(t, 0)
	if r.stdout != "One ran, one was refused.\n" {
		t.Errorf("stdout %q (stderr %s)", r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("want 2 model requests, got %d", len(reqs))
	}
	got := toolMessages(reqs[1])
	if got["call_echo"] != `{"result":"recorded"}` {
		t.Errorf("echo's result fed back: %q", got["call_echo"])
	}
	if strings.Contains(got["call_add"], "3") || !strings.Contains(strings.ToLower(got["call_add"]), "approv") {
		t.Errorf("the add call was not refused for want of approval: %q", got["call_add"])
	}

	ctx := context.Background()
	db, err := statedb.OpenRead(filepath.Join(home, statedb.FileName))
	if err != nil {
		t.Fatalf("state.db: %v", err)
	}
	defer db.Close()
	var id, source string
	var ended any
	if err := db.QueryRowContext(ctx, "SELECT id, source, ended_at FROM sessions").Scan(&id, &source, &ended); err != nil {
		t.Fatal(err)
	}
	if source != statedb.TerminalSource || ended == nil {
		t.Errorf("session %s: source %q, ended_at %v; want a terminal session that ended", id, source, ended)
	}
	msgs, err := statedb.Messages(ctx, db, id)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool,tool,assistant" || msgs[0].Text != "use the tools" || msgs[4].Text != "One ran, one was refused." {
		t.Errorf("recorded messages: roles %v, first %q, last %q", roles, msgs[0].Text, msgs[len(msgs)-1].Text)
	}
	var toolName string
	if err := db.QueryRowContext(ctx, "SELECT tool_name FROM messages WHERE tool_call_id = 'call_echo'").Scan(&toolName); err != nil || toolName != "mcp_ts_echo" {
		t.Errorf("echo's result recorded with tool_name %q, %v", toolName, err)
	}
	apps, err := statedb.ApprovalsSince(ctx, db, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(apps) != 1 || apps[0].Decision != statedb.DecisionDeny || apps[0].SessionKey != statedb.TerminalSessionKey(id) ||
		!strings.Contains(apps[0].Description, "mcp_ts_add") {
		t.Errorf("approvals recorded: %+v", apps)
	}
}

// TestChatToolSearch: past tools.search_over the model is offered
// search_tools and load_tools instead of every definition; a search finds
// a tool by its description, load_tools adds its definition to the next
// request, and the model can then call it.
func TestChatToolSearch(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Script(
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "s1", Name: "search_tools", Arguments: `{"query":"echo message"}`}}},
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "l1", Name: "load_tools", Arguments: `{"names":["mcp_ts_echo"]}`}}},
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "c1", Name: "mcp_ts_echo", Arguments: `{"message":"found"}`}}},
		testmodel.Reply{Text: "Found and called."},
	)
	servers := "tools:\n  search_over: 2\nmcp_servers:\n" + tsEntry(t, "ts", "", "--echo-read-only")
	home := chatHome(t, srv, "", servers)
	r := runHermes(t, home, "chat", "find a tool").must(t, 0)
	if r.stdout != "Found and called.\n" {
		t.Errorf("stdout %q (stderr %s)", r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("want 4 model requests, got %d", len(reqs))
	}
	first := string(reqs[0].Raw)
	if !strings.Contains(first, `"search_tools"`) || !strings.Contains(first, `"load_tools"`) || strings.Contains(first, `"mcp_ts_echo"`) {
		t.Errorf("first request does not offer the search tools instead of the definitions: %s", first)
	}
	if got := toolMessages(reqs[1])["s1"]; !strings.Contains(got, "mcp_ts_echo") {
		t.Errorf("search_tools answered %q", got)
	}
	if !strings.Contains(string(reqs[2].Raw), `"name":"mcp_ts_echo"`) {
		t.Errorf("the loaded definition is not offered after load_tools: %s", reqs[2].Raw)
	}
	if got := toolMessages(reqs[3])["c1"]; got != `{"result":"found"}` {
		t.Errorf("the loaded tool's call answered %q", got)
	}
}
