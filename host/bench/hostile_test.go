package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testproc"
	"github.com/hermes-agent/hermes/internal/testserver"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/mark3labs/mcp-go/mcp"
)

// The hostile figures (docs/HOSTILE.md, `make hostile`): each attack of a
// hostile server (internal/testserver's hostile modes) runs against a host
// of its own, a fresh process, beside a well-behaved server that the host
// keeps calling during the attack. The row says what stopped the attack
// (the limit), the peak memory (VmHWM) of the host and of the attacked
// server's plugin, the time to a clear error, and whether the other server
// was served throughout. The test fails when an attack is not stopped by
// its limit with a clear error, when the other server was not served, when
// a process outlives its server, or when a peak passes twice the 100 MB
// budget (a figure over the budget itself is reported, not failed: a
// machine's memory accounting varies).
//
// It runs only when asked (-hostile, as `make hostile` does): a build with
// the race detector would report its own memory, not the host's.

var (
	hostileFlag = flag.Bool("hostile", false, "run TestHostile, the hostile server figures (make hostile)")
	hostileDoc  = flag.String("hostile.doc", "", "write the figures table into this markdown file, between its hostile-figures markers")
)

// Environment of a hostile host process (this test binary run again).
const (
	hostileAttackEnv = "HERMES_HOSTILE_ATTACK"
	hostileBinEnv    = "HERMES_HOSTILE_BIN"
)

// budgetMB is the peak memory a host or plugin should stay under during an
// attack; twice it fails the test.
const budgetMB = 100

// Sizes of the attacks.
const (
	hugeResult   = 200 << 20 // over max_message_mb
	largeResult  = 16 << 20  // within max_message_mb, over max_result_kb
	fullResult   = 60 << 20  // just within max_message_mb
	stdioBurst   = 200_000
	httpBurst    = 20_000
	attackWithin = 2 * time.Minute
)

// hostileAttack is one row of the figures.
type hostileAttack struct {
	name  string
	limit string
	http  bool     // the hostile server speaks Streamable HTTP
	flags []string // of the hostile hermes-testserver
	// run mounts the attack in the hostile host and fills the outcome.
	run func(h *hostileHost, o *outcome)
	// check says what is wrong with the outcome, or "".
	check func(o *outcome) string
	// budgetMB replaces budgetMB for a message the limits let through:
	// its cost grows with the message.
	budgetMB int64
}

// outcome is what a hostile host reports, as one JSON line on stdout.
type outcome struct {
	HostKB, PluginKB int64
	// Clear is the time from the start of the attack to the clear error
	// (or, for processes, to the end it checks).
	Clear time.Duration
	// Error is what the host said.
	Error string
	// Served and Failed count the other server's calls during the attack.
	Served, Failed int
	// Note adds a detail to the row.
	Note string
	// Fault is set when the attack could not be mounted.
	Fault string
}

