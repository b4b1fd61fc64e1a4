package agent_test

import (
	"context"
	"testing"

	"github.com/hermes-agent/hermes/host/agent"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// modelClient returns hermes's model client of the scripted endpoint ep,
// its plugin launched by a supervisor of the test's own that finds the
// binaries the tests built.
func modelClient(t testing.TB, ep *testmodel.Server) *model.Client {
	t.Helper()
	s, err := model.Parse(map[string]any{"base_url": ep.URL, "default": "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	s.APIKey = "sk-test-key"
	return testmodel.Client(t, s)
}

// A chat's turns and tool rounds all ask the one model plugin process the
// chat started: no process per round, nor per turn.
func TestToolRoundsShareOneModelProcess(t *testing.T) {
	ep := testmodel.New(t)
	ep.Key = "sk-test-key"
	c := modelClient(t, ep)
	tl := newTools(echo)
	o := &observer{}
	l := &agent.Loop{Model: c, Tools: tl, Observer: o}
	const turns, rounds = 3, 4
	var pid int
	for turn := range turns {
		for r := range rounds {
			ep.Script(testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "c" + string(rune('0'+r)), Name: "mcp_a_echo", Arguments: `{"message":"hi"}`}}})
		}
		ep.Script(testmodel.Reply{Text: "done"})
		res, err := l.Turn(context.Background(), "echo four times")
		if err != nil || res != "done" {
			t.Fatalf("turn %d: %q %v", turn, res, err)
		}
		if turn == 0 {
			pid = c.Pid()
		}
	}
	if got := len(ep.Requests()); got != turns*(rounds+1) {
		t.Fatalf("%d model requests, want %d", got, turns*(rounds+1))
	}
	if c.Starts() != 1 || c.Pid() != pid || pid == 0 {
		t.Fatalf("%d model plugin processes started (pid %d, then %d) for %d completions; want one", c.Starts(), pid, c.Pid(), turns*(rounds+1))
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if len(tl.called) != turns*rounds {
		t.Errorf("%d tool calls, want %d", len(tl.called), turns*rounds)
	}
}
