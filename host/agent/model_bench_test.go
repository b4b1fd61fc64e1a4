package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/agent"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// BenchmarkChatToolRound is a chat turn of one tool round as hermes chat
// makes it, the model included: the scripted model (internal/testmodel,
// on loopback) asks for the Go test server's echo through hermes's model
// client, then answers. Each iteration makes one such turn and one turn of
// the same round with the model scripted in this process (echoRound);
// chat-us/round and scripted-us/round are the medians, model-us/round
// their difference (what the model client costs per round: two
// completions). model-processes counts the model plugin processes started
// for all the rounds: one.
func BenchmarkChatToolRound(b *testing.B) {
	ctx := context.Background()
	m := echoRegistry(b)
	ep := testmodel.New(b)
	ep.Key = "sk-test-key"
	client := modelClient(b, ep)
	round := []testmodel.Reply{
		{ToolCalls: []testmodel.ToolCall{{ID: "c", Name: "mcp_ts_echo", Arguments: `{"message":"hello"}`}}},
		{Text: "done"},
	}
	chat := func() time.Duration {
		ep.Script(round...)
		l := &agent.Loop{Model: client, Tools: m}
		start := time.Now()
		res, err := l.Turn(ctx, "echo hello")
		if err != nil {
			b.Fatal(err)
		}
		if res != "done" {
			b.Fatalf("the turn answered %q", res)
		}
		return time.Since(start)
	}
	scripted := func() time.Duration {
		l := &agent.Loop{Model: &echoRound{}, Tools: m}
		start := time.Now()
		if _, err := l.Turn(ctx, "echo hello"); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	c, sc := alternate(b, 5, chat, scripted)
	b.ReportMetric(float64(c.Microseconds()), "chat-us/round")
	b.ReportMetric(float64(sc.Microseconds()), "scripted-us/round")
	b.ReportMetric(float64(c-sc)/1e3, "model-us/round")
	// The first turn started the model plugin; no round after it did.
	b.ReportMetric(float64(client.Starts()), "model-processes")
	if client.Starts() != 1 {
		b.Fatalf("%d model plugin processes for %d rounds", client.Starts(), b.N+5)
	}
}
