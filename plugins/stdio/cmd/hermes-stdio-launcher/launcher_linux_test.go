package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// buildLauncher builds this command, stripped as make build ships it.
func buildLauncher(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), launcher.Binary)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// started is a launcher running a plan.
type started struct {
	cmd    *exec.Cmd
	status *os.File
	stderr *bytes.Buffer
}

// startLauncher starts bin with plan, in a pid namespace of its own when
// plan.Init, with env as its own environment and stdout as the server's,
// and sends it launcher.Proceed.
func startLauncher(t *testing.T, bin string, plan launcher.Plan, env []string, stdout *os.File) *started {
	t.Helper()
	s := startHeld(t, bin, plan, env, stdout)
	// Nothing to move it into: the server may start.
	if _, err := s.status.Write([]byte(launcher.Proceed)); err != nil {
		t.Fatal(err)
	}
	return s
}

// startHeld is startLauncher without Proceed.
func startHeld(t *testing.T, bin string, plan launcher.Plan, env []string, stdout *os.File) *started {
	t.Helper()
	return startWith(t, bin, plan, env, stdout, nil)
}

// startWith is startHeld that, when beforePlan is set, calls it with the
// plugin's end of the status socket before the plan is written (the
// launcher is then still waiting for its plan).
func startWith(t *testing.T, bin string, plan launcher.Plan, env []string, stdout *os.File, beforePlan func(status *os.File)) *started {
	t.Helper()
	b, err := plan.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	planR, planW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	status, childStatus := os.NewFile(uintptr(fds[0]), "status"), os.NewFile(uintptr(fds[1]), "status")
	cmd := exec.Command(bin, launcher.ModeRun)
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{planR, childStatus} // launcher.PlanFD, launcher.StatusFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if plan.Init {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
		if os.Getuid() != 0 {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
			cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
			cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
			cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	planR.Close()
	childStatus.Close()
	if beforePlan != nil {
		beforePlan(status)
	}
	if _, err := planW.Write(b); err != nil {
		t.Fatal(err)
	}
	planW.Close()
	t.Cleanup(func() { status.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &started{cmd: cmd, status: status, stderr: &stderr}
}

// next reads the next status message; ok is false once the socket closed.
func (s *started) next(t *testing.T) (launcher.Status, bool) {
	t.Helper()
	buf := make([]byte, launcher.MaxStatusBytes)
	n, err := s.status.Read(buf)
	if n == 0 || err != nil {
		return launcher.Status{}, false
	}
	msg, err := launcher.ParseStatus(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	return msg, true
}

// allowedPackages are every package the launcher may link and initialise:
// the runtime's, the os, os/signal and syscall layers, x/sys/unix, the
// plan's package and sdk/selfmem (which links syscall only). Adding one
// costs every launcher its pages, resident beside every server; no fmt,
// encoding, net, gRPC, protobuf or the rest of the sdk.
var allowedPackages = strings.Fields(`
	internal/goarch unsafe internal/abi internal/unsafeheader internal/cpu internal/bytealg
	internal/byteorder internal/chacha8rand internal/coverage/rtcov internal/godebugs
	internal/goexperiment internal/goos internal/profilerecord internal/runtime/atomic
	internal/runtime/syscall/linux math/bits internal/strconv internal/runtime/cgroup
	internal/runtime/exithook internal/runtime/gc internal/runtime/sys internal/runtime/gc/scan
	internal/asan internal/msan internal/race internal/runtime/math internal/runtime/maps
	internal/runtime/pprof/label internal/stringslite internal/trace/tracev2 runtime
	internal/reflectlite errors sync/atomic internal/sync internal/synctest sync io iter
	unicode unicode/utf8 bytes math strconv reflect cmp slices encoding/binary sort strings
	internal/oserror syscall internal/bisect internal/godebug time path io/fs
	internal/filepathlite internal/syscall/unix internal/poll internal/syscall/execenv
	internal/testlog os context os/signal
	golang.org/x/sys/unix
	github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher
	github.com/hermes-agent/hermes/sdk/selfmem
	github.com/hermes-agent/hermes/plugins/stdio/cmd/hermes-stdio-launcher
`)

// The launcher links nothing beyond its allow-list.
func TestImportsStayLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if !slices.Contains(allowedPackages, p) {
			t.Errorf("the launcher links %s, which is not on its allow-list (allowedPackages): keep it out, or add it there with what it costs in resident memory (docs/BENCHMARKS.md, Sandbox)", p)
		}
	}
}

// The built launcher executes its server (its status socket closes on the
// execve) having initialised only packages of its allow-list: the
// property the plugin's launcher mode held with TestLauncherInitOrder.
func TestLauncherExecutesServer(t *testing.T) {
	bin := buildLauncher(t)
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to execute")
	}
	s := startLauncher(t, bin, launcher.Plan{Path: truePath, Argv: []string{"true"}, Net: launcher.NetworkAll, Bare: true},
		[]string{"GODEBUG=inittrace=1"}, nil)
	if msg, ok := s.next(t); ok {
		t.Fatalf("launcher reported %+v\nstderr:\n%s", msg, s.stderr)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("launcher or true: %v\nstderr:\n%s", err, s.stderr)
	}
	var inits []string
	sc := bufio.NewScanner(bytes.NewReader(s.stderr.Bytes()))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "init" {
			inits = append(inits, f[1])
		}
	}
	if !slices.Contains(inits, "runtime") {
		t.Fatalf("no init trace on stderr:\n%s", s.stderr)
	}
	for _, p := range inits {
		if !slices.Contains(allowedPackages, p) {
			t.Errorf("%s was initialised before the launcher executed the server", p)
		}
	}
}

