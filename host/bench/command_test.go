package bench_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testnpm"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkOneShot times `hermes mcp call everything echo` against
// @modelcontextprotocol/server-everything over stdio (node started on the
// package's entry file), against testdata/oneshotclient doing the same work
// with mcp-go: start the server, initialize, call echo, kill the server.
// Both servers get the same environment: the client runs with the one hermes
// gives a stdio server (session.ChildEnv), which its server inherits. (A host
// variable such as NODE_EXTRA_CA_CERTS alone changes node's start-up time.)
// Each iteration runs both binaries once, in alternating order; the figures
// are each process's whole wall time (medians), and the CPU time of its
// whole process tree, servers included. Whatever a run leaves stopping in
// the background (hermes lets its plugin stop the server gracefully) is
// waited for before the next run, untimed.
//
// The server speaks only legacy revisions, and hermes's entry for it
// negotiates (protocol auto): the first, untimed warm-up run probes with
// server/discover, is refused, falls back to initialize and remembers the
// revision in $HERMES_HOME/mcp-protocols.json (session.MemoryFile). Every
// timed run then goes straight to initialize, as hermes does with a known
// server, so both sides do one initialize in the same revision; the
// benchmark checks that the revision was remembered. A first contact's
// probe costs one round trip more (node answers it with Method not found).
func BenchmarkOneShot(b *testing.B) {
	node, script := testnpm.Server(b, "@modelcontextprotocol/server-everything")
	dir := bins(b)
	home := b.TempDir()
	writeConfig(b, home, fmt.Sprintf("mcp_servers:\n  everything:\n    command: %s\n    args: [%s, stdio]\n", quote(node), quote(script)))
	runs := [2][]string{
		{filepath.Join(dir, "hermes"), "mcp", "call", "everything", "echo", "--arg", "message=hi"},
		{filepath.Join(dir, "oneshotclient"), node, script, "stdio"},
	}
	h, c := oneShot(b, [2][]string{hermesEnv(home), session.ChildEnv(nil)}, runs, contains("Echo: hi"), func() {
		if rev := rememberedRevision(b, home, "everything"); rev == "" || mcp.IsModernProtocol(rev) {
			b.Fatalf("after the warm-up run hermes remembers %q for server-everything, want a legacy revision", rev)
		}
	})
	checkFloor(b, "one-shot mcp call: hermes / minimal client", "hermes/client", float64(h)/float64(c), 1.1)
}

// BenchmarkOneShotTestServer is BenchmarkOneShot against the Go test server
// over stdio, once per protocol revision: `hermes mcp call ts echo` with
// `protocol: REV` pinned in the server's entry (a pinned revision is
// spoken as is, without a probe, whatever mcp-protocols.json remembers),
// against `oneshotclient -protocol REV`, mcp-go speaking the same revision.
// On 2026-07-28 both start with server/discover, on 2025-11-25 with
// initialize. The server starts in a few milliseconds, so what hermes adds
// (its own start and the plugin's) is most of the ratio; it has no floor.
// The warm-up run lists the server's tools and records them, approved on
// first use, so every timed run calls from that record without tools/list
// (registry.Manager.ForCall), as a repeated one-shot call does.
func BenchmarkOneShotTestServer(b *testing.B) {
	dir := bins(b)
	server := filepath.Join(dir, "hermes-testserver")
	for _, rev := range revisions {
		b.Run(rev, func(b *testing.B) {
			home := b.TempDir()
			writeConfig(b, home, fmt.Sprintf("mcp_servers:\n  ts:\n    command: %s\n    protocol: %s\n", quote(server), quote(rev)))
			runs := [2][]string{
				{filepath.Join(dir, "hermes"), "mcp", "call", "ts", "echo", "--arg", "message=hi"},
				{filepath.Join(dir, "oneshotclient"), "-protocol", rev, server},
			}
			h, c := oneShot(b, [2][]string{hermesEnv(home), session.ChildEnv(nil)}, runs, exactly("hi\n"), nil)
			b.ReportMetric(float64(h)/float64(c), "hermes/client")
		})
	}
}

