package session_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testproc"
	"github.com/hermes-agent/hermes/internal/testserver"
)

// A plugin or a server killed mid-call is named, with its pid and the
// signal: never "killed by killed".
func TestKilledMidCallSaysWhoAndBySignal(t *testing.T) {
	t.Parallel()
	for _, victim := range []string{"plugin", "server"} {
		t.Run(victim, func(t *testing.T) {
			d, dir := deps(t)
			s := connect(t, d, testServer(dir, "--trace"))
			serverPid, err := call(context.Background(), s, "pid", nil)
			if err != nil {
				t.Fatal(err)
			}
			pid, want := s.Plugin.Pid(), "transport plugin hermes-transport-stdio (pid "+strconv.Itoa(s.Plugin.Pid())+") was killed by signal SIGKILL"
			if victim == "server" {
				// The server says its pid in its own pid namespace;
				// the message names it as ps shows it here.
				nsPid, _ := strconv.Atoi(serverPid)
				if pid = testproc.Below(s.Plugin.Pid(), nsPid); pid == 0 {
					t.Fatalf("no process below the plugin has pid %s in its pid namespace", serverPid)
				}
				want = `MCP server "ts" (` + dir + `/hermes-testserver, pid ` + strconv.Itoa(pid) + `) was killed by signal SIGKILL`
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := call(ctx, s, "sleep", map[string]any{"ms": 50000})
				errc <- err
			}()
			if !waitForTrace(d.Home, testserver.TraceSleepStarted, 10*time.Second) {
				t.Fatal("the sleep call did not reach the server within 10s")
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			err = <-errc
			if err == nil || ctx.Err() != nil {
				t.Fatalf("the call ended with %v (ctx %v); want the kill at once", err, ctx.Err())
			}
			for _, e := range []error{err, s.Err()} {
				if msg := e.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "killed by killed") {
					t.Errorf("%q\ndoes not say %q", msg, want)
				}
			}
		})
	}
}