// The launcher starts no server before the plugin's Proceed: with the
// plugin's end of the status socket closed instead (the plugin failed to
// move it into its pids cgroup), it says so and exits without executing
// anything.
func TestLauncherWaitsForProceed(t *testing.T) {
	bin := buildLauncher(t)
	marker := filepath.Join(t.TempDir(), "ran")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh(1) to execute")
	}
	s := startHeld(t, bin, launcher.Plan{Path: sh, Argv: []string{"sh", "-c", "echo > " + marker}, Net: launcher.NetworkAll, Bare: true}, nil, nil)
	if err := unix.Shutdown(int(s.status.Fd()), unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	msg, ok := s.next(t)
	if !ok || msg.Step != "proceed" || msg.Error == "" {
		t.Fatalf("launcher without Proceed reported %+v (ok %v), want a proceed failure\nstderr:\n%s", msg, ok, s.stderr)
	}
	if err := s.cmd.Wait(); err == nil {
		t.Fatal("launcher without Proceed exited 0")
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the server ran without Proceed: %v", err)
	}
}

// A launcher that fails before the server may start, with the plugin's
// Proceed already sent, still gets its failure to the plugin: it reads
// the Proceed before it exits. Left unread, the Proceed reset the socket
// and the plugin's read of the failure got ECONNRESET (seen under load,
// when the plugin's cgroup move finished before the launcher failed).
func TestLauncherFailureReachesThePluginAfterProceed(t *testing.T) {
	bin := buildLauncher(t)
	// An empty seccomp filter: refused in confine, before Proceed is read.
	plan := launcher.Plan{Path: "/bin/true", Argv: []string{"true"}, Net: launcher.NetworkAll, Seccomp: []launcher.Filter{{}}}
	s := startWith(t, bin, plan, nil, nil, func(status *os.File) {
		if _, err := status.Write([]byte(launcher.Proceed)); err != nil {
			t.Fatal(err)
		}
	})
	if err := s.cmd.Wait(); err == nil {
		t.Fatal("a launcher with a refused seccomp filter exited 0")
	}
	msg, ok := s.next(t)
	if !ok || msg.Step != "seccomp" || msg.Error == "" {
		t.Fatalf("after the launcher exited, the plugin read %+v (ok %v), want its seccomp failure\nstderr:\n%s", msg, ok, s.stderr)
	}
}

// As the init of a pid namespace, the launcher starts the server, says so,
// passes a SIGTERM on to it and reports its end.
func TestLauncherAsInit(t *testing.T) {
	bin := buildLauncher(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	s := startLauncher(t, bin, launcher.Plan{Path: sh, Argv: []string{"sh", "-c", `trap 'exit 7' TERM; echo ready; while :; do sleep 1; done`},
		Net: launcher.NetworkAll, Bare: true, Init: true}, []string{"GOMAXPROCS=1"}, outW)
	outW.Close()
	msg, ok := s.next(t)
	if !ok || !msg.Started {
		t.Fatalf("launcher said %+v (%v), want started\nstderr:\n%s", msg, ok, s.stderr)
	}
	// The server's trap is set once it says ready.
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("server said %q, %v", line, err)
	}
	if rss := status(t, s.cmd.Process.Pid, "VmRSS:"); rss != "" {
		t.Logf("launcher as init: VmRSS %s, RssAnon %s, RssFile %s, threads %s", rss,
			status(t, s.cmd.Process.Pid, "RssAnon:"), status(t, s.cmd.Process.Pid, "RssFile:"), status(t, s.cmd.Process.Pid, "Threads:"))
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	msg, ok = s.next(t)
	if !ok || msg.Exit == nil {
		t.Fatalf("launcher said %+v (%v), want the server's exit\nstderr:\n%s", msg, ok, s.stderr)
	}
	if ws := syscall.WaitStatus(*msg.Exit); ws.ExitStatus() != 7 {
		t.Fatalf("server's wait status %#x, want exit 7 (its SIGTERM trap)", *msg.Exit)
	}
	err = s.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("launcher ended with %v, want exit status 7", err)
	}
}

// status is one field of /proc/PID/status, "" when absent.
func status(t *testing.T, pid int, field string) string {
	b, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "status"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field) {
			return strings.TrimSpace(strings.TrimPrefix(line, field))
		}
	}
	return ""
}
