package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/agent"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/benchfloor"
	"github.com/hermes-agent/hermes/internal/testbin"
)

// echoRound is a model that asks for one echo call, then answers.
type echoRound struct{ n int }

func (e *echoRound) Chat(_ context.Context, req model.Request) (*model.Response, error) {
	e.n++
	if e.n%2 == 1 {
		return &model.Response{ToolCalls: []model.ToolCall{{ID: "c", Name: "mcp_ts_echo", Arguments: `{"message":"hello"}`}}}, nil
	}
	return &model.Response{Text: "done"}, nil
}

// BenchmarkLoopToolRound is the agent loop's own overhead per tool round:
// a turn of one round (a scripted model in this process asks for the Go
// test server's echo, then answers) against the same call made directly
// through the registry (Manager.Call). Each iteration makes one of each,
// alternating, so that both see the same machine; loop-us/round and
// direct-us/call are the medians, loop/direct their ratio and
// overhead-us/round the difference.
func BenchmarkLoopToolRound(b *testing.B) {
	ctx := context.Background()
	m := echoRegistry(b)
	if _, ok := m.Tool("mcp_ts_echo"); !ok {
		b.Fatalf("the test server did not connect: %+v", m.Status())
	}
	args := json.RawMessage(`{"message":"hello"}`)
	direct := func() time.Duration {
		start := time.Now()
		if _, err := m.Call(ctx, "mcp_ts_echo", args); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	loop := func() time.Duration {
		l := &agent.Loop{Model: &echoRound{}, Tools: m}
		start := time.Now()
		if _, err := l.Turn(ctx, "echo hello"); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	d, l := alternate(b, 50, direct, loop)
	b.ReportMetric(float64(d.Microseconds()), "direct-us/call")
	b.ReportMetric(float64(l.Microseconds()), "loop-us/round")
	b.ReportMetric(float64(l-d)/1e3, "overhead-us/round")
	benchfloor.Check(b, "loop tool round / direct registry call", "loop/direct", float64(l)/float64(d), 1.1)
}

// echoRegistry returns a registry of the Go test server (as "ts") through
// the stdio plugin the tests built, started; it is closed when b ends.
func echoRegistry(b *testing.B) *registry.Manager {
	b.Helper()
	dir := testbin.Dir(b)
	testbin.Path(b, "hermes-transport-stdio")
	server := testbin.Path(b, "hermes-testserver")
	home := b.TempDir()
	env := func(k string) (string, bool) {
		if k == "HERMES_PLUGIN_PATH" {
			return dir, true
		}
		return os.LookupEnv(k)
	}
	log := hclog.NewNullLogger()
	sup := supervisor.New(supervisor.Options{Home: home, Logger: log, Env: env})
	b.Cleanup(sup.KillAll)
	srv := &config.Server{
		Name: "ts", Transport: "stdio", Command: server, Enabled: true,
		ConnectTimeout: time.Minute, Timeout: time.Minute, KeepaliveInterval: config.DefaultKeepaliveInterval,
		Tools: config.ToolsFilter{Resources: true, Prompts: true},
	}
	m := registry.New(registry.Options{Servers: []*config.Server{srv}, Deps: session.Deps{Home: home, Supervisor: sup, Logger: log}})
	b.Cleanup(func() { m.Close() })
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return m
}

// alternate times x and y b.N times each, in alternating order (so that a
// drift of the machine's speed weighs on both alike), after warm runs of
// each, and returns the median of each.
func alternate(b *testing.B, warm int, x, y func() time.Duration) (mx, my time.Duration) {
	b.Helper()
	for range warm {
		x()
		y()
	}
	var xs, ys []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			xs = append(xs, x())
			ys = append(ys, y())
		} else {
			ys = append(ys, y())
			xs = append(xs, x())
		}
	}
	b.StopTimer()
	return median(xs), median(ys)
}

func median(v []time.Duration) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
