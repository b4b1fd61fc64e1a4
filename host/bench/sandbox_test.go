//go:build linux

package bench_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
)

// BenchmarkSandboxStart measures what the sandbox adds to a server's start:
// session.Connect of the Go test server through hermes-transport-stdio,
// from the plugin's spawn to a completed MCP handshake, exactly as hermes
// connects one, without a sandbox and with one. "sandbox" is the default
// block with network: none (Landlock with $HERMES_HOME and the default
// deny list cut out of a read-only /, seccomp, the default limits, the
// launcher's re-exec; as root a pids cgroup); "sandbox-hosts" is a hosts
// list instead (a network namespace of its own and the filtering proxy).
//
// $HERMES_HOME is where a person's is, a folder in their home (made in the
// user's cache folder, removed after), so that Landlock cuts open / and the
// home folders on its way, as it does for ~/.hermes. "sandbox-crowded" is
// the default block again with $HERMES_HOME in the temporary folder, as
// tests have it: every entry of the temporary folder is then a Landlock
// rule of its own (a thousand on a machine that keeps many; rules reports
// how many), which is what a never-readable path below a crowded folder
// costs.
//
// Each iteration connects all four, in rotating order, and closes them (not
// timed); the warm-up logs what the transport reported in force for each.
// The *-start-ms figures are medians; sandbox-extra-ms is the difference of
// the medians; the ratios are sandboxed / plain. There is no floor: the
// figures are recorded in docs/BENCHMARKS.md.
func BenchmarkSandboxStart(b *testing.B) {
	dir := bins(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	server := filepath.Join(dir, "hermes-testserver")
	home := homeLikeAPersons(b)
	crowded := b.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home})
	defer sup.KillAll()
	supCrowded := supervisor.New(supervisor.Options{Home: crowded})
	defer supCrowded.KillAll()
	entry := func(block map[string]any) *config.Server { return sandboxEntry(b, server, block) }
	entries := [4]*config.Server{
		entry(nil),
		entry(map[string]any{"network": "none"}),
		entry(map[string]any{"network": []any{"api.example.com"}}),
		entry(map[string]any{"network": "none"}),
	}
	names := [4]string{"plain", "sandbox", "sandbox-hosts", "sandbox-crowded"}
	rules := 0
	start := func(j int, logAs string) time.Duration {
		srv, h, su := entries[j], home, sup
		if j == 3 {
			h, su = crowded, supCrowded
		}
		t0 := time.Now()
		s, err := session.Connect(context.Background(), session.PlanFor(srv, h, nil), session.Deps{Home: h, Supervisor: su})
		took := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if (srv.Sandbox != nil) != (s.Sandbox() != nil) {
			b.Fatalf("sandbox asked %v, in force %v", srv.Sandbox != nil, s.Sandbox())
		}
		if logAs != "" {
			b.Logf("%s: %v", logAs, s.Sandbox())
			if m := landlockRulesRE.FindStringSubmatch(s.Sandbox().String()); j == 3 && m != nil {
				rules, _ = strconv.Atoi(m[1])
			}
		}
		s.Close()
		return took
	}
	for j := range entries { // warm the page cache and the remembered revision
		start(j, names[j])
	}
	var took [4][]time.Duration
	i := 0
	for b.Loop() {
		for k := range 4 {
			j := (i + k) % 4
			took[j] = append(took[j], start(j, ""))
		}
		i++
	}
	plain, sandboxed, hosts, crowdedStart := median(took[0]), median(took[1]), median(took[2]), median(took[3])
	b.ReportMetric(ms(plain), "plain-start-ms")
	b.ReportMetric(ms(sandboxed), "sandbox-start-ms")
	b.ReportMetric(ms(hosts), "sandbox-hosts-start-ms")
	b.ReportMetric(ms(crowdedStart), "sandbox-crowded-start-ms")
	b.ReportMetric(ms(sandboxed-plain), "sandbox-extra-ms")
	checkFloor(b, "sandboxed start / plain start", "sandbox/plain", float64(sandboxed)/float64(plain), 1.2)
	b.ReportMetric(float64(hosts)/float64(plain), "hosts/plain")
	b.ReportMetric(float64(crowdedStart)/float64(plain), "crowded/plain")
	b.ReportMetric(float64(rules), "crowded-rules")
}

// landlockRulesRE finds the number of rules in a sandbox report.
var landlockRulesRE = regexp.MustCompile(`\((\d+) Landlock rules in all\)`)

// homeLikeAPersons is a $HERMES_HOME for a benchmark in a folder of the
// user's home (their cache folder), removed afterwards; the temporary
// folder when there is none or it cannot be written.
func homeLikeAPersons(b *testing.B) string {
	if cache, err := os.UserCacheDir(); err == nil {
		if err := os.MkdirAll(cache, 0o700); err == nil {
			if dir, err := os.MkdirTemp(cache, "hermes-bench-"); err == nil {
				b.Cleanup(func() { _ = os.RemoveAll(dir) })
				return dir
			}
		}
	}
	b.Logf("no cache folder in the home to put $HERMES_HOME in: it is in the temporary folder")
	return b.TempDir()
}