var hostileAttacks = []hostileAttack{
	{
		name: "stdio: 200 MB tool result", limit: "max_message_mb (64), in the stdio plugin",
		flags: []string{"--huge-result", strconv.Itoa(hugeResult)},
		run:   callAttack, check: wantError("over the limit of 64 MB", "max_message_mb"),
	},
	{
		name: "stdio: endless line (no newline)", limit: "max_message_mb (64), in the stdio plugin",
		flags: []string{"--endless-message"},
		run:   callAttack, check: wantError("max_message_mb"),
	},
	{
		name: "stdio: 16 MB tool result", limit: "max_result_kb (512): saved to cache/, the model gets a reference",
		flags: []string{"--huge-result", strconv.Itoa(largeResult)},
		run:   renderLarge, check: wantNote("saved to", "max_result_kb is 512"),
	},
	{
		name: "stdio: 60 MB tool result (just within max_message_mb)", limit: "none: max_message_mb lets it through; max_result_kb keeps it from the model",
		flags: []string{"--huge-result", strconv.Itoa(fullResult)},
		run:   renderLarge, check: wantNote("saved to", "max_result_kb is 512"), budgetMB: 400,
	},
	{
		name: fmt.Sprintf("stdio: burst of %d server→client requests", stdioBurst), limit: "max_server_requests (64): the rest refused (-32000)",
		flags: []string{"--request-burst", strconv.Itoa(stdioBurst)},
		run:   burst(stdioBurst), check: wantError("max_server_requests"),
	},
	{
		name: "HTTP: 200 MB response body", limit: "max_message_mb (64), in the HTTP plugin",
		http: true, flags: []string{"--huge-result", strconv.Itoa(hugeResult)},
		run: callAttack, check: wantError("over the limit of 64 MB", "max_message_mb"),
	},
	{
		name: "HTTP: endless chunked body", limit: "max_message_mb (64), in the HTTP plugin",
		http: true, flags: []string{"--endless-message"},
		run: callAttack, check: wantError("max_message_mb"),
	},
	{
		name: "HTTP: endless SSE event", limit: "max_message_mb (64) per event, in the HTTP plugin",
		http: true, flags: []string{"--endless-event"},
		run: callAttack, check: wantError("an SSE event over the limit", "max_message_mb"),
	},
	{
		name: fmt.Sprintf("HTTP: burst of %d server→client requests", httpBurst), limit: "max_server_requests (64): the rest refused (-32000)",
		http: true, flags: []string{"--request-burst", strconv.Itoa(httpBurst)},
		run: burst(httpBurst), check: wantError("max_server_requests"),
	},
	{
		name: "serve (stdio): 256 MB client line", limit: "mcp_serve.max_request_mb (4), in hermes mcp serve",
		run: serveLongLine, check: wantNote("Request Entity Too Large", "mcp_serve.max_request_mb", "the next request answered"),
	},
	{
		name: "stdio: server double-forks a setsid daemon", limit: "the server's pid namespace: its init (the stdio plugin's launcher) ends with the server, and the kernel kills the rest; the plugin's subreaper where there is none",
		flags: []string{"--daemon", "DAEMON_PID"},
		run:   daemonAttack, check: wantNote("no process left"),
	},
	{
		name: "plugin killed mid-call (SIGKILL)", limit: "the host names the process and the signal",
		flags: []string{"--trace"},
		run:   killPlugin, check: wantError("hermes-transport-stdio (pid", "was killed by signal SIGKILL"),
	},
}

func wantError(parts ...string) func(o *outcome) string {
	return func(o *outcome) string {
		for _, p := range parts {
			if !strings.Contains(o.Error, p) {
				return fmt.Sprintf("the error %q does not say %q", o.Error, p)
			}
		}
		return ""
	}
}

func wantNote(parts ...string) func(o *outcome) string {
	return func(o *outcome) string {
		for _, p := range parts {
			if !strings.Contains(o.Note, p) {
				return fmt.Sprintf("%q does not say %q", o.Note, p)
			}
		}
		return ""
	}
}

func TestHostile(t *testing.T) {
	if !*hostileFlag {
		t.Skip("the hostile figures run with -hostile (make hostile)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the hostile figures read /proc (Linux)")
	}
	dir := hostileBins(t)
	var rows []string
	for _, a := range hostileAttacks {
		t.Run(a.name, func(t *testing.T) {
			o := runHostileHost(t, dir, a)
			if o.Fault != "" {
				t.Fatalf("the attack could not be mounted: %s", o.Fault)
			}
			if msg := a.check(o); msg != "" {
				t.Error(msg)
			}
			if o.Failed > 0 || o.Served == 0 {
				t.Errorf("the other server: %d calls served, %d failed during the attack", o.Served, o.Failed)
			}
			budget := int64(budgetMB)
			if a.budgetMB > 0 {
				budget = a.budgetMB
			}
			for what, kb := range map[string]int64{"host": o.HostKB, "plugin": o.PluginKB} {
				if kb > 2*budget<<10 {
					t.Errorf("%s peak %d MB, over twice the %d MB budget", what, kb>>10, budget)
				}
			}
			rows = append(rows, hostileRow(a, o))
		})
	}
	table := hostileTable(rows)
	fmt.Println(table)
	if *hostileDoc != "" {
		if err := writeHostileDoc(*hostileDoc, table); err != nil {
			t.Fatal(err)
		}
	}
}

