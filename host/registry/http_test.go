package registry_test

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/mcp"
)

// startHTTPTestServer runs the Go test server over streamable HTTP and
// returns its MCP endpoint.
func startHTTPTestServer(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "hermes-testserver"), append([]string{"--http", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "listening on ") {
				lines <- strings.TrimPrefix(sc.Text(), "listening on ")
			}
		}
	}()
	select {
	case base := <-lines:
		return base + "/mcp"
	case <-time.After(60 * time.Second):
		t.Fatal("HTTP test server did not start")
	}
	return ""
}

// An expired HTTP session never reaches the model: the HTTP plugin reports
// session_expired (it makes no protocol decision of its own), and the
// registry reconnects and retries the call once.
func TestSessionExpiredRetriesOnce(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	testbin.Path(t, "hermes-transport-http")
	url := startHTTPTestServer(t, dir, "--session-ttl", "600000")
	srv := &config.Server{
		Name: "web", Transport: "http", URL: url, Enabled: true, SSLVerify: true,
		ConnectTimeout: 10 * time.Second, Timeout: 10 * time.Second, KeepaliveInterval: config.DefaultKeepaliveInterval,
		Tools: config.ToolsFilter{Resources: true, Prompts: true},
		// Sessions exist only before 2026-07-28.
		Protocol: mcp.LATEST_LEGACY_PROTOCOL_VERSION,
	}
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	if st := status(m, "web"); st.State != registry.StateConnected {
		t.Fatalf("status %+v", st)
	}
	mustCall(t, m, "mcp_web_expire_sessions", nil) // the server forgets the session
	if r := mustCall(t, m, "mcp_web_echo", map[string]any{"message": "still"}); r["result"] != "still" {
		t.Fatalf("echo after expiry = %v", r)
	}
	if l := logs.String(); !strings.Contains(l, "session expired; reconnecting and retrying once") {
		t.Fatalf("the registry did not notice the expiry:\n%s", l)
	}
}

// A tool the server adds outside any request (not on a call's own stream)
// reaches the registry in both eras: on the GET stream before 2026-07-28,
// on the subscriptions/listen stream the registry opens in it.
func TestListChangedOutsideRequests(t *testing.T) {
	t.Parallel()
	for _, rev := range []string{session.Latest, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(rev, func(t *testing.T) {
			deps, dir, _ := liveEnv(t)
			testbin.Path(t, "hermes-transport-http")
			url := startHTTPTestServer(t, dir)
			srv := &config.Server{
				Name: "web", Transport: "http", URL: url, Enabled: true, SSLVerify: true,
				ConnectTimeout: 10 * time.Second, Timeout: 10 * time.Second, KeepaliveInterval: config.DefaultKeepaliveInterval,
				Protocol: rev,
			}
			m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
			// The stream opens in the background after the connect: a tool
			// added before it is listening is missed, so keep adding until
			// one arrives (the first usually does).
			for i := range 20 {
				name := "late_" + strconv.Itoa(i)
				mustCall(t, m, "mcp_web_add_tool", map[string]any{"name": name, "after_ms": 50})
				if testwait.Until(2*time.Second, func() bool { _, ok := m.Tool("mcp_web_" + name); return ok }) {
					return
				}
			}
			t.Fatal("no tool added outside a request ever reached the registry")
		})
	}
}
