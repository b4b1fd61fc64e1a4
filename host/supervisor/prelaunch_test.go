package supervisor_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// stdioChildren returns the pids of this test process's children that run
// the stdio transport plugin (a zombie runs nothing).
func stdioChildren(t *testing.T) []int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "children"))
		if err != nil {
			continue // the thread ended
		}
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			exe, err := os.Readlink("/proc/" + f + "/exe")
			if err == nil && filepath.Base(exe) == "hermes-transport-stdio" && !slices.Contains(pids, pid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// The next Launch of a prelaunched spec returns the prelaunched plugin,
// whose process was running before Launch was called; no second one
// starts, and a Launch of another spec is a plugin of its own.
func TestPrelaunchTakenByLaunch(t *testing.T) {
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	s := supervisor.New(supervisor.Options{Home: t.TempDir()})
	defer s.KillAll()
	s.Prelaunch(stdioSpec("pre"), nil)
	s.Prelaunch(stdioSpec("pre"), nil) // once per spec
	var early []int
	testwait.For(t, time.Minute, "the prelaunched plugin's process", func() bool {
		early = stdioChildren(t)
		return len(early) > 0
	})
	p, err := s.Launch(stdioSpec("pre"))
	if err != nil {
		t.Fatal(err)
	}
	if got := stdioChildren(t); len(early) != 1 || p.Pid() != early[0] || len(got) != 1 {
		t.Fatalf("Launch returned plugin %d; prelaunched %v, running now %v: want the prelaunched one, alone", p.Pid(), early, got)
	}
	q, err := s.Launch(stdioSpec("other"))
	if err != nil {
		t.Fatal(err)
	}
	if q.Pid() == p.Pid() {
		t.Fatal("a Launch of another spec took the prelaunched plugin")
	}
}

// A prelaunched plugin that no Launch takes does not outlive KillAll,
// whether its start was over or still running when KillAll came; a
// prelaunch after KillAll starts nothing.
func TestPrelaunchNotTakenIsKilled(t *testing.T) {
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	for _, wait := range []bool{true, false} {
		s := supervisor.New(supervisor.Options{Home: t.TempDir()})
		s.Prelaunch(stdioSpec("unused"), nil)
		if wait {
			testwait.For(t, time.Minute, "the prelaunched plugin's process", func() bool { return len(stdioChildren(t)) == 1 })
		}
		s.KillAll()
		testwait.For(t, time.Minute, "no plugin left after KillAll", func() bool { return len(stdioChildren(t)) == 0 })
		s.Prelaunch(stdioSpec("late"), nil)
		if _, err := s.Launch(stdioSpec("late")); err == nil {
			t.Fatal("Launch after KillAll succeeded")
		}
		if got := stdioChildren(t); len(got) != 0 {
			t.Fatalf("a prelaunch after KillAll started plugins %v", got)
		}
	}
}