// oneShot runs runs[0] (hermes) and runs[1] (the minimal client), each
// with its environment, once each untimed to warm the page cache, then
// once each per iteration in alternating order, and checks every output.
// afterWarm, when not nil, runs after the warm-up. It reports the medians
// of wall time and of the process tree's CPU time, and returns the wall
// times.
func oneShot(b *testing.B, envs, runs [2][]string, check func(string) error, afterWarm func()) (hermes, client time.Duration) {
	undo, _ := adoptOrphans()
	defer undo()
	for j, r := range runs { // warm the page cache
		runTreeCheck(b, envs[j], check, r...)
	}
	if afterWarm != nil {
		afterWarm()
	}
	var wall, cpu [2][]time.Duration
	i := 0
	for b.Loop() {
		for k := range 2 {
			j := (i + k) % 2
			w, c := runTreeCheck(b, envs[j], check, runs[j]...)
			wall[j] = append(wall[j], w)
			cpu[j] = append(cpu[j], c)
		}
		i++
	}
	hermes, client = median(wall[0]), median(wall[1])
	b.ReportMetric(hermes.Seconds(), "hermes-s")
	b.ReportMetric(client.Seconds(), "client-s")
	b.ReportMetric(ms(median(cpu[0])), "hermes-tree-cpu-ms")
	b.ReportMetric(ms(median(cpu[1])), "client-tree-cpu-ms")
	return hermes, client
}

