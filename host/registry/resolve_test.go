package registry_test

import (
	"context"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/registry"
)

// Resolve is the registry's own record of a tool, as a call of the name
// reaches it: its server and MCP name, its annotations as listed now and
// as approved in the drift baseline; a tool the filter removes or no
// server offers does not resolve, with the error Call reports.
func TestResolveRecordsListedAndApprovedAnnotations(t *testing.T) {
	deps, dir, _ := liveEnv(t)
	// First use trusts echo as mcp-go lists it: destructiveHint: true.
	first := registry.New(registry.Options{Servers: []*config.Server{tsServer(dir, "r")}, Deps: deps, Timings: fast()})
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	first.Close()

	// Now echo is listed read-only; add is filtered.
	srv := tsServer(dir, "r", "--echo-read-only")
	srv.Tools.Exclude = []string{"add"}
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	rec, err := m.Resolve("mcp_r_echo")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Server != "r" || rec.Tool != "echo" || rec.StateKey != srv.StateKey() || rec.Utility != "" {
		t.Fatalf("record %+v", rec)
	}
	if ro := rec.Annotations.ReadOnly; ro == nil || !*ro {
		t.Fatalf("listed annotations %+v, want readOnlyHint: true", rec.Annotations)
	}
	if rec.Approved == nil {
		t.Fatal("no approved annotations of echo, though first use approved it")
	}
	if d, ro := rec.Approved.Destructive, rec.Approved.ReadOnly; d == nil || !*d || (ro != nil && *ro) {
		t.Fatalf("approved annotations %+v, want destructive and not read-only", *rec.Approved)
	}

	for name, code := range map[string]failure.Code{
		"mcp_r_add":     failure.CodeFiltered,
		"mcp_r_nothing": failure.CodeNoSuchTool,
		"mcp_zz_echo":   failure.CodeUnknownServer,
	} {
		if _, err := m.Resolve(name); failure.Of(err) != code {
			t.Errorf("Resolve(%s): %v, want code %s", name, err, code)
		}
		if _, err := call(m, context.Background(), name, nil); failure.Of(err) != code {
			t.Errorf("Call(%s): %v, want code %s like Resolve", name, err, code)
		}
	}
}
