package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testproc"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/mcp"
)

var lazyMarks atomic.Int64

// lazyServer is a test server entry whose processes carry a mark of their
// own on their command line (--name), so a test can count them.
func lazyServer(dir, name string, args ...string) (*config.Server, string) {
	mark := fmt.Sprintf("lazy-%d-%d", os.Getpid(), lazyMarks.Add(1))
	return tsServer(dir, name, append([]string{"--name", mark}, args...)...), mark
}

// processes counts the live processes of the server carrying mark: the
// server itself and its transport plugin (the server's parent), among the
// descendants of this test process.
func processes(mark string) int {
	n := 0
	plugins := map[int]bool{}
	for _, pid := range testproc.Descendants(os.Getpid()) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte("\x00"+mark+"\x00")) && !bytes.HasSuffix(b, []byte("\x00"+mark)) {
			continue
		}
		n++
		if pp := testproc.Parent(pid); pp > 0 && pp != os.Getpid() {
			plugins[pp] = true
		}
	}
	return n + len(plugins)
}

// recordServer connects srv once, as a session before this one did, and
// stores what it offered: the record lazy start reads.
func recordServer(t testing.TB, deps session.Deps, st *offered.Store, srv *config.Server, edit func([]mcp.Tool) []mcp.Tool) {
	t.Helper()
	sess, err := session.Connect(context.Background(), session.PlanFor(srv, deps.Home, deps.Environ), deps)
	if err != nil {
		t.Fatalf("connect %s: %v", srv.Name, err)
	}
	res, err := sess.Client.ListTools(context.Background(), mcp.ListToolsRequest{})
	caps := sess.Capabilities()
	_ = sess.Close()
	if err != nil {
		t.Fatal(err)
	}
	tools := res.Tools
	if edit != nil {
		tools = edit(tools)
	}
	rec := &offered.Record{Server: srv.Name, SettingsDigest: offered.SettingsDigest(srv), Capabilities: caps, Tools: session.ToolValues(tools),
		Protocol: sess.Revision(), ServerInfo: sess.ServerInfo()}
	if err := st.Save(rec); err != nil {
		t.Fatal(err)
	}
}

func lazyOptions(deps session.Deps, st *offered.Store, servers ...*config.Server) registry.Options {
	return registry.Options{Servers: servers, Deps: deps, Timings: fast(), Lazy: true, Records: registry.RecordsFrom(st)}
}

func waitNoProcesses(t *testing.T, mark string) {
	t.Helper()
	eventually(t, 60*time.Second, "the server's processes to end", func() bool { return processes(mark) == 0 })
}

// A server with a fresh record registers its tools without starting; the
// first call starts it (plugin and server) and succeeds.
func TestLazyServerStartsOnFirstCall(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	srv, mark := lazyServer(dir, "lz")
	recordServer(t, deps, st, srv, nil)
	waitNoProcesses(t, mark)

	m := startManager(t, lazyOptions(deps, st, srv))
	s := status(m, "lz")
	if s.State != registry.StateIdle || !s.Lazy.FromRecord || s.Lazy.RecordAt.IsZero() {
		t.Fatalf("after Start: state %s, lazy %+v", s.State, s.Lazy)
	}
	hasAll(t, names(m.Tools()), "mcp_lz_echo", "mcp_lz_add")
	if n := processes(mark); n != 0 {
		t.Fatalf("%d processes of a lazy server before any call", n)
	}

	out := mustCall(t, m, "mcp_lz_echo", map[string]any{"message": "first"})
	if out["result"] != "first" {
		t.Fatalf("echo: %v", out)
	}
	if n := processes(mark); n != 2 {
		t.Fatalf("after the first call: %d processes, want the plugin and the server", n)
	}
	s = status(m, "lz")
	if s.State != registry.StateConnected || s.Lazy.FromRecord || s.Lazy.Starts != 1 {
		t.Fatalf("after the call: state %s, lazy %+v", s.State, s.Lazy)
	}
}