// sandboxEntry is the benchmarks' entry of the Go test server at server,
// with the sandbox: block block (nil: none).
func sandboxEntry(b *testing.B, server string, block map[string]any) *config.Server {
	srv := &config.Server{Name: "bench", Transport: "stdio", Command: server,
		Enabled: true, ConnectTimeout: 20 * time.Second, Timeout: time.Minute}
	if block != nil {
		sb, err := config.ParseSandbox(block, nil)
		if err != nil {
			b.Fatal(err)
		}
		srv.Sandbox = sb
	}
	return srv
}

// BenchmarkLauncherRSS measures the resident memory of the stdio plugin's
// launcher, hermes-stdio-launcher, while it waits as the init of a server's
// pid namespace (every stdio server has one where the kernel allows it):
// the Go test server connected through hermes-transport-stdio as hermes
// connects one, plain and with the default sandbox (network: none), and
// the launcher's /proc/PID/status and smaps_rollup read while the server
// runs. The floor is testdata/forkwait, the smallest Go program that
// starts a child and waits for it, built and run the same way (stripped,
// GOMAXPROCS=1), measured in the same iteration. Reported, medians of the
// iterations: launcher-RSS-MB (VmRSS, plain; the goal is ≤ 2 MB),
// sandboxed-launcher-RSS-MB, launcher-anon-MB (RssAnon: its own pages;
// the rest, RssFile, are the binary's pages, shared by every launcher and
// the page cache), launcher-PSS-MB (with the pages shared counted once
// among those that map them), forkwait-RSS-MB, and the ratio of the two
// VmRSS.
func BenchmarkLauncherRSS(b *testing.B) {
	dir := bins(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	forkwait := filepath.Join(b.TempDir(), "forkwait")
	if err := goBuild("build", "-trimpath", "-ldflags", "-s -w", "-o", forkwait, "./host/bench/testdata/forkwait"); err != nil {
		b.Fatal(err)
	}
	server := filepath.Join(dir, "hermes-testserver")
	home := b.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home})
	defer sup.KillAll()
	entry := func(block map[string]any) *config.Server { return sandboxEntry(b, server, block) }
	plain, sandboxed := entry(nil), entry(map[string]any{"network": "none"})
	launcherOf := func(s *session.Session) int {
		pid := childNamed(s.Plugin.Pid(), launcherName)
		if pid == 0 {
			b.Fatalf("no %s under the stdio plugin (pid %d): is the server in a pid namespace of its own?", launcherName, s.Plugin.Pid())
		}
		return pid
	}
	var rss, sbRSS, anon, pss, floor []float64
	for b.Loop() {
		s, err := session.Connect(context.Background(), session.PlanFor(plain, home, nil), session.Deps{Home: home, Supervisor: sup})
		if err != nil {
			b.Fatal(err)
		}
		pid := launcherOf(s)
		st := procStatus(pid)
		rss, anon = append(rss, st["VmRSS"]), append(anon, st["RssAnon"])
		pss = append(pss, smapsRollup(pid)["Pss"])
		s.Close()

		s, err = session.Connect(context.Background(), session.PlanFor(sandboxed, home, nil), session.Deps{Home: home, Supervisor: sup})
		if err != nil {
			b.Fatal(err)
		}
		sbRSS = append(sbRSS, procStatus(launcherOf(s))["VmRSS"])
		s.Close()

		floor = append(floor, forkwaitRSS(b, forkwait, server))
	}
	b.ReportMetric(median(rss), "launcher-RSS-MB")
	b.ReportMetric(median(sbRSS), "sandboxed-launcher-RSS-MB")
	b.ReportMetric(median(anon), "launcher-anon-MB")
	b.ReportMetric(median(pss), "launcher-PSS-MB")
	b.ReportMetric(median(floor), "forkwait-RSS-MB")
	b.ReportMetric(median(rss)/median(floor), "launcher/forkwait")
	checkFloor(b, "launcher RSS / 2 MB", "launcher-RSS/2MB", median(rss)/2, 1)
}

// forkwaitRSS runs forkwait with the test server as its child (its stdin
// kept open, so it waits), reads forkwait's VmRSS once the server has
// answered, and ends both.
func forkwaitRSS(b *testing.B, forkwait, server string) float64 {
	cmd := exec.Command(forkwait, server)
	cmd.Env = []string{"GOMAXPROCS=1"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// One request answered: the child runs, and forkwait is waiting.
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		b.Fatalf("forkwait's child did not answer: %v", err)
	}
	rss := procStatus(cmd.Process.Pid)["VmRSS"]
	stdin.Close()
	return rss
}

// childNamed is the first child of pid whose command is name (as the
// kernel keeps it: its first 15 bytes), 0 for none.
func childNamed(pid int, name string) int {
	if len(name) > 15 {
		name = name[:15]
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(kids)) {
			comm, err := os.ReadFile("/proc/" + f + "/comm")
			if err == nil && strings.TrimSpace(string(comm)) == name {
				n, _ := strconv.Atoi(f)
				return n
			}
		}
	}
	return 0
}

// procStatus reads the kB fields of /proc/PID/status, in MB.
func procStatus(pid int) map[string]float64 { return kbFields(fmt.Sprintf("/proc/%d/status", pid)) }

// smapsRollup reads the kB fields of /proc/PID/smaps_rollup, in MB.
func smapsRollup(pid int) map[string]float64 {
	return kbFields(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
}

// kbFields reads "Name:  123 kB" lines of a /proc file, in MB.
func kbFields(path string) map[string]float64 {
	out := map[string]float64{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == "kB" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			out[strings.TrimSuffix(f[0], ":")] = kb / 1024
		}
	}
	return out
}
