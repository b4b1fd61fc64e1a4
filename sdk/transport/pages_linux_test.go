package transport_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// A plugin process (the tcp example, built from this tree) gives back the
// resident pages of its binary after the first frame the host sends, once its
// connection is open, and goes on serving: its RssFile drops then and
// stays below what it was, calls after it answered (sdk.KeepPagesEnv is
// serve's unit test's). Built position-independent,
// its read-only data relocated at load (copied on write, then made
// read-only) is kept, or the plugin would read unrelocated pointers and
// crash; the rest is given back as well.
func TestPluginGivesBackItsPages(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skip("no /proc/self/smaps")
	}
	for _, mode := range []string{"exe", "pie"} {
		t.Run(mode, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "hermes-transport-tcp")
			if out, err := exec.Command("go", "build", "-buildmode="+mode, "-o", bin, "../examples/tcp").CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			givesBack(t, bin, mode == "pie")
		})
	}
}

// givesBack runs the plugin at bin and serves calls through it;
// relocated says that it has read-only data relocated at load, which must
// stay.
func givesBack(t *testing.T, bin string, relocated bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); sdktest.ServeReference(c, c) }()
		}
	}()
	cfg := transport.Config{Server: "ref", Transport: "tcp", URL: "tcp://" + ln.Addr().String()}
	ctx := context.Background()
	p := sdktest.Start(t, bin)
	pid := childRunning(t, bin)
	s, err := p.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	open := rssFileKB(t, pid)
	// The first frame from the host; the pages go back a while after it
	// (serve.ShedDelay): the drop is the event waited for.
	if err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	first := rssFileKB(t, pid)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(time.Minute); first >= open; first = rssFileKB(t, pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the plugin's RssFile did not drop within a minute of the first frame: %d kB, %d kB once open", first, open)
		}
		<-tick.C
	}
	for i := range 200 {
		msg := "hello " + strconv.Itoa(i)
		got, err := s.CallTool(ctx, "echo", map[string]any{"message": msg})
		if err != nil || got != msg {
			t.Fatalf("echo %q after the pages went: %q, %v", msg, got, err)
		}
	}
	served := rssFileKB(t, pid)
	t.Logf("RssFile: %d kB once open, %d kB after the pages went, %d kB after 200 calls", open, first, served)
	if served >= open {
		t.Errorf("the plugin's RssFile came back to %d kB serving calls (%d kB once open)", served, open)
	}
	if kb := relocatedKB(t, pid, bin); relocated && kb == 0 {
		t.Errorf("the plugin's relocated read-only data is gone (no read-only mapping of %s with pages of its own)", bin)
	}
}

// childRunning returns the pid of the child of this process that runs bin.
func childRunning(t *testing.T, bin string) int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink("/proc/" + d.Name() + "/exe")
		if err != nil || exe != bin {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 1 && f[1] == self {
			return pid
		}
	}
	t.Fatalf("no child process runs %s", bin)
	return 0
}

// relocatedKB sums the pages of a process's own (Anonymous) in the
// read-only mappings of bin: relocations applied at load.
func relocatedKB(t *testing.T, pid int, bin string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps")
	if err != nil {
		t.Fatal(err)
	}
	kb, ours := 0, false
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			ours = strings.HasSuffix(l, " "+bin) && f[1] == "r--p"
		case ours && len(f) >= 2 && f[0] == "Anonymous:":
			n, _ := strconv.Atoi(f[1])
			kb += n
		}
	}
	return kb
}

// rssFileKB reads a process's resident file pages (RssFile, in kB).
func rssFileKB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("RssFile: %q", l)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/PID/status")
	return 0
}
