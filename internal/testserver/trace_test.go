package testserver_test

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/hermes-agent/hermes/internal/testlog"
	"github.com/hermes-agent/hermes/internal/testserver"
)

// With Trace, every ping and every sleep call started is a line on stderr;
// without it, neither writes anything.
func TestTrace(t *testing.T) {
	for _, on := range []bool{true, false} {
		var stderr testlog.Buffer
		c, err := client.NewInProcessClient(testserver.New(testserver.Options{Trace: on, Stderr: &stderr}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		initialize(t, c, legacy)
		for range 2 {
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := callText(t, c, "sleep", map[string]any{"ms": 1}); got != "slept 1ms" {
			t.Errorf("sleep = %q", got)
		}
		c.Close()
		want := ""
		if on {
			want = testserver.TracePing + "\n" + testserver.TracePing + "\n" + testserver.TraceSleepStarted + "\n"
		}
		if got := stderr.String(); got != want {
			t.Errorf("Trace %v: stderr %q, want %q", on, got, want)
		}
	}
}
