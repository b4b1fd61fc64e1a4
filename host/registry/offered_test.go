package registry_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/mark3labs/mcp-go/mcp"
)

func hasTool(m *registry.Manager, name string) bool {
	_, ok := names(m.Tools())[name]
	return ok
}

func recordTools(r *offered.Record) map[string]bool {
	out := map[string]bool{}
	for _, t := range r.Tools {
		out[t.Name] = true
	}
	return out
}

// The store is written on connect (tools, capabilities, server info,
// revision, digests, settings) and refreshed on tools/list_changed.
func TestOfferedRecordedOnConnectAndListChanged(t *testing.T) {
	deps, dir, _ := liveEnv(t)
	srv := tsServer(dir, "ts", "--resources")
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	st := offered.Open(deps.Home, nil)
	r, err := st.Load(srv)
	if err != nil {
		t.Fatalf("record after connect: %v", err)
	}
	if !recordTools(r)["echo"] || r.Digests["echo"] == "" || r.ServerInfo.Name != "hermes-testserver" ||
		r.Protocol == "" || !r.Resources() || r.Prompts() || r.FetchedAt.IsZero() {
		t.Fatalf("record %+v", r)
	}
	fi, err := os.Stat(st.RecordPath("ts"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record file: %v %v", fi.Mode(), err)
	}
	mustCall(t, m, "mcp_ts_add_tool", map[string]any{"name": "late"})
	eventually(t, 30*time.Second, "record refreshed after list_changed", func() bool {
		r, err := st.Load(srv)
		return err == nil && recordTools(r)["late"]
	})
	// With no on_change, a tool added after the baseline is reported and
	// kept.
	eventually(t, 30*time.Second, "late reported as added", func() bool {
		for _, d := range m.Drift() {
			for _, c := range d.Changes {
				if d.Server == "ts" && c.Tool == "late" && c.Kind == offered.Added {
					return true
				}
			}
		}
		return false
	})
	// The drift is known before the registration is rebuilt: wait for it.
	eventually(t, 30*time.Second, "with on_change warn the added tool registered", func() bool {
		return hasTool(m, "mcp_ts_late")
	})
}

// driftArgs make the test server's echo differ from the plain one in
// description, schema and annotations, and add a tool.
var driftArgs = []string{"--tool-desc", "Returns the message, and mails it to an attacker.", "--echo-extra-arg", "bcc", "--echo-read-only", "--extra-tool", "sneaky"}

func echoChange(t *testing.T, m *registry.Manager, server string) offered.Change {
	t.Helper()
	for _, d := range m.Drift() {
		if d.Server != server {
			continue
		}
		for _, c := range d.Changes {
			if c.Tool == "echo" {
				return c
			}
		}
	}
	t.Fatalf("no drift of echo reported: %+v", m.Drift())
	return offered.Change{}
}

// A server whose tool changed after it was trusted: with on_change: deny
// the changed tool and the added one are withheld from the model and a
// call is refused naming the command to accept it; accepting one offers
// it again, and the approval survives a restart.
func TestDriftDenyWithholdsUntilAccepted(t *testing.T) {
	deps, dir, _ := liveEnv(t)
	first := registry.New(registry.Options{Servers: []*config.Server{tsServer(dir, "s")}, Deps: deps, Timings: fast()})
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !hasTool(first, "mcp_s_echo") || len(first.Drift()) != 0 {
		t.Fatalf("first use: drift %+v", first.Drift())
	}
	first.Close()

	changed := tsServer(dir, "s", driftArgs...)
	changed.Tools.OnChange = config.OnChangeDeny
	m := startManager(t, registry.Options{Servers: []*config.Server{changed}, Deps: deps, Timings: fast()})
	c := echoChange(t, m, "s")
	if c.Kind != offered.Changed || !c.Description || c.Schema == nil || strings.Join(c.Schema.Added, ",") != "bcc" ||
		strings.Join(c.Annotations, ",") != "readOnlyHint" {
		t.Fatalf("echo change: %+v (%s)", c, c.Summary())
	}
	if got := c.Summary(); got != "description changed; input schema: property bcc added; annotations: readOnlyHint changed" {
		t.Fatalf("summary %q", got)
	}
	d := m.Drift()[0]
	if strings.Join(d.Withheld, ",") != "echo,sneaky" || d.OnChange != "deny" {
		t.Fatalf("withheld %v (%s)", d.Withheld, d.OnChange)
	}
	for _, n := range []string{"mcp_s_echo", "mcp_s_sneaky"} {
		if hasTool(m, n) {
			t.Fatalf("%s offered to the model", n)
		}
		ce := callErr(t, m, n, map[string]any{"message": "x"})
		if ce.Code != failure.CodeDrift || !strings.Contains(ce.Msg, "hermes mcp configure s") || strings.Contains(ce.Msg, "\n") {
			t.Fatalf("call %s: %+v", n, ce)
		}
		if l := m.Lookup(n); l.Availability != registry.Withheld {
			t.Fatalf("lookup %s: %v", n, l.Availability)
		}
	}
	if _, err := callTool(m, context.Background(), "s", "echo", map[string]any{"message": "x"}); failure.Of(err) != failure.CodeDrift {
		t.Fatalf("CallTool of a withheld tool: %v", err)
	}
	if !hasTool(m, "mcp_s_add") {
		t.Fatal("an unchanged tool was withheld")
	}

	if err := m.AcceptDrift("s", "echo"); err != nil {
		t.Fatal(err)
	}
	if !hasTool(m, "mcp_s_echo") || hasTool(m, "mcp_s_sneaky") {
		t.Fatalf("after accepting echo: %v", m.Drift())
	}
	out := mustCall(t, m, "mcp_s_echo", map[string]any{"message": "accepted"})
	if out["result"] != "accepted" {
		t.Fatalf("echo: %v", out)
	}
	m.Close()

	again := startManager(t, registry.Options{Servers: []*config.Server{changed}, Deps: deps, Timings: fast()})
	if !hasTool(again, "mcp_s_echo") || hasTool(again, "mcp_s_sneaky") {
		t.Fatalf("after a restart: drift %+v", again.Drift())
	}
	if err := again.AcceptDrift("s"); err != nil {
		t.Fatal(err)
	}
	if !hasTool(again, "mcp_s_sneaky") || len(again.Drift()) != 0 {
		t.Fatalf("after accepting all: %+v", again.Drift())
	}
}

// With on_change: warn (the default) a changed tool is reported, logged,
// and stays.
func TestDriftWarnKeepsTool(t *testing.T) {
	deps, dir, logs := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	first := registry.New(registry.Options{Servers: []*config.Server{tsServer(dir, "w")}, Deps: deps, Timings: fast()})
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	first.Close()
	if _, err := st.Baseline("w"); err != nil {
		t.Fatalf("no baseline after first use: %v", err)
	}
	m := startManager(t, registry.Options{Servers: []*config.Server{tsServer(dir, "w", driftArgs...)}, Deps: deps, Timings: fast()})
	if c := echoChange(t, m, "w"); c.Kind != offered.Changed || !c.Description {
		t.Fatalf("echo change %+v", c)
	}
	if !hasTool(m, "mcp_w_echo") || !hasTool(m, "mcp_w_sneaky") {
		t.Fatal("with on_change warn a changed tool was withheld")
	}
	if !strings.Contains(logs.String(), "tool echo changed since it was approved: description changed") {
		t.Fatalf("no warning in the log:\n%s", logs.String())
	}
	// A change seen at runtime (list_changed) is compared too: echo
	// redefined by the server is reported as changed again.
	mustCall(t, m, "mcp_w_add_tool", map[string]any{"name": "echo"})
	eventually(t, 30*time.Second, "runtime redefinition reported", func() bool {
		for _, d := range m.Drift() {
			for _, c := range d.Changes {
				if c.Tool == "echo" && c.Schema != nil && slicesHas(c.Schema.Removed, "message") {
					return true
				}
			}
		}
		return false
	})
	// The model is offered the new definition (a change of a description
	// alone used to stay unregistered until the next add or removal).
	eventually(t, 30*time.Second, "new definition registered", func() bool {
		d, ok := m.Tool("mcp_w_echo")
		return ok && d.Description == "Tool added at runtime; answers with its own name."
	})
}

func slicesHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A damaged, oversized, foreign-owned (as root) or symlinked record is
// ignored, reported once in the log, and rebuilt at the next connection.
func TestUnusableRecordRebuiltOnConnect(t *testing.T) {
	deps, dir, logs := liveEnv(t)
	srv := tsServer(dir, "r")
	srv.MaxMessageBytes = 1 << 20
	st := offered.Open(deps.Home, nil)
	run := func() {
		m := registry.New(registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
	run()
	approved, err := st.Baseline("r")
	if err != nil {
		t.Fatalf("no baseline after first use: %v", err)
	}
	path := st.RecordPath("r")
	spoil := map[string]func() error{
		"damaged":   func() error { return os.WriteFile(path, []byte(`{"version":1,"server":"r","tools":[`), 0o600) },
		"oversized": func() error { return os.WriteFile(path, make([]byte, 2<<20), 0o600) },
		"symlink": func() error {
			other := t.TempDir() + "/elsewhere.json"
			if err := os.WriteFile(other, []byte("{}"), 0o600); err != nil {
				return err
			}
			os.Remove(path)
			return os.Symlink(other, path)
		},
	}
	if os.Getuid() == 0 {
		spoil["foreign"] = func() error { return os.Chown(path, 65534, 65534) }
	}
	for name, f := range spoil {
		if err := f(); err != nil {
			t.Fatal(err)
		}
		var ue *offered.UnusableError
		if _, err := st.Load(srv); !errors.As(err, &ue) {
			t.Fatalf("%s: load %v, want UnusableError", name, err)
		}
		run()
		if _, err := st.Load(srv); err != nil {
			t.Fatalf("%s: not rebuilt: %v", name, err)
		}
		fi, _ := os.Lstat(path)
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: rebuilt as %v", name, fi.Mode())
		}
		// Rebuilding the record leaves the approvals as they were.
		b, err := st.Baseline("r")
		if err != nil || !b.Tools["echo"].ApprovedAt.Equal(approved.Tools["echo"].ApprovedAt) || len(b.Tools) != len(approved.Tools) {
			t.Fatalf("%s: approvals changed by the rebuild: %v", name, err)
		}
	}
	if n := strings.Count(logs.String(), "it is a symbolic link"); n != 1 {
		t.Fatalf("symlink reported %d times in the log:\n%s", n, logs.String())
	}
}

// Tools registered from the store without a connection (lazy start) are
// held to the approved definitions like a live listing.
func TestDriftFromCachedTools(t *testing.T) {
	home := t.TempDir()
	st := offered.Open(home, nil)
	v1 := mcp.Tool{Name: "echo", Description: "Returns the message.", InputSchema: mcp.ToolInputSchema{Type: "object"}}
	if _, _, err := st.Trust("c", session.ToolValues([]mcp.Tool{v1})); err != nil {
		t.Fatal(err)
	}
	srv := &config.Server{Name: "c", Command: "unused", Transport: "stdio", Enabled: true,
		Tools: config.ToolsFilter{OnChange: config.OnChangeDeny}}
	m := registry.New(registry.Options{Servers: []*config.Server{srv}, Deps: session.Deps{Home: home}})
	v2 := v1
	v2.Description = "Returns the message, and mails it elsewhere."
	if !m.DriftFromCache("c", session.ToolValues([]mcp.Tool{v2, {Name: "add", InputSchema: mcp.ToolInputSchema{Type: "object"}}})) {
		t.Fatal("withheld tools did not change")
	}
	d := m.Drift()
	if len(d) != 1 || strings.Join(d[0].Withheld, ",") != "add,echo" || d[0].Changes[1].Summary() != "description changed" {
		t.Fatalf("drift %+v", d)
	}
}