// hostileBins builds what a hostile host runs: the two transport plugins
// (the stdio one with its launcher and its proxy) and the test server.
func hostileBins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	names := []string{"hermes-transport-stdio", launcherName, "hermes-stdio-proxy", "hermes-transport-http", "hermes-testserver", "hermes", "hermes-bridge-fake"}
	stage := filepath.Join(dir, "stage")
	args := []string{"build", "-o", stage + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, testbin.Targets[n])
	}
	if err := goBuild(args...); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.Rename(filepath.Join(stage, filepath.Base(testbin.Targets[n])), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runHostileHost runs attack a in a host process of its own and returns
// its outcome.
func runHostileHost(t *testing.T, dir string, a hostileAttack) *outcome {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), attackWithin+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), hostileAttackEnv+"="+a.name, hostileBinEnv+"="+dir, "HERMES_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var o outcome
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &o) == nil {
			return &o
		}
	}
	t.Fatalf("the hostile host reported nothing (%v):\n%s\n%s", err, out, stderr.Bytes())
	return nil
}

// hostileHost is the host process of one attack.
type hostileHost struct {
	a        hostileAttack
	dir      string
	home     string
	sup      *supervisor.Supervisor
	evil     *session.Session
	evilCfg  *config.Server
	good     *session.Session
	warnings chan string
	httpSrv  *exec.Cmd
}

// hostileHostMain is the whole of a hostile host process: it mounts the
// attack its environment names and prints the outcome. It returns the exit
// status.
func hostileHostMain() int {
	name := os.Getenv(hostileAttackEnv)
	var a *hostileAttack
	for i := range hostileAttacks {
		if hostileAttacks[i].name == name {
			a = &hostileAttacks[i]
		}
	}
	o := &outcome{}
	defer func() { _ = json.NewEncoder(os.Stdout).Encode(o) }()
	if a == nil {
		o.Fault = "no attack " + name
		return 1
	}
	h := &hostileHost{a: *a, dir: os.Getenv(hostileBinEnv), home: os.Getenv("HERMES_HOME"), warnings: make(chan string, 16)}
	defer h.stop()
	if err := h.start(); err != nil {
		o.Fault = err.Error()
		return 1
	}
	// The other server is called all through the attack.
	stop := make(chan struct{})
	var served, failed atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			res, err := h.good.Client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "still here"}}})
			cancel()
			if err != nil || res.IsError {
				failed.Add(1)
			} else {
				served.Add(1)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	a.run(h, o)
	// One more call ends after the attack, then the count is closed.
	after := served.Load() + failed.Load()
	testwait.Until(attackWithin, func() bool { return served.Load()+failed.Load() > after })
	close(stop)
	wg.Wait()
	o.Served, o.Failed = int(served.Load()), int(failed.Load())
	if o.HostKB == 0 { // an attack on another host process reports its own
		o.HostKB = vmHWM(os.Getpid())
	}
	if o.PluginKB == 0 && h.evil != nil {
		o.PluginKB = vmHWM(h.evil.Plugin.Pid())
	}
	return 0
}

// start connects the two servers: the hostile one and the other.
func (h *hostileHost) start() error {
	os.Setenv("HERMES_PLUGIN_PATH", h.dir)
	testserverBin := filepath.Join(h.dir, "hermes-testserver")
	flags := make([]string, len(h.a.flags))
	for i, f := range h.a.flags {
		flags[i] = strings.ReplaceAll(f, "DAEMON_PID", filepath.Join(h.home, "daemon.pid"))
	}
	quoted := func(args []string) string {
		b, _ := json.Marshal(args)
		return string(b)
	}
	evil := fmt.Sprintf("  evil:\n    command: %q\n    args: %s\n", testserverBin, quoted(flags))
	if h.a.http {
		url, err := h.startHTTP(testserverBin, flags)
		if err != nil {
			return err
		}
		evil = fmt.Sprintf("  evil:\n    url: %q\n", url)
	}
	yaml := "mcp_servers:\n" + evil + fmt.Sprintf("  good:\n    command: %q\n", testserverBin)
	if err := os.WriteFile(filepath.Join(h.home, config.File), []byte(yaml), 0o600); err != nil {
		return err
	}
	cfg, err := config.Load(h.home)
	if err != nil {
		return err
	}
	h.sup = supervisor.New(supervisor.Options{Home: h.home})
	log := hclog.New(&hclog.LoggerOptions{Output: &warnTap{ch: h.warnings}, Level: hclog.Warn, JSONFormat: true})
	d := session.Deps{Home: h.home, Supervisor: h.sup, Logger: log, Sampling: slowModel{}}
	if h.good, err = session.Connect(context.Background(), session.PlanFor(cfg.Server("good"), d.Home, d.Environ), d); err != nil {
		return fmt.Errorf("connect the other server: %w", err)
	}
	h.evilCfg = cfg.Server("evil")
	if h.evil, err = session.Connect(context.Background(), session.PlanFor(h.evilCfg, d.Home, d.Environ), d); err != nil {
		return fmt.Errorf("connect the hostile server: %w", err)
	}
	return nil
}