// A server with no call for idle_timeout is stopped (its processes end,
// its tools stay) and the next call starts it again; a call in flight
// longer than idle_timeout keeps it running.
func TestIdleStopAndRestart(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	srv, mark := lazyServer(dir, "idl")
	recordServer(t, deps, st, srv, nil)
	srv.IdleTimeout = 300 * time.Millisecond
	m := startManager(t, lazyOptions(deps, st, srv))

	// Longer than idle_timeout, but in flight: not idle.
	if out := mustCall(t, m, "mcp_idl_sleep", map[string]any{"ms": 1500}); !strings.Contains(fmt.Sprint(out["result"]), "slept") {
		t.Fatalf("sleep: %v", out)
	}
	if s := status(m, "idl"); s.Lazy.IdleStops != 0 {
		t.Fatalf("stopped while a call was in flight: %+v", s.Lazy)
	}
	var last registry.ServerStatus
	if !testwait.Until(60*time.Second, func() bool {
		last = status(m, "idl")
		return last.State == registry.StateIdle && last.Lazy.IdleStops >= 1
	}) {
		t.Fatalf("no idle stop after a minute: state %s, lazy %+v\nlog:\n%s", last.State, last.Lazy, logs.String())
	}
	waitNoProcesses(t, mark)
	// Stopped, it stays stopped until a call: the call that started it
	// does not start it again.
	if s := status(m, "idl"); s.State != registry.StateIdle || s.Lazy.IdleStops != 1 || s.Lazy.Starts != 1 {
		t.Fatalf("after the idle stop, with no call: state %s, lazy %+v (started again without a call)\nlog:\n%s", s.State, s.Lazy, logs.String())
	}
	hasAll(t, names(m.Tools()), "mcp_idl_echo")
	if !strings.Contains(logs.String(), "stopped after idle_timeout") {
		t.Fatalf("no log line of the idle stop:\n%s", logs.String())
	}

	out := mustCall(t, m, "mcp_idl_echo", map[string]any{"message": "again"})
	if out["result"] != "again" {
		t.Fatalf("echo after idle stop: %v", out)
	}
	if s := status(m, "idl"); s.Lazy.Starts != 2 {
		t.Fatalf("starts: %+v", s.Lazy)
	}
}

// idle_timeout: 0 never stops a server; start: eager connects at Start
// despite a fresh record.
func TestEagerAndNeverIdle(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	srv, mark := lazyServer(dir, "egr")
	recordServer(t, deps, st, srv, nil)
	srv.Start = config.StartEager
	m := startManager(t, lazyOptions(deps, st, srv))
	if s := status(m, "egr"); s.State != registry.StateConnected || s.Lazy.FromRecord {
		t.Fatalf("start: eager: %s %+v", s.State, s.Lazy)
	}
	if n := processes(mark); n != 2 {
		t.Fatalf("start: eager: %d processes", n)
	}
}

// A server whose tools changed while it was not running is reconciled when
// a call starts it: tools added and removed, the model's list updated.
func TestLazyReconcilesChangedTools(t *testing.T) {
	t.Parallel()
	deps, dir, logs := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	srv, _ := lazyServer(dir, "rc")
	// The record says: no add, and a tool the server no longer has.
	recordServer(t, deps, st, srv, func(tools []mcp.Tool) []mcp.Tool {
		var out []mcp.Tool
		for _, tl := range tools {
			if tl.Name != "add" {
				out = append(out, tl)
			}
		}
		return append(out, mcp.NewTool("vanished", mcp.WithDescription("gone since")))
	})
	m := startManager(t, lazyOptions(deps, st, srv))
	before := names(m.Tools())
	hasAll(t, before, "mcp_rc_vanished", "mcp_rc_echo")
	hasNone(t, before, "mcp_rc_add")

	mustCall(t, m, "mcp_rc_echo", map[string]any{"message": "x"})
	after := names(m.Tools())
	hasAll(t, after, "mcp_rc_add", "mcp_rc_echo")
	hasNone(t, after, "mcp_rc_vanished")
	if s := status(m, "rc"); s.Refreshes != 1 {
		t.Fatalf("refreshes: %d", s.Refreshes)
	}
	if !strings.Contains(logs.String(), "added: add; removed: vanished") {
		t.Fatalf("no warning naming the changes:\n%s", logs.String())
	}
}

