package registry_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/mark3labs/mcp-go/mcp"
)

// recordedDesc is the description of echo in the records of these tests:
// not the test server's own, so a registered echo that has it came from
// the record, and one that has the server's came from a listing.
const recordedDesc = "Echo, as recorded and approved."

// oneCallSetup records srv with echo's description replaced (and without
// the tools named in drop), approves exactly that record, and returns the
// record file's content.
func oneCallSetup(t *testing.T, deps session.Deps, st *offered.Store, srv *config.Server, drop ...string) []byte {
	t.Helper()
	var recorded []mcp.Tool
	recordServer(t, deps, st, srv, func(tools []mcp.Tool) []mcp.Tool {
		for _, tl := range tools {
			skip := false
			for _, d := range drop {
				skip = skip || tl.Name == d
			}
			if skip {
				continue
			}
			if tl.Name == "echo" {
				tl.Description = recordedDesc
			}
			recorded = append(recorded, tl)
		}
		return recorded
	})
	if _, _, err := st.Trust(srv.StateKey(), session.ToolValues(recorded)); err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(st.RecordPath(srv.StateKey()))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// oneCallManager starts a snapshot manager of srv serving one call of
// tool.
func oneCallManager(t *testing.T, deps session.Deps, srv *config.Server, tool string) *registry.Manager {
	t.Helper()
	m := registry.New(registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast(), Snapshot: true})
	t.Cleanup(func() { m.Close() })
	m.ForCall(srv.Name, tool)
	if err := m.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if s := status(m, srv.Name); s.State != registry.StateConnected {
		t.Fatalf("state %s (%s)", s.State, s.Error)
	}
	return m
}

// With tools.on_change: warn and a record the approval approves exactly,
// the one call's connection registers the record's tools and does not
// list: echo keeps the record's description, the record is not
// rewritten, nothing drifted, and the call runs.
func TestOneCallTakesApprovedRecord(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	srv := tsServer(dir, "oc")
	before := oneCallSetup(t, deps, st, srv)

	m := oneCallManager(t, deps, srv, "echo")
	echo, ok := names(m.Tools())["mcp_oc_echo"]
	if !ok || echo.Description != recordedDesc {
		t.Fatalf("echo registered %v with description %q, want the record's", ok, echo.Description)
	}
	if out := mustCall(t, m, "mcp_oc_echo", map[string]any{"message": "from the record"}); out["result"] != "from the record" {
		t.Fatalf("echo: %v", out)
	}
	if d := m.Drift(); len(d) != 0 {
		t.Fatalf("drift %+v", d)
	}
	if after, err := os.ReadFile(st.RecordPath("oc")); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the record was rewritten (%v)", err)
	}
}

// The drift gate holds for one call: with tools.on_change: deny the
// connection lists first, so echo, whose description differs from the
// approved one, is withheld and its call refused before it is sent.
func TestOneCallDenyListsFirst(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	srv := tsServer(dir, "ocd")
	srv.Tools.OnChange = config.OnChangeDeny
	oneCallSetup(t, deps, st, srv)

	m := oneCallManager(t, deps, srv, "echo")
	got := names(m.Tools())
	hasNone(t, got, "mcp_ocd_echo")
	hasAll(t, got, "mcp_ocd_add")
	if e := callErr(t, m, "mcp_ocd_echo", map[string]any{"message": "x"}); e.Code != failure.CodeDrift {
		t.Fatalf("call of the changed echo: %+v", e)
	}
}

// A record that does not list the tool, or one the approval does not
// approve exactly, is not taken: the connection lists, the listing's
// tools are registered (echo with the server's description) and the
// drift reported.
func TestOneCallListsWhenRecordFallsShort(t *testing.T) {
	t.Parallel()
	t.Run("tool not in the record", func(t *testing.T) {
		t.Parallel()
		deps, dir, _ := liveEnv(t)
		st := offered.Open(deps.Home, nil)
		srv := tsServer(dir, "ocn")
		oneCallSetup(t, deps, st, srv, "add")
		m := oneCallManager(t, deps, srv, "add")
		if echo := names(m.Tools())["mcp_ocn_echo"]; echo.Description == recordedDesc {
			t.Fatal("echo registered from the record")
		}
		if out := mustCall(t, m, "mcp_ocn_add", map[string]any{"a": 1, "b": 2}); out["result"] == nil {
			t.Fatalf("add: %v", out)
		}
	})
	t.Run("record not approved", func(t *testing.T) {
		t.Parallel()
		deps, dir, _ := liveEnv(t)
		st := offered.Open(deps.Home, nil)
		srv := tsServer(dir, "ocu")
		oneCallSetup(t, deps, st, srv)
		// A later record, made after the approval, that differs from it.
		recordServer(t, deps, st, srv, nil)
		m := oneCallManager(t, deps, srv, "echo")
		if echo := names(m.Tools())["mcp_ocu_echo"]; echo.Description == recordedDesc {
			t.Fatal("echo registered from a record the approval does not approve")
		}
	})
}
