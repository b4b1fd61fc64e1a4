package cli_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testproc"
)

// goneLimit bounds the wait for processes to end: well past the plugin's
// shutdown graces.
const goneLimit = 30 * time.Second

// oneShotServer configures a server that ignores the end of its stdin and
// SIGTERM, so that only the last step of the graceful shutdown stops it,
// calls its pid tool with hermes mcp call, and returns the server's and its
// plugin's pids once hermes has exited.
func oneShotServer(t *testing.T) (server, plugin int) {
	t.Helper()
	home := newHome(t)
	// The mark finds the server here: it says its pid in its own pid
	// namespace.
	writeConfig(t, home, "mcp_servers:\n  s:\n    command: "+testServerPath(t)+"\n    args: [--linger, --ignore-sigterm]\n    env: {HERMES_TEST_MARK: \""+home+"\"}\n")
	r := runHermes(t, home, "mcp", "call", "s", "pid").must(t, 0)
	nsPid, err := strconv.Atoi(strings.TrimSpace(r.stdout))
	if err != nil {
		t.Fatalf("pid tool printed %q", r.stdout)
	}
	pid := testproc.HostPidByEnv(nsPid, "HERMES_TEST_MARK="+home)
	if pid == 0 || !testproc.Alive(pid) {
		t.Fatal("the server was already gone when hermes returned: hermes waited for its shutdown")
	}
	// The plugin: the server's parent, or its grandparent when the
	// server's parent is the init of its pid namespace.
	plugin = testproc.Parent(pid)
	if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(plugin) + "/comm"); !strings.HasPrefix(string(comm), "hermes-transpor") {
		plugin = testproc.Parent(plugin)
	}
	return pid, plugin
}

// A one-shot command returns as soon as its output is complete; the
// server's graceful shutdown (stdin closed, SIGTERM, SIGKILL) continues in
// the plugin without holding the prompt, and nothing is left after it.
func TestOneShotReturnsBeforeServerShutdown(t *testing.T) {
	t.Parallel()
	server, plugin := oneShotServer(t)
	if !testproc.Alive(plugin) {
		t.Fatal("the plugin exited before its server")
	}
	testproc.WaitGone(t, "server and plugin after a one-shot call", goneLimit, server, plugin)
}

// Killing the plugin during the detached shutdown takes the server with it.
func TestOneShotPluginKilledDuringShutdown(t *testing.T) {
	t.Parallel()
	server, plugin := oneShotServer(t)
	if err := syscall.Kill(plugin, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testproc.WaitGone(t, "server after its plugin was killed", goneLimit, server, plugin)
}
