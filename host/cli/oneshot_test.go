package cli_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state is the field after the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// parentOf returns the parent pid of pid.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// waitGone waits, within a bound well past the plugin's shutdown graces,
// until none of pids is running.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		running := 0
		for _, p := range pids {
			if alive(p) {
				running++
			}
		}
		if running == 0 {
			return
		}

		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %v still running long after the shutdown graces", what, running, pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// oneShotServer configures a server that ignores the end of its stdin and
// SIGTERM, so that only the last step of the graceful shutdown stops it,
// calls its pid tool with hermes mcp call, and returns the server's and its
// plugin's pids once hermes has exited.
func oneShotServer(t *testing.T) (server, plugin int) {
	t.Helper()
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  s:\n    command: "+testServerPath(t)+"\n    args: [--linger, --ignore-sigterm]\n")
	r := runHermes(t, home, "mcp", "call", "s", "pid").must(t, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(r.stdout))
	if err != nil {
		t.Fatalf("pid tool printed %q", r.stdout)
	}
	if !alive(pid) {
		t.Fatal("the server was already gone when hermes returned: hermes waited for its shutdown")
	}
	return pid, parentOf(t, pid)
}

// A one-shot command returns as soon as its output is complete; the
// server's graceful shutdown (stdin closed, SIGTERM, SIGKILL) continues in
// the plugin without holding the prompt, and nothing is left after it.
func TestOneShotReturnsBeforeServerShutdown(t *testing.T) {
	server, plugin := oneShotServer(t)
	if !alive(plugin) {
		t.Fatal("the plugin exited before its server")
	}
	waitGone(t, "server and plugin after a one-shot call", server, plugin)
}

// Killing the plugin during the detached shutdown takes the server with it.
func TestOneShotPluginKilledDuringShutdown(t *testing.T) {
	server, plugin := oneShotServer(t)
	if err := syscall.Kill(plugin, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "server after its plugin was killed", server, plugin)
}
