package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testmodel"
	"github.com/hermes-agent/hermes/internal/testpty"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// waitTrace waits for a line of the test server's trace in the servers'
// stderr log.
func waitTrace(t *testing.T, home, line string) {
	t.Helper()
	testwait.For(t, 2*time.Minute, line, func() bool {
		b, _ := os.ReadFile(filepath.Join(home, "logs", "mcp-stderr.log"))
		return strings.Contains(string(b), line+"\n")
	})
}

// TestChatInteractive drives hermes chat on a pseudo-terminal: /tools
// lists what hermes tools shows; a server's elicitation question takes the
// terminal from the chat and is answered there; /reload-mcp after a config
// edit prints what changed; a Ctrl-C cancels a slow tool (the server sees
// the cancellation) and the chat goes on; history recalls a line; a second
// Ctrl-C leaves.
func TestChatInteractive(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	ts := "mcp_servers:\n" + tsEntry(t, "ts", "", "--trace")
	home := chatHome(t, srv, "", ts)
	tm := startTerm(t, home, nil, "chat")
	tm.WaitFor("/help lists the commands")
	tm.WaitFor("› ")

	// /tools: the names hermes tools shows.
	tm.Press("/tools\r")
	tm.WaitFor("tools available to the model")
	var rep struct {
		Servers []struct {
			RegisteredTools []string `json:"registered_tools"`
		} `json:"servers"`
	}
	r := runHermes(t, home, "tools", "--json").must(t, 0)
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Servers) != 1 {
		t.Fatalf("tools --json: %v", err)
	}
	out := tm.Output()
	for _, n := range rep.Servers[0].RegisteredTools {
		if !strings.Contains(out, "      "+n+"\r\n") {
			t.Errorf("/tools lacks %s:\n%s", n, out)
		}
	}

	// A server's question during a turn: asked and answered on the
	// terminal, the answer reaching the server, not the chat.
	srv.Script(
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "el", Name: "mcp_ts_elicit", Arguments: `{"message":"Which colour?"}`}}},
		testmodel.Reply{Text: "Noted the colour."},
	)
	tm.Press("ask me\r")
	tm.WaitFor("Which colour?")
	tm.WaitFor("[c]ancel: ")
	tm.Press("y\r")
	tm.WaitFor("(text): ")
	tm.Press("teal\r")
	tm.WaitFor("Noted the colour.")
	if got := toolMessages(srv.Last(t))["el"]; !strings.Contains(got, "teal") || !strings.Contains(got, "accept") {
		t.Errorf("the server got %q", got)
	}

	// A tool's progress is a live line during the call.
	srv.Script(
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "pr", Name: "mcp_ts_slow_stream", Arguments: `{"steps":3,"interval_ms":50}`}}},
		testmodel.Reply{Text: "Streamed."},
	)
	tm.Press("stream\r")
	tm.WaitFor("Streamed.")
	if !strings.Contains(tm.Output(), "\r\x1b[K  mcp_ts_slow_stream: 3/3 (100%)\r\x1b[K") {
		t.Errorf("no live progress line in the chat:\n%q", tm.Output())
	}

	// /mcp: the servers and their states.
	tm.Press("/mcp\r")
	tm.WaitFor("ts (stdio): connected, 21/21 tools")
	tm.WaitFor("sampling limits: 0/10 requests this minute (sampling.max_rpm), 0/200 today (sampling.max_per_day), 0/200000 tokens today (sampling.max_tokens_per_day)")

	// Ctrl-C cancels a model call that does not answer.
	srv.Script(testmodel.Reply{Hang: true})
	tm.Press("think hard\r")
	testwait.For(t, 2*time.Minute, "the model request", func() bool { return srv.Last(t).Contains("think hard") })
	tm.Press(testpty.KeyCtrlC)
	tm.WaitFor("Cancelled.")

	// /reload-mcp after a config edit.
	cfg := readConfig(t, home)
	writeConfig(t, home, cfg+tsEntry(t, "two", "    tools:\n      include: [echo, add]\n"))
	tm.Press("/reload-mcp\r")
	tm.WaitFor("Servers added: two")
	tm.WaitFor("Tools added: mcp_two_add, mcp_two_echo")

	// Ctrl-C cancels a slow tool call; the server gets
	// notifications/cancelled; the chat goes on.
	srv.Script(
		testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "slow", Name: "mcp_ts_sleep", Arguments: `{"ms":600000}`}}},
		testmodel.Reply{Text: "Still here."},
		testmodel.Reply{Text: "Said twice."},
	)
	tm.Press("sleep a while\r")
	tm.WaitFor(`→ mcp_ts_sleep {"ms":600000}`)
	waitTrace(t, home, testserver.TraceSleepStarted)
	tm.Press(testpty.KeyCtrlC)
	testwait.For(t, 2*time.Minute, "the cancelled tool call", func() bool { return strings.Count(tm.Output(), "Cancelled.") == 2 })
	waitTrace(t, home, testserver.TraceSleepCancelled)
	tm.Press("are you there?\r")
	tm.WaitFor("Still here.")
	if got := toolMessages(srv.Last(t))["slow"]; !strings.Contains(got, "cancelled by the user") {
		t.Errorf("the model was told %q of the cancelled call", got)
	}
	// History: Up recalls the last line.
	tm.Press(testpty.KeyUp, testpty.KeyEnter)
	tm.WaitFor("Said twice.")
	msgs := srv.Last(t).Messages()
	if last := msgs[len(msgs)-1]; last["content"] != "are you there?" {
		t.Errorf("Up+Enter sent %v", last["content"])
	}

	// A Ctrl-C cancels the next slow call, a second one leaves.
	srv.Script(testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "slow2", Name: "mcp_ts_sleep", Arguments: `{"ms":600001}`}}})
	tm.Press("sleep again\r")
	tm.WaitFor(`→ mcp_ts_sleep {"ms":600001}`)
	tm.Press(testpty.KeyCtrlC)
	// Two signals close together may arrive as one: the second Ctrl-C is
	// typed once the first was seen.
	testwait.For(t, 2*time.Minute, "the second cancellation", func() bool {
		return strings.Count(tm.Output(), "Cancelling...") == 3
	})
	tm.Press(testpty.KeyCtrlC)
	if code := tm.Wait(); code != 0 && code != 130 {
		t.Fatalf("exit %d after two Ctrl-C:\n%s", code, tm.Output())
	}
}