// startHTTP starts the hostile server over HTTP and returns its MCP URL.
func (h *hostileHost) startHTTP(bin string, flags []string) (string, error) {
	cmd := exec.Command(bin, append([]string{"--http", "127.0.0.1:0"}, flags...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	h.httpSrv = cmd
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("the hostile HTTP server: %w", err)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		return "", fmt.Errorf("the hostile HTTP server said %q", line)
	}
	return base + testserver.MCPPath, nil
}

func (h *hostileHost) stop() {
	if h.sup != nil {
		h.sup.KillAll()
	}
	if h.httpSrv != nil {
		_ = h.httpSrv.Process.Kill()
		_ = h.httpSrv.Wait()
	}
}

// callEvil calls a tool of the hostile server.
func (h *hostileHost) callEvil(tool string) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), attackWithin)
	defer cancel()
	return h.evil.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}})
}

// callAttack calls the attack tool: the call must fail with the limit.
func callAttack(h *hostileHost, o *outcome) {
	t0 := time.Now()
	_, err := h.callEvil("attack")
	o.Clear = time.Since(t0)
	if err == nil {
		o.Error = "the attack call succeeded"
		return
	}
	o.Error = err.Error()
	o.PluginKB = vmHWM(h.evil.Plugin.Pid())
}

// renderLarge calls the attack tool and renders its result as the model
// would get it: over max_result_kb, it goes to a file.
func renderLarge(h *hostileHost, o *outcome) {
	t0 := time.Now()
	res, err := h.callEvil("attack")
	if err != nil {
		o.Clear = time.Since(t0)
		o.Error = err.Error()
		return
	}
	val := session.CallResultValue(res)
	out := toolview.RenderCallResultMax("evil", &val, toolview.NewMediaCache(toolview.CacheDir(h.home)), h.evilCfg.MaxResultBytes)
	o.Clear = time.Since(t0)
	var r struct{ Result string }
	_ = json.Unmarshal([]byte(out), &r)
	note, _, _ := strings.Cut(r.Result, "\n")
	o.Error = note
	// The row shows where the file goes, not this run's folder and name.
	note = strings.ReplaceAll(note, h.home, "$HERMES_HOME")
	note = regexp.MustCompile(`[0-9a-f]{64}`).ReplaceAllString(note, "<sha256>")
	note = strings.Replace(note, "; raise it in config.yaml to receive more inline", "", 1)
	o.Note = fmt.Sprintf("the model gets %d bytes: %s", len(out), note)
}

// burst calls the attack tool, which sends n requests of the server's own
// at once and answers once at most 64 are left unanswered; the host's
// sampling handler (a slow model) never answers, so all but
// max_server_requests of them must be refused, and the first refusal
// warned about.
func burst(n int) func(h *hostileHost, o *outcome) {
	return func(h *hostileHost, o *outcome) {
		t0 := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := h.callEvil("attack")
			done <- err
		}()
		deadline := time.After(attackWithin)
		for o.Error == "" {
			select {
			case w := <-h.warnings:
				if strings.Contains(w, "requests of its own") {
					o.Clear = time.Since(t0)
					o.Error = w
				}
			case <-deadline:
				o.Error = "no warning of the refusals"
				return
			}
		}
		if err := <-done; err != nil {
			o.Error = "the attack call failed: " + err.Error()
			return
		}
		took := time.Since(t0)
		o.PluginKB = vmHWM(h.evil.Plugin.Pid())
		res, err := h.callEvil("burst_stats")
		var st testserver.BurstStats
		if err == nil && len(res.Content) == 1 {
			if tc, ok := res.Content[0].(mcp.TextContent); ok {
				_ = json.Unmarshal([]byte(tc.Text), &st)
			}
		}
		o.Note = fmt.Sprintf("%d of %d refused at once, %d left to the handler, in %s; %s", st.Refused, n, int64(n)-st.Refused-st.Failed-st.Answered, took.Round(time.Millisecond), o.Error)
		if want := int64(n - h.evilCfg.MaxServerRequests); st.Refused < want {
			o.Error = fmt.Sprintf("only %d refused, want %d: %s", st.Refused, want, o.Error)
		}
	}
}

