package offered_test

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/offered"
)

const helperEnv = "HERMES_OFFERED_WRITER"

var writerTools = func() []mcpvalue.Tool {
	var out []mcpvalue.Tool
	for i := 0; i < 4; i++ {
		for _, p := range []string{"a", "b"} {
			out = append(out, tool(fmt.Sprintf("%s%d", p, i), "tool"))
		}
	}
	return out
}()

// write is what each writer does: records of servers of its own, and
// approvals of tools of its own of one shared server.
func write(home, who string) error {
	st := offered.Open(home, nil)
	for i := 0; i < 4; i++ {
		srv := server(fmt.Sprintf("%s-srv%d", who, i))
		if err := st.Save(record(srv, tool("t", "v"))); err != nil {
			return err
		}
		if _, err := st.Approve("shared", writerTools, []string{fmt.Sprintf("%s%d", who, i)}, "test"); err != nil {
			return err
		}
	}
	return nil
}

// TestWriterProcess is the second process of
// TestTwoProcessesLoseNothing; it does nothing on its own.
func TestWriterProcess(t *testing.T) {
	home := os.Getenv(helperEnv)
	if home == "" {
		t.Skip("run by TestTwoProcessesLoseNothing")
	}
	if err := write(home, "b"); err != nil {
		t.Fatal(err)
	}
}

// Two hermes processes writing the store at once (records of their own
// servers, approvals of different tools of one server) lose nothing.
func TestTwoProcessesLoseNothing(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+home)
	var wg sync.WaitGroup
	var childErr error
	var childOut []byte
	wg.Add(1)
	go func() {
		defer wg.Done()
		childOut, childErr = cmd.CombinedOutput()
	}()
	if err := write(home, "a"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if childErr != nil {
		t.Fatalf("second process: %v\n%s", childErr, childOut)
	}
	st := offered.Open(home, nil)
	for _, who := range []string{"a", "b"} {
		for i := 0; i < 4; i++ {
			if _, err := st.Load(server(fmt.Sprintf("%s-srv%d", who, i))); err != nil {
				t.Fatalf("record of %s-srv%d lost: %v", who, i, err)
			}
		}
	}
	b, err := st.Baseline("shared")
	if err != nil || len(b.Tools) != len(writerTools) {
		t.Fatalf("approvals: %v, %d of %d kept", err, len(b.Tools), len(writerTools))
	}
}