// rememberedRevision returns the revision hermes remembers for server in
// home's mcp-protocols.json, or "".
func rememberedRevision(b *testing.B, home, server string) string {
	data, err := os.ReadFile(filepath.Join(home, session.MemoryFile))
	if err != nil {
		return ""
	}
	var doc struct {
		Servers map[string]struct {
			Revision string `json:"revision"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		b.Fatalf("%s: %v", session.MemoryFile, err)
	}
	return doc.Servers[server].Revision
}

// BenchmarkToolsCommand runs `hermes tools --live --json` with one and with
// ten Go test servers over stdio (a throw-away HERMES_HOME), in alternating
// order, every server connected (--live: without it, servers with a record
// of their last listing are not started; BenchmarkWarmTools measures that):
// the process's wall time and the CPU time of its whole process tree
// (hermes, plugins, servers, including their graceful stop after hermes
// exited). To tell the host's and plugins' share from the servers', each
// iteration also starts the same number of servers directly, has each do
// what hermes asks of it, and measures their own CPU time:
// host+plugin-cpu-ms/server is (tree − servers) / 10,
// marginal-cpu-ms/server the same for each server beyond the first.
// Figures are medians.
//
// hermes's entries negotiate (protocol auto), and the test servers speak
// 2026-07-28, so hermes speaks it to them (the benchmark checks that it
// remembered that revision after the warm-up run). The direct side speaks
// it too, with the requests hermes sends: server/discover and tools/list
// (see directExchanges). The servers thus do the same work on both sides.
func BenchmarkToolsCommand(b *testing.B) {
	dir := bins(b)
	server := filepath.Join(dir, "hermes-testserver")
	counts := [2]int{1, 10}
	var (
		envs  [2][]string
		homes [2]string
	)
	for k, n := range counts {
		homes[k] = b.TempDir()
		var cfg strings.Builder
		cfg.WriteString("mcp_servers:\n")
		for i := range n {
			fmt.Fprintf(&cfg, "  s%d:\n    command: %s\n", i, quote(server))
		}
		writeConfig(b, homes[k], cfg.String())
		envs[k] = hermesEnv(homes[k])
	}
	undo, _ := adoptOrphans()
	defer undo()
	hermes := filepath.Join(dir, "hermes")
	check := func(n int) func(string) error {
		return func(out string) error { return checkTools(out, n, "connected") }
	}
	for k, n := range counts { // warm the page cache
		runTreeCheck(b, envs[k], check(n), hermes, "tools", "--live", "--json")
		for i := range n {
			if rev := rememberedRevision(b, homes[k], "s"+strconv.Itoa(i)); rev != session.Latest {
				b.Fatalf("hermes remembers %q for test server s%d, want %s", rev, i, session.Latest)
			}
		}
	}
	var wall, cpu, own, directWall [2][]time.Duration
	i := 0
	for b.Loop() {
		for x := range 2 {
			k := (i + x) % 2
			w, c := runTreeCheck(b, envs[k], check(counts[k]), hermes, "tools", "--live", "--json")
			wall[k] = append(wall[k], w)
			cpu[k] = append(cpu[k], c)
			w, c = serversDirect(b, server, counts[k])
			own[k] = append(own[k], c)
			directWall[k] = append(directWall[k], w)
		}
		i++
	}
	hp := [2]time.Duration{median(cpu[0]) - median(own[0]), median(cpu[1]) - median(own[1])}
	b.ReportMetric(ms(median(wall[0])), "1-server-wall-ms")
	b.ReportMetric(ms(median(wall[1])), "10-server-wall-ms")
	b.ReportMetric(ms(median(directWall[1])), "10-direct-wall-ms")
	b.ReportMetric(ms(median(cpu[0])), "1-server-cpu-ms")
	b.ReportMetric(ms(median(cpu[1])), "10-server-cpu-ms")
	b.ReportMetric(ms(median(own[0])), "1-server-own-cpu-ms")
	b.ReportMetric(ms(median(own[1])), "10-server-own-cpu-ms")
	b.ReportMetric(ms(hp[1])/10, "host+plugin-cpu-ms/server")
	b.ReportMetric(ms(hp[1]-hp[0])/9, "marginal-cpu-ms/server")
}

// checkTools checks a `hermes tools --json` report: n servers, all in
// state ("connected", or "cached" for a listing from the records).
func checkTools(out string, n int, state string) error {
	var rep struct {
		Servers []struct {
			Name, State, Error string
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return fmt.Errorf("not a tools report: %v", err)
	}
	if len(rep.Servers) != n {
		return fmt.Errorf("%d servers in the report, want %d", len(rep.Servers), n)
	}
	for _, s := range rep.Servers {
		if s.State != state {
			return fmt.Errorf("server %s: %s %s", s.Name, s.State, s.Error)
		}
	}
	return nil
}

// exchange is one message to a server and, unless until is "", what to
// read before the next: the answer whose id is until, or a message whose
// method is until.
type exchange struct {
	send, until string
}

// directExchanges is what `hermes tools` says to a test server on
// 2026-07-28, one request after the answer to the one before: discover
// (the revision's first request) and tools/list (a one-shot command opens
// no subscriptions/listen stream); hermes then exits and its plugin closes
// the server's stdin. Each request carries the revision's _meta, with the
// log level from tools/list on (where logging/setLevel was).
var directExchanges = func() []exchange {
	meta := func(level bool) map[string]any {
		m := map[string]any{
			mcp.MetaKeyProtocolVersion:    session.Latest,
			mcp.MetaKeyClientCapabilities: map[string]any{},
			mcp.MetaKeyClientInfo:         map[string]any{"name": "bench", "version": "1"},
		}
		if level {
			m[mcp.MetaKeyLogLevel] = "info"
		}
		return m
	}
	msg := func(m map[string]any) string {
		b, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	req := func(id int, method string, params map[string]any) exchange {
		return exchange{msg(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}), strconv.Itoa(id)}
	}
	return []exchange{
		req(1, "server/discover", map[string]any{"_meta": meta(false)}),
		req(2, "tools/list", map[string]any{"_meta": meta(true)}),
	}
}()

// serversDirect starts n test servers at once, has each go through
// directExchanges, closes their stdin and waits for them; it returns the
// wall time and the servers' own CPU time, summed.
func serversDirect(b *testing.B, server string, n int) (wall, cpu time.Duration) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	t0 := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := serveOnce(server, directExchanges)
			mu.Lock()
			defer mu.Unlock()
			cpu += c
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	wall = time.Since(t0)
	if len(errs) > 0 {
		b.Fatal(errs[0])
	}
	return wall, cpu
}

// serveOnce runs server and goes through the exchanges with it, then
// closes its stdin and waits for it to exit; it returns the server's CPU
// time.
func serveOnce(server string, exchanges []exchange) (time.Duration, error) {
	cmd := exec.Command(server)
	cmd.Env = session.ChildEnv(nil)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	fail := func(err error) (time.Duration, error) {
		cmd.Process.Kill()
		cmd.Wait()
		return 0, fmt.Errorf("%s: %v", server, err)
	}
	r := bufio.NewReader(stdout)
	for _, x := range exchanges {
		if _, err := io.WriteString(stdin, x.send+"\n"); err != nil {
			return fail(err)
		}
		for x.until != "" {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return fail(fmt.Errorf("no answer to %.60s...: %v", x.send, err))
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(line, &m); err != nil {
				return fail(fmt.Errorf("not JSON-RPC: %q", line))
			}
			if m.Error != nil {
				return fail(fmt.Errorf("error answer: %s", line))
			}
			if string(m.ID) == x.until || m.Method == x.until {
				break
			}
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("%s: %v", server, err)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// contains is a check of a run's output: it contains want.
func contains(want string) func(string) error {
	return func(out string) error {
		if !strings.Contains(out, want) {
			return fmt.Errorf("output lacks %q", want)
		}
		return nil
	}
}

// exactly is a check of a run's output: it is want.
func exactly(want string) func(string) error {
	return func(out string) error {
		if out != want {
			return fmt.Errorf("output is %q, want %q", out, want)
		}
		return nil
	}
}

// runTreeCheck runs argv to its exit, checks its output, then waits for
// and reaps every process it left behind (not timed). It returns the
// process's wall time and the CPU time of its whole tree. Output goes to
// files, so that the process's exit, not the end of a pipe some descendant
// holds, ends the wall time.
func runTreeCheck(b *testing.B, env []string, check func(stdout string) error, argv ...string) (wall, cpu time.Duration) {
	b.Helper()
	out, err := os.CreateTemp(b.TempDir(), "stdout")
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	errf, err := os.CreateTemp(b.TempDir(), "stderr")
	if err != nil {
		b.Fatal(err)
	}
	defer errf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, errf
	before := children()
	cpu0 := childrenCPU()
	t0 := time.Now()
	err = cmd.Run()
	wall = time.Since(t0)
	stdout, _ := os.ReadFile(out.Name())
	stderr, _ := os.ReadFile(errf.Name())
	if err == nil {
		err = check(string(stdout))
	}
	if err != nil {
		b.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, stdout, stderr)
	}
	if !reapOrphans(before, time.Minute) {
		b.Fatalf("%s left processes running for a minute after it exited", strings.Join(argv, " "))
	}
	return wall, childrenCPU() - cpu0
}

// hermesEnv is this process's environment for a hermes run with HERMES_HOME
// home, without Hermes variables of the caller's; hermes finds its plugins
// beside itself.
func hermesEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "HERMES_") || k == "NO_COLOR" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HERMES_HOME="+home, "NO_COLOR=1")
}

func writeConfig(b *testing.B, home, yaml string) {
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(yaml), 0o600); err != nil {
		b.Fatal(err)
	}
}

// quote makes s a YAML double-quoted string.
func quote(s string) string { return strconv.Quote(s) }

// BenchmarkWarmTools runs `hermes tools --json` with ten Go test servers
// whose records of their last listing are fresh (made, with their approved
// baselines, by one untimed `hermes tools --live` run), so no server
// starts: hermes reads ten records and ten baselines, compares them and
// prints the listing. Against `hermes --version`, the process's start
// and exit alone, in alternating order. Figures are medians: wall time
// and the process's CPU time of each, and cached-cpu-ms/server, what
// each cached server adds to the CPU time ((tools − version) / 10).
// Floor: tools / version wall time ≤ 1.5.
func BenchmarkWarmTools(b *testing.B) {
	const n = 10
	dir := bins(b)
	server := filepath.Join(dir, "hermes-testserver")
	home := b.TempDir()
	var cfg strings.Builder
	cfg.WriteString("mcp_servers:\n")
	for i := range n {
		fmt.Fprintf(&cfg, "  s%d:\n    command: %s\n", i, quote(server))
	}
	writeConfig(b, home, cfg.String())
	env := hermesEnv(home)
	undo, _ := adoptOrphans()
	defer undo()
	hermes := filepath.Join(dir, "hermes")
	// The records and baselines, then one warm run of each side.
	runTreeCheck(b, env, func(out string) error { return checkTools(out, n, "connected") }, hermes, "tools", "--live", "--json")
	runs := [2][]string{{hermes, "tools", "--json"}, {hermes, "--version"}}
	checks := [2]func(string) error{
		func(out string) error { return checkTools(out, n, "cached") },
		func(out string) error {
			if !strings.HasPrefix(out, "hermes ") {
				return fmt.Errorf("not a version: %q", out)
			}
			return nil
		},
	}
	for j, r := range runs {
		runTreeCheck(b, env, checks[j], r...)
	}
	var wall, cpu [2][]time.Duration
	i := 0
	for b.Loop() {
		for x := range 2 {
			j := (i + x) % 2
			w, c := runTreeCheck(b, env, checks[j], runs[j]...)
			wall[j] = append(wall[j], w)
			cpu[j] = append(cpu[j], c)
		}
		i++
	}
	b.ReportMetric(ms(median(wall[0])), "tools-wall-ms")
	b.ReportMetric(ms(median(wall[1])), "version-wall-ms")
	b.ReportMetric(ms(median(cpu[0])), "tools-cpu-ms")
	b.ReportMetric(ms(median(cpu[1])), "version-cpu-ms")
	b.ReportMetric(ms(median(cpu[0])-median(cpu[1]))/n, "cached-cpu-ms/server")
	checkFloor(b, "hermes tools, ten cached servers / hermes --version", "tools/version", float64(median(wall[0]))/float64(median(wall[1])), 1.5)
}
