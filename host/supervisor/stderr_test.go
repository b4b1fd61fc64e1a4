package supervisor_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testlog"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// fakeTerminal makes os.Stderr a pipe for the test's length and returns
// what is written to it.
func fakeTerminal(t *testing.T) *testlog.Buffer {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	got := &testlog.Buffer{}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(got, r); close(done) }()
	t.Cleanup(func() {
		os.Stderr = old
		w.Close()
		<-done
		r.Close()
	})
	return got
}

// brokenPluginConn makes a go-plugin client connection the way the host
// does (its multiplexer logs to the os.Stderr of this moment) and has the
// other end send a frame yamux refuses, so that yamux logs an error.
func brokenPluginConn(t *testing.T) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	host, peer := fileConn(t, fds[0]), fileConn(t, fds[1])
	t.Cleanup(func() { host.Close(); peer.Close() })
	c, err := plugin.NewRPCClient(host, map[string]plugin.Plugin{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A header of protocol version 1: "[ERR] yamux: Invalid protocol version: 1".
	if _, err := peer.Write([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
}

func fileConn(t *testing.T, fd int) net.Conn {
	t.Helper()
	f := os.NewFile(uintptr(fd), "sock")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.For(t, 10*time.Second, what, cond)
}

// go-plugin's multiplexer writes its errors straight to os.Stderr: on a
// terminal, stray "[ERR] yamux: ..." lines after a plugin goes away.
func TestYamuxWritesToStderrUnlessRouted(t *testing.T) {
	term := fakeTerminal(t)
	brokenPluginConn(t)
	waitFor(t, "yamux error on stderr", func() bool { return strings.Contains(term.String(), "[ERR] yamux: Invalid protocol version") })
}

// Routed, the same error goes to the host log at its level, and nothing
// reaches the terminal; routed back, lines reach the terminal again.
func TestRouteStderrKeepsPluginInternalsInTheLog(t *testing.T) {
	term := fakeTerminal(t)
	logs := &testlog.Buffer{}
	rt, err := supervisor.RouteStderr()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	rt.To(hclog.New(&hclog.LoggerOptions{Name: "hermes", Level: hclog.Info, Output: logs}))
	brokenPluginConn(t)
	waitFor(t, "yamux error in the log", func() bool { return strings.Contains(logs.String(), "yamux: Invalid protocol version: 1") })
	if got := term.String(); got != "" {
		t.Fatalf("reached the terminal: %q", got)
	}
	if line := logs.String(); !strings.Contains(line, "[ERROR] hermes: yamux: Invalid protocol version: 1") {
		t.Errorf("log line %q: want the error level and no timestamp of the standard logger", line)
	}
	rt.To(nil)
	fmt.Fprintln(os.Stderr, "back on the terminal")
	rt.Close()
	waitFor(t, "the line on the terminal", func() bool { return term.String() != "" })
	if got := term.String(); got != "back on the terminal\n" {
		t.Fatalf("terminal got %q after routing back", got)
	}
}
