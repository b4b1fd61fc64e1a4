package serve

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killOwnGroup kills the rest of the plugin's group but not the plugin: a
// process leading its group with a server in it ends the server and exits
// with status 0. It took itself too, and a host still running logged the
// plugin's "signal: killed" as a crash when it finished after a detach.
func TestKillOwnGroupSparesThePlugin(t *testing.T) {
	if os.Getenv("HERMES_SERVE_TEST_GROUP_LEADER") == "1" {
		groupLeader()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillOwnGroupSparesThePlugin$")
	cmd.Env = append(os.Environ(), "HERMES_SERVE_TEST_GROUP_LEADER=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("the group leader ended with %v, want status 0; stderr:\n%s", err, ee.Stderr)
	}
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the group leader printed %q, want its child's pid", out)
	}
	// The orphan is reaped by whoever adopts it; a zombie has ended too.
	deadline := time.Now().Add(time.Minute)
	for alive(child) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the group leader's child %d outlived it", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupLeader is the plugin of TestKillOwnGroupSparesThePlugin: it starts
// a child in its group, prints the child's pid and exits as Exit does.
func groupLeader() {
	c := exec.Command("sleep", "600")
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(c.Process.Pid)
	killOwnGroup()
	os.Exit(0)
}

// alive reports whether pid is a process that has not exited.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