// daemonAttack stops the server that left a daemon behind: no process may
// be left.
func daemonAttack(h *hostileHost, o *outcome) {
	pidFile := filepath.Join(h.home, "daemon.pid")
	var pid int
	if !testwait.Until(attackWithin, func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(string(b))
		return err == nil && pid > 0
	}) {
		o.Fault = "the daemon did not start"
		return
	}
	if hp := testproc.HostPid(pid, pidFile); hp > 0 {
		pid = hp // it wrote its pid in the server's pid namespace
	}
	plugin := h.evil.Plugin.Pid()
	parent := parentPid(pid)
	grandparent := parentPid(parent)
	o.PluginKB = vmHWM(plugin)
	t0 := time.Now()
	h.evil.Close()
	testwait.Until(30*time.Second, func() bool { return !alive(pid) })
	o.Clear = time.Since(t0)
	adopted := "adopted by the plugin"
	switch {
	case parent == plugin:
	case grandparent == plugin:
		adopted = "adopted by the init of the server's pid namespace"
	default:
		adopted = fmt.Sprintf("parent %d, not the plugin %d nor the init of the server's pid namespace", parent, plugin)
	}
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		o.Note = fmt.Sprintf("the daemon (%s) survived its server", adopted)
		return
	}
	o.Note = fmt.Sprintf("no process left: the daemon (%s) was killed with its server", adopted)
}

// killPlugin kills the hostile server's plugin in the middle of a call.
func killPlugin(h *hostileHost, o *outcome) {
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), attackWithin)
		defer cancel()
		_, err := h.evil.Client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 100000}}})
		errc <- err
	}()
	logPath := filepath.Join(h.home, "logs", "mcp-stderr.log")
	if !testwait.Until(attackWithin, func() bool {
		b, _ := os.ReadFile(logPath)
		return bytes.Contains(b, []byte(testserver.TraceSleepStarted))
	}) {
		o.Fault = "the sleep call did not reach the server"
		return
	}
	o.PluginKB = vmHWM(h.evil.Plugin.Pid())
	t0 := time.Now()
	_ = syscall.Kill(h.evil.Plugin.Pid(), syscall.SIGKILL)
	err := <-errc
	o.Clear = time.Since(t0)
	if err == nil {
		o.Error = "the call succeeded"
		return
	}
	o.Error = err.Error()
}

// slowModel is a sampling handler that never answers: a model that takes
// its time, for as long as the request lives.
type slowModel struct{}

func (slowModel) Sample(ctx context.Context, _ mcpvalue.SamplingRequest) (mcpvalue.SamplingResult, error) {
	<-ctx.Done()
	return mcpvalue.SamplingResult{}, ctx.Err()
}

// warnTap passes the messages of the host's warnings (JSON log lines) on.
type warnTap struct{ ch chan string }

func (w *warnTap) Write(p []byte) (int, error) {
	var line struct {
		Message string `json:"@message"`
	}
	if json.Unmarshal(p, &line) == nil && line.Message != "" {
		select {
		case w.ch <- line.Message:
		default:
		}
	}
	return len(p), nil
}

// vmHWM reads a process's peak resident set size (VmHWM) in KiB; 0 when
// the process is gone.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

func parentPid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// hostileRow is the table row of an attack.
func hostileRow(a hostileAttack, o *outcome) string {
	mb := func(kb int64) string {
		if kb == 0 {
			return "—"
		}
		return fmt.Sprintf("%.0f MB", float64(kb)/1024)
	}
	said := o.Note
	if said == "" {
		said = o.Error
	}
	said = strings.ReplaceAll(oneLine(said, 220), "|", "\\|")
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %d served, %d failed | %s |", a.name, a.limit, mb(o.HostKB), mb(o.PluginKB),
		o.Clear.Round(time.Millisecond), o.Served, o.Failed, said)
}