// A record made with other settings, or a damaged one, is not used: the
// server connects at Start as it does without a record.
func TestLazyIgnoresStaleOrDamagedRecord(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	stale, staleMark := lazyServer(dir, "stale")
	recordServer(t, deps, st, stale, nil)
	stale.Args = append(stale.Args, "--tools", "2") // other settings now
	damaged, damagedMark := lazyServer(dir, "damaged")
	recordServer(t, deps, st, damaged, nil)
	if err := os.WriteFile(st.RecordPath("damaged"), []byte(`{"version":1,"server":"damaged"`), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign, foreignMark := lazyServer(dir, "foreign")
	recordServer(t, deps, st, foreign, nil)
	// The record of another server filed under this one's name.
	b, err := os.ReadFile(st.RecordPath("stale"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.RecordPath("foreign"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	m := startManager(t, lazyOptions(deps, st, stale, damaged, foreign))
	for name, mark := range map[string]string{"stale": staleMark, "damaged": damagedMark, "foreign": foreignMark} {
		if s := status(m, name); s.State != registry.StateConnected || s.Lazy.FromRecord {
			t.Errorf("%s: state %s, lazy %+v: want connected at Start", name, s.State, s.Lazy)
		}
		if n := processes(mark); n != 2 {
			t.Errorf("%s: %d processes", name, n)
		}
	}
	hasAll(t, names(m.Tools()), "mcp_stale_tool_1", "mcp_damaged_echo", "mcp_foreign_echo")
}

// prestart: true starts a lazy server in the background: Start does not
// wait for it, and it connects without a call.
func TestPrestart(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	srv, mark := lazyServer(dir, "pre", "--slow-start", "300")
	recordServer(t, deps, st, srv, nil)
	srv.Prestart = true
	m := startManager(t, lazyOptions(deps, st, srv))
	hasAll(t, names(m.Tools()), "mcp_pre_echo")
	eventually(t, 60*time.Second, "the prestarted server to connect", func() bool {
		return status(m, "pre").State == registry.StateConnected
	})
	if n := processes(mark); n != 2 {
		t.Fatalf("%d processes", n)
	}
	if s := status(m, "pre"); s.Lazy.Starts != 0 {
		t.Fatalf("a prestart is no start by a call: %+v", s.Lazy)
	}
}

// A lazy server's recorded tools are compared with the approved ones
// before any start: with tools.on_change: deny a tool whose definition
// changed since it was approved is withheld though the server never ran.
func TestLazyRecordDriftWithheld(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	srv, mark := lazyServer(dir, "dr")
	srv.Tools.OnChange = config.OnChangeDeny
	var approved []mcp.Tool
	recordServer(t, deps, st, srv, func(tools []mcp.Tool) []mcp.Tool {
		approved = tools
		return tools
	})
	if _, _, err := st.Trust("dr", session.ToolValues(approved)); err != nil {
		t.Fatal(err)
	}
	// A later record in which echo says something else.
	recordServer(t, deps, st, srv, func(tools []mcp.Tool) []mcp.Tool {
		out := append([]mcp.Tool(nil), tools...)
		for i := range out {
			if out[i].Name == "echo" {
				out[i].Description = "now also uploads your files"
			}
		}
		return out
	})
	waitNoProcesses(t, mark)
	m := startManager(t, lazyOptions(deps, st, srv))
	if s := status(m, "dr"); s.State != registry.StateIdle {
		t.Fatalf("state %s", s.State)
	}
	got := names(m.Tools())
	hasNone(t, got, "mcp_dr_echo")
	hasAll(t, got, "mcp_dr_add")
	if n := processes(mark); n != 0 {
		t.Fatalf("%d processes", n)
	}
}

// Instructions come from a lazy server's record until it connects, then
// from its session.
func TestInstructionsFromRecordThenSession(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	srv, _ := lazyServer(dir, "ins", "--instructions", "live words")
	recordServer(t, deps, st, srv, nil)
	rec, err := st.Load(srv)
	if err != nil {
		t.Fatal(err)
	}
	rec.Instructions = "recorded words"
	if err := st.Save(rec); err != nil {
		t.Fatal(err)
	}
	m := startManager(t, lazyOptions(deps, st, srv))
	if s := status(m, "ins"); s.State != registry.StateIdle {
		t.Fatalf("state %s, want idle", s.State)
	}
	if got := m.Instructions("ins"); got != "recorded words" {
		t.Fatalf("idle server's instructions %q, want the record's", got)
	}
	mustCall(t, m, "mcp_ins_echo", map[string]any{"message": "x"})
	if got := m.Instructions("ins"); got != "live words" {
		t.Fatalf("connected server's instructions %q, want the session's", got)
	}
	if got := m.Instructions("nope"); got != "" {
		t.Fatalf("unknown server's instructions %q", got)
	}
}

// What lazy start takes without recomputing it is still checked: a record
// whose tool was edited on disk (compact, its checksum left as it was) is
// not used, so the server connects and lists again; and against an
// approval whose parts (how a tool changed) were damaged on disk, a tool
// that changed is still withheld (tools.on_change: deny) before the
// server ever runs, its approval still decided by its digest.
func TestLazyTamperedRecordAndDamagedPartsCaught(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)

	edited, editedMark := lazyServer(dir, "edited")
	recordServer(t, deps, st, edited, nil)
	data, err := os.ReadFile(st.RecordPath("edited"))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(data, []byte(`"description":"`), []byte(`"description":"Also uploads your files. `), 1)
	if bytes.Equal(bad, data) {
		t.Fatal("the edit did not apply")
	}
	if err := os.WriteFile(st.RecordPath("edited"), bad, 0o600); err != nil {
		t.Fatal(err)
	}

	parts, partsMark := lazyServer(dir, "parts")
	parts.Tools.OnChange = config.OnChangeDeny
	var approved []mcp.Tool
	recordServer(t, deps, st, parts, func(tools []mcp.Tool) []mcp.Tool {
		approved = tools
		return tools
	})
	if _, _, err := st.Trust("parts", session.ToolValues(approved)); err != nil {
		t.Fatal(err)
	}
	recordServer(t, deps, st, parts, func(tools []mcp.Tool) []mcp.Tool {
		out := append([]mcp.Tool(nil), tools...)
		for i := range out {
			if out[i].Name == "echo" {
				out[i].Description = "now also uploads your files"
			}
		}
		return out
	})
	bl, err := os.ReadFile(st.BaselinePath("parts"))
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.ReplaceAll(bl, []byte(`"parts":{"description":"`), []byte(`"parts":{"description":"x`))
	if bytes.Equal(damaged, bl) {
		t.Fatal("the damage did not apply")
	}
	if err := os.WriteFile(st.BaselinePath("parts"), damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	waitNoProcesses(t, editedMark)
	waitNoProcesses(t, partsMark)

	m := startManager(t, lazyOptions(deps, st, edited, parts))
	if s := status(m, "edited"); s.State != registry.StateConnected || s.Lazy.FromRecord {
		t.Errorf("edited record: state %s, lazy %+v: want connected at Start", s.State, s.Lazy)
	}
	if s := status(m, "parts"); s.State != registry.StateIdle {
		t.Fatalf("damaged parts: state %s, want idle (from its record)", s.State)
	}
	got := names(m.Tools())
	hasNone(t, got, "mcp_parts_echo")
	hasAll(t, got, "mcp_parts_add", "mcp_edited_echo")
	if n := processes(partsMark); n != 0 {
		t.Fatalf("damaged parts: %d processes", n)
	}
	var drift []string
	for _, d := range m.Drift() {
		for _, c := range d.Changes {
			drift = append(drift, d.Server+": "+c.String())
		}
	}
	if strings.Join(drift, "\n") != "parts: echo: definition changed" {
		t.Fatalf("drift %q", drift)
	}
}

// Lazy start reads an approval by its digests alone when nothing changed
// (offered.Store.ApprovedSame), and the long way otherwise: an approval
// whose digest of a tool was edited still withholds that tool
// (tools.on_change: deny), one damaged anywhere still withholds every
// tool, and one written otherwise than hermes writes it but approving the
// same tools still withholds none; no server starts for any of it.
func TestLazyApprovalShortcutStillCatches(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	st := offered.Open(deps.Home, nil)
	edits := map[string]func([]byte) []byte{
		"same": func(b []byte) []byte { return b },
		"edited": func(b []byte) []byte {
			i := bytes.Index(b, []byte(`"echo":{"digest":"`)) + len(`"echo":{"digest":"`)
			out := bytes.Clone(b)
			out[i] = '0'
			if b[i] == '0' {
				out[i] = '1'
			}
			return out
		},
		"broken": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"approved_at":"`), []byte(`"approved_at":"x`), 1)
		},
		"indented": func(b []byte) []byte {
			var out bytes.Buffer
			if err := json.Indent(&out, b, "", "  "); err != nil {
				t.Fatal(err)
			}
			return out.Bytes()
		},
	}
	var servers []*config.Server
	var marks []string
	for _, name := range []string{"same", "edited", "broken", "indented"} {
		srv, mark := lazyServer(dir, name)
		srv.Tools.OnChange = config.OnChangeDeny
		recordServer(t, deps, st, srv, nil)
		rec, err := st.Load(srv)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Trust(name, rec.Tools); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(st.BaselinePath(name))
		if err != nil {
			t.Fatal(err)
		}
		edited := edits[name](data)
		if name != "same" && bytes.Equal(edited, data) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if err := os.WriteFile(st.BaselinePath(name), edited, 0o600); err != nil {
			t.Fatal(err)
		}
		servers, marks = append(servers, srv), append(marks, mark)
	}
	for _, mark := range marks {
		waitNoProcesses(t, mark)
	}
	m := startManager(t, lazyOptions(deps, st, servers...))
	for _, srv := range servers {
		if s := status(m, srv.Name); s.State != registry.StateIdle {
			t.Errorf("%s: state %s, want idle (from its record)", srv.Name, s.State)
		}
	}
	got := names(m.Tools())
	hasAll(t, got, "mcp_same_echo", "mcp_same_add", "mcp_indented_echo", "mcp_edited_add")
	hasNone(t, got, "mcp_edited_echo", "mcp_broken_echo", "mcp_broken_add")
	drift := map[string]registry.Drift{}
	for _, d := range m.Drift() {
		drift[d.Server] = d
	}
	if d, ok := drift["edited"]; !ok || len(d.Changes) != 1 || d.Changes[0].Tool != "echo" {
		t.Errorf("edited digest: drift %+v, want echo changed", d)
	}
	if d := drift["broken"]; d.Unreadable == "" {
		t.Errorf("damaged approval: drift %+v, want it unreadable", d)
	}
	for _, name := range []string{"same", "indented"} {
		if d, ok := drift[name]; ok {
			t.Errorf("%s: drift %+v, want none", name, d)
		}
	}
	for _, mark := range marks {
		if n := processes(mark); n != 0 {
			t.Fatalf("%d processes of a lazy server", n)
		}
	}
}
