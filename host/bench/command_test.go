package bench_test

import (
	"encoding/json"
	"fmt"
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
func BenchmarkOneShot(b *testing.B) {
	node, script := testnpm.Server(b, "@modelcontextprotocol/server-everything")
	dir := bins(b)
	home := b.TempDir()
	writeConfig(b, home, fmt.Sprintf("mcp_servers:\n  everything:\n    command: %s\n    args: [%s, stdio]\n", quote(node), quote(script)))
	undo, _ := adoptOrphans()
	defer undo()
	runs := [2][]string{
		{filepath.Join(dir, "hermes"), "mcp", "call", "everything", "echo", "--arg", "message=hi"},
		{filepath.Join(dir, "oneshotclient"), node, script, "stdio"},
	}
	envs := [2][]string{hermesEnv(home), session.ChildEnv(nil)}
	for j, r := range runs { // warm the page cache
		runTree(b, envs[j], "Echo: hi", r...)
	}
	var wall, cpu [2][]time.Duration
	i := 0
	for b.Loop() {
		for k := range 2 {
			j := (i + k) % 2
			w, c := runTree(b, envs[j], "Echo: hi", runs[j]...)
			wall[j] = append(wall[j], w)
			cpu[j] = append(cpu[j], c)
		}
		i++
	}
	h, c := median(wall[0]), median(wall[1])
	b.ReportMetric(h.Seconds(), "hermes-s")
	b.ReportMetric(c.Seconds(), "client-s")
	b.ReportMetric(ms(median(cpu[0])), "hermes-tree-cpu-ms")
	b.ReportMetric(ms(median(cpu[1])), "client-tree-cpu-ms")
	checkFloor(b, "one-shot mcp call: hermes / minimal client", "hermes/client", float64(h)/float64(c), 1.1)
}

// BenchmarkToolsCommand runs `hermes tools --json` with one and with ten Go
// test servers over stdio (a throw-away HERMES_HOME), in alternating order:
// the process's wall time and the CPU time of its whole process tree
// (hermes, plugins, servers, including their graceful stop after hermes
// exited). To tell the host's and plugins' share from the servers', each
// iteration also starts the same number of servers directly, has each
// initialize and list its tools (what hermes asks of them), and measures
// their own CPU time: host+plugin-cpu-ms/server is (tree − servers) / 10,
// marginal-cpu-ms/server the same for each server beyond the first.
// Figures are medians.
func BenchmarkToolsCommand(b *testing.B) {
	dir := bins(b)
	server := filepath.Join(dir, "hermes-testserver")
	counts := [2]int{1, 10}
	var envs [2][]string
	for k, n := range counts {
		home := b.TempDir()
		var cfg strings.Builder
		cfg.WriteString("mcp_servers:\n")
		for i := range n {
			fmt.Fprintf(&cfg, "  s%d:\n    command: %s\n", i, quote(server))
		}
		writeConfig(b, home, cfg.String())
		envs[k] = hermesEnv(home)
	}
	undo, _ := adoptOrphans()
	defer undo()
	hermes := filepath.Join(dir, "hermes")
	check := func(n int) func(string) error {
		return func(out string) error { return checkTools(out, n) }
	}
	for k, n := range counts { // warm the page cache
		runTreeCheck(b, envs[k], check(n), hermes, "tools", "--json")
	}
	var wall, cpu, own, directWall [2][]time.Duration
	i := 0
	for b.Loop() {
		for x := range 2 {
			k := (i + x) % 2
			w, c := runTreeCheck(b, envs[k], check(counts[k]), hermes, "tools", "--json")
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

// checkTools checks a `hermes tools --json` report: n servers, all
// connected.
func checkTools(out string, n int) error {
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
		if s.State != "connected" {
			return fmt.Errorf("server %s: %s %s", s.Name, s.State, s.Error)
		}
	}
	return nil
}

// serversDirect starts n test servers at once, has each initialize and list
// its tools, closes their stdin and waits for them; it returns the wall
// time and the servers' own CPU time, summed.
func serversDirect(b *testing.B, server string, n int) (wall, cpu time.Duration) {
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mcp.LATEST_LEGACY_PROTOCOL_VERSION + `","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n"
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
			c, err := serveOnce(server, input, `"id":2`)
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

// serveOnce runs server with input, reads its stdout until a line contains
// last, then closes its stdin and waits for it to exit.
func serveOnce(server, input, last string) (time.Duration, error) {
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
	if _, err := stdin.Write([]byte(input)); err != nil {
		return 0, err
	}
	var seen strings.Builder
	buf := make([]byte, 64<<10)
	for !strings.Contains(seen.String(), last) {
		n, err := stdout.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return 0, fmt.Errorf("%s: no answer to tools/list: %v; got %q", server, err, seen.String())
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("%s: %v", server, err)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// runTree runs a command to its exit and checks that its output contains
// want; see runTreeCheck.
func runTree(b *testing.B, env []string, want string, argv ...string) (wall, cpu time.Duration) {
	return runTreeCheck(b, env, func(out string) error {
		if !strings.Contains(out, want) {
			return fmt.Errorf("output lacks %q", want)
		}
		return nil
	}, argv...)
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
