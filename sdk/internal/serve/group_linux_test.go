package serve

import (
	"errors"
	"fmt"
	"io"
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
	// held is open in the leader and in its child: its read end ends
	// when both are gone.
	held, hold, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillOwnGroupSparesThePlugin$")
	cmd.Env = append(os.Environ(), "HERMES_SERVE_TEST_GROUP_LEADER=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.ExtraFiles = []*os.File{hold}
	out, err := cmd.Output()
	hold.Close()
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
	gone := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, held); close(gone) }()
	select {
	case <-gone:
	case <-time.After(time.Minute):
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("the group leader's child %d outlived it", child)
	}
}

// groupLeader is the plugin of TestKillOwnGroupSparesThePlugin: it starts
// a child in its group (holding the test's pipe, descriptor 3), prints the
// child's pid and exits as Exit does.
func groupLeader() {
	c := exec.Command("sleep", "600")
	c.ExtraFiles = []*os.File{os.NewFile(3, "held")}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(c.Process.Pid)
	killOwnGroup()
	os.Exit(0)
}
