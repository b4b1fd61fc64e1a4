package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// init turns this process into the sandbox launcher when the plugin
// started it as one (EnvVar set), and never returns then: it executes the
// server or exits. It runs before the initialization of every package that
// sorts after this one or needs something that does (gRPC, protobuf,
// go-plugin), and before main.
func init() {
	mode, ok := os.LookupEnv(EnvVar)
	if !ok {
		return
	}
	runtime.LockOSThread() // every restriction below is per thread, and execve runs on this one
	os.Exit(run(mode))
}

// run does the work; it returns only on failure (an exit status) or after
// ModeNetnsProbe.
func run(mode string) int {
	_ = os.Unsetenv(EnvVar)
	unix.CloseOnExec(StatusFD)
	fail := func(step string, err error) int {
		sendStatus(Status{Step: step, Error: err.Error()}, -1)
		return 126
	}
	if mode == ModeNetnsProbe {
		if err := loopbackUp(); err != nil {
			return fail("netns", err)
		}
		return 0
	}
	if mode == ModePidnsProbe {
		if err := mountProc(); err != nil {
			return fail("pidns", err)
		}
		return 0
	}
	if mode != ModeRun {
		return fail("launcher", fmt.Errorf("unknown launcher mode %q", mode))
	}
	plan, err := readPlan()
	if err != nil {
		return fail("plan", err)
	}
	// 0. The pid namespace: its own /proc, so the server's pids and what
	// /proc shows agree.
	if plan.Init {
		if err := mountProc(); err != nil {
			return fail("pidns", err)
		}
	}
	// 1. The network namespace: loopback up, the proxy's listener handed
	// to the plugin.
	if plan.NetNS {
		port, err := netnsListener()
		if err != nil {
			return fail("netns", err)
		}
		plan.ProxyPort = port
	}
	env := plan.Env
	if plan.Net == NetworkHosts {
		env = ServerEnv(env, "", plan.ProxyPort)
	}
	if plan.Bare {
		// No sandbox: only the capability the namespace's /proc needed
		// (ambient, as another user than root) goes.
		if err := clearAmbient(); err != nil {
			return fail("capabilities", err)
		}
	} else if step, err := confine(plan); err != nil {
		return fail(step, err)
	}
	// 7. Nothing open but stdin, stdout and stderr reaches the server.
	if err := closeInherited(); err != nil {
		return fail("descriptors", err)
	}
	// 8. The server.
	if plan.Init {
		return serveAsInit(plan.Path, plan.Argv, env)
	}
	err = syscall.Exec(plan.Path, plan.Argv, env)
	return fail("exec", execError(err))
}

// confine applies the sandbox of plan to the calling thread (and the
// resource limits to the process); on failure it returns the step.
func confine(plan *Plan) (string, error) {
	// 2. Resource limits (RLIMIT_NPROC before the capabilities go: it
	// is the last moment CAP_SYS_RESOURCE could matter).
	l := plan.Limits
	if err := setLimits(l.MemoryBytes, l.CPUSeconds, l.OpenFiles, l.Processes, plan.NProc); err != nil {
		return "limits", err
	}
	// 3. No capabilities, 4. no_new_privs.
	if err := dropCapabilities(); err != nil {
		return "capabilities", err
	}
	if err := setNoNewPrivs(); err != nil {
		return "no_new_privs", err
	}
	// 5. Landlock.
	if plan.ABI > 0 {
		var ports []int
		if plan.Net == NetworkHosts {
			ports = []int{plan.ProxyPort}
		}
		restricted := plan.Net != NetworkAll
		if err := landlockRestrict(plan.ABI, plan.Rules, restricted, ports, restricted); err != nil {
			return "landlock", err
		}
	}
	// 6. seccomp.
	if plan.Seccomp {
		if err := installSeccomp(plan.Net); err != nil {
			return "seccomp", err
		}
	}
	return "", nil
}

// readPlan reads the plan the plugin wrote to PlanFD.
func readPlan() (*Plan, error) {
	f := os.NewFile(PlanFD, "sandbox-plan")
	if f == nil {
		return nil, errors.New("no plan descriptor")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPlanBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxPlanBytes {
		return nil, errors.New("plan too large")
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	if p.Path == "" || len(p.Argv) == 0 {
		return nil, errors.New("plan names no command")
	}
	return &p, nil
}

// sendStatus sends msg to the plugin, with the descriptor fd when fd >= 0.
func sendStatus(msg Status, fd int) {
	b, _ := json.Marshal(msg)
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
	}
	_ = unix.Sendmsg(StatusFD, b, oob, nil, 0)
}

// loopbackUp brings the loopback interface of this network namespace up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket for the loopback interface: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read the loopback interface's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring the loopback interface up: %w", err)
	}
	return nil
}

// netnsListener brings loopback up, listens on 127.0.0.1 (a free port of
// this namespace), hands the socket to the plugin and returns its port.
func netnsListener() (int, error) {
	if err := loopbackUp(); err != nil {
		return 0, err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("proxy socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return 0, fmt.Errorf("bind the proxy socket: %w", err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return 0, fmt.Errorf("listen on the proxy socket: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		return 0, errors.New("proxy socket has no IPv4 address")
	}
	sendStatus(Status{Listener: in4.Port}, fd)
	return in4.Port, nil
}