func hostileTable(rows []string) string {
	return strings.Join(append([]string{
		"| attack | stopped by | host peak (VmHWM) | plugin peak (VmHWM) | time to a clear error | other server during the attack | what the host says |",
		"|---|---|---|---|---|---|---|",
	}, rows...), "\n")
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// Markers around the table in docs/HOSTILE.md.
const (
	docBegin = "<!-- hostile-figures:begin -->"
	docEnd   = "<!-- hostile-figures:end -->"
)

// writeHostileDoc replaces the table between the markers of file.
func writeHostileDoc(file, table string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, docBegin), strings.Index(s, docEnd)
	if i < 0 || j < i {
		return errors.New(file + " has no " + docBegin + " ... " + docEnd + " markers")
	}
	s = s[:i+len(docBegin)] + "\n" + table + "\n" + s[j:]
	return os.WriteFile(file, []byte(s), 0o644)
}

var _ io.Writer = (*warnTap)(nil)

// serveLine is the client line of the serve attack: a tools/call whose
// argument is 256 MB long.
const serveLine = 256 << 20

// serveLongLine runs `hermes mcp serve` (the fake bridge) over stdio and
// sends it one 256 MB line, then a request: the line must be refused with
// the JSON-RPC error naming mcp_serve.max_request_mb, without being held,
// and the request answered. The host peak is the serve process's, the
// plugin peak its bridge plugin's.
func serveLongLine(h *hostileHost, o *outcome) {
	cmd := exec.Command(filepath.Join(h.dir, "hermes"), "mcp", "serve", "--bridge", "fake")
	cmd.Env = append(os.Environ(), "HERMES_HOME="+h.home, "HERMES_PLUGIN_PATH="+h.dir)
	in, err := cmd.StdinPipe()
	if err != nil {
		o.Fault = err.Error()
		return
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		o.Fault = err.Error()
		return
	}
	if err := cmd.Start(); err != nil {
		o.Fault = err.Error()
		return
	}
	defer func() { in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	type reply struct {
		ID    any
		Error *struct {
			Code    int
			Message string
		}
		Result json.RawMessage
		at     time.Time
	}
	replies := make(chan reply, 8)
	go func() {
		defer close(replies)
		r := bufio.NewReaderSize(out, 64<<10)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			var m reply
			if json.Unmarshal(line, &m) == nil {
				m.at = time.Now()
				replies <- m
			}
		}
	}()
	next := func() (reply, bool) {
		select {
		case m, ok := <-replies:
			return m, ok
		case <-time.After(attackWithin):
			return reply{}, false
		}
	}
	write := func(s string) bool {
		_, err := io.WriteString(in, s)
		return err == nil
	}
	if !write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n") {
		o.Fault = "serve did not read its stdin"
		return
	}
	if m, ok := next(); !ok || m.Result == nil {
		o.Fault = "serve did not answer initialize"
		return
	}
	t0 := time.Now()
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":"`)
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for i := 0; i < serveLine>>20; i++ {
		if _, err := in.Write(chunk); err != nil {
			o.Fault = "serve stopped reading the long line: " + err.Error()
			return
		}
	}
	write(`"}}}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pid","arguments":{}}}` + "\n")
	cut, ok := next()
	if !ok {
		o.Error = "serve did not answer the long line"
		return
	}
	o.Clear = cut.at.Sub(t0)
	if cut.Error == nil || cut.ID != nil {
		o.Error = fmt.Sprintf("the long line got id %v, error %v", cut.ID, cut.Error)
		return
	}
	o.Error = cut.Error.Message
	after, ok := next()
	var res struct {
		StructuredContent struct{ Pid int }
	}
	if !ok || json.Unmarshal(after.Result, &res) != nil || res.StructuredContent.Pid == 0 {
		o.Error += "; the next request was not answered"
		return
	}
	o.HostKB = vmHWM(cmd.Process.Pid)
	o.PluginKB = vmHWM(res.StructuredContent.Pid)
	o.Note = fmt.Sprintf("JSON-RPC error %d (id null): %s; the next request answered", cut.Error.Code, cut.Error.Message)
}
