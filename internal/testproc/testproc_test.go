package testproc

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestSeesAChildComeAndGo(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) || Parent(pid) != os.Getpid() {
		t.Fatalf("child %d: alive %v, parent %d", pid, Alive(pid), Parent(pid))
	}
	if !slices.Contains(Children(os.Getpid()), pid) || !slices.Contains(Descendants(os.Getpid()), pid) {
		t.Fatal("child not listed")
	}
	_ = cmd.Process.Kill()
	// Unreaped, it is a zombie: not alive.
	WaitGone(t, "killed child", 10*time.Second, pid)
	_ = cmd.Wait()
	if _, ok := Read(pid); ok {
		t.Fatal("reaped child still has a stat")
	}
}
