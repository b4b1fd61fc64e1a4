package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/proxy"
)

// buildProxy builds this command into a temporary folder.
func buildProxy(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), proxy.Binary)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", proxy.Binary, err, out)
	}
	return bin
}

// startProxy starts the built proxy as the plugin does: its control
// socket and a loopback listener as its descriptors, an empty
// environment. It returns the proxy's address, the plugin's end of the
// control socket (a raw descriptor) and the process.
func startProxy(t *testing.T, bin string, hosts ...string) (string, int, *exec.Cmd) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctl := os.NewFile(uintptr(fds[1]), "proxy-control")
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the duplicate in lf keeps listening
	var stderr strings.Builder
	cmd := exec.Command(bin, proxy.Args("test.proxy", "debug", hosts)...)
	cmd.Env = []string{}
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{ctl, lf}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctl.Close()
	lf.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		unix.Close(fds[0])
		if t.Failed() {
			t.Logf("proxy's stderr:\n%s", stderr.String())
		}
	})
	return addr, fds[0], cmd
}

// pending returns the messages queued on the plugin's end of the control
// socket, without waiting for more.
func pending(t *testing.T, fd int) []string {
	t.Helper()
	var out []string
	buf := make([]byte, proxy.MaxMessageBytes)
	for {
		n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) || n == 0 && err == nil {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(buf[:n]))
	}
}

// The proxy as a process: it serves the listener it was given, tells the
// plugin each target it refused before the client hears the 403 (so a
// plugin that drains its socket once the server has ended knows them
// all), the first proxy.MaxRefused distinct ones only, and exits when the
// plugin's end of its control socket closes.
func TestProxyProcess(t *testing.T) {
	web := site(t)
	addr, ctl, cmd := startProxy(t, buildProxy(t), web)
	if code, body := get(t, addr, "http://"+web+"/"); code != 200 || body != "hi "+web {
		t.Fatalf("allowed host through the proxy process: %d %q", code, body)
	}
	if got := pending(t, ctl); len(got) != 0 {
		t.Fatalf("reported %q for an allowed host", got)
	}
	var want []string
	for i := range proxy.MaxRefused + 3 {
		target := fmt.Sprintf("refused%d.test:80", i%(proxy.MaxRefused+2))
		if code, _ := get(t, addr, "http://"+target+"/"); code != 403 {
			t.Fatalf("%s: %d, want 403", target, code)
		}
		reported := len(want) < proxy.MaxRefused && !slices.Contains(want, target)
		if reported {
			want = append(want, target)
		}
		// Reported before the 403 came: queued by now.
		got := pending(t, ctl)
		if reported && (len(got) != 1 || got[0] != target) || !reported && len(got) != 0 {
			t.Fatalf("after refusing %s (reported: %v) the socket held %q", target, reported, got)
		}
	}
	unix.Close(ctl)
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("the proxy ended with %v once its control socket closed, want status 0", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("the listener still accepts after the proxy exited")
	}
}

// Started without its descriptors (by hand), or by a plugin of another
// build, it serves nothing and says why.
func TestProxyRefusesToRunAlone(t *testing.T) {
	bin := buildProxy(t)
	out, err := exec.Command(bin).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "started by the stdio plugin") {
		t.Fatalf("alone: %v %q", err, out)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	ctl := os.NewFile(uintptr(fds[1]), "ctl")
	defer ctl.Close()
	cmd := exec.Command(bin, "hermes-stdio-proxy/0", "x", "debug", "a.example")
	cmd.ExtraFiles = []*os.File{ctl}
	out, err = cmd.CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "different builds") {
		t.Fatalf("another build's arguments: %v %q", err, out)
	}
}
