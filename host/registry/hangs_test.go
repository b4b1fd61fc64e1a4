package registry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
)

// A server that answers initialize but never tools/list is bounded by its
// connect_timeout and reported as what it is; the other servers connect.
func TestToolsListThatNeverComes(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	hung := tsServer(dir, "hung", "--hang-list")
	// Long enough that the plugin's start and initialize fit in it on a
	// loaded machine, so the bound that is hit is the tools/list one.
	hung.ConnectTimeout = 8 * time.Second
	m := startManager(t, registry.Options{Servers: []*config.Server{hung, tsServer(dir, "ok")}, Deps: deps, Timings: fast()})
	st := status(m, "hung")
	if st.State == registry.StateConnected {
		t.Fatalf("hung server connected: %+v", st)
	}
	for _, want := range []string{"tools/list: no answer in 8 s", "connect_timeout"} {
		if !strings.Contains(st.Error, want) {
			t.Errorf("status error %q lacks %q", st.Error, want)
		}
	}
	if st := status(m, "ok"); st.State != registry.StateConnected {
		t.Fatalf("the other server: %+v", st)
	}
}

// A tool whose input schema nests thousands of levels is skipped with a
// warning naming it; the server's other tools register.
func TestDeepSchemaSkipsThatToolOnly(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "d", "--deep-schema", "4000")}, Deps: deps, Timings: fast()})
	st := status(m, "d")
	if st.State != registry.StateConnected {
		t.Fatalf("server with one deep tool: %+v", st)
	}
	got := names(m.Tools())
	hasAll(t, got, "mcp_d_echo", "mcp_d_attack", "mcp_d_burst_stats")
	hasNone(t, got, "mcp_d_deep")
	want := `tool "deep" of 'd' skipped: its schema nests 8,001 levels deep, more than the 100 hermes accepts (MaxSchemaDepth)`
	if !strings.Contains(logs.String(), want) {
		t.Errorf("host log lacks %q", want)
	}
	tools, _ := m.ServerTools("d")
	for _, tl := range tools {
		if tl.Name == "deep" {
			t.Error("ServerTools lists the skipped tool")
		}
	}
}

// A schema deeper than encoding/json reads (9,000 levels, from the issue)
// no longer costs the whole listing: the message is read with that value
// cut short, the tool is skipped, the others register.
func TestSchemaDeeperThanTheDecoderSkipsThatToolOnly(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "d", "--deep-schema", "9000")}, Deps: deps, Timings: fast()})
	if st := status(m, "d"); st.State != registry.StateConnected {
		t.Fatalf("%+v", st)
	}
	got := names(m.Tools())
	hasAll(t, got, "mcp_d_echo", "mcp_d_attack", "mcp_d_burst_stats")
	hasNone(t, got, "mcp_d_deep")
	if !strings.Contains(logs.String(), `tool "deep" of 'd' skipped: its schema nests`) {
		t.Error("skipped tool not named in the log")
	}
}
