package main

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
	"github.com/hermes-agent/hermes/sdk/selfmem"
)

func main() {
	// Every restriction below is per thread, and execve (or the init's
	// fork of the server) runs on this one.
	runtime.LockOSThread()
	mode := ""
	if len(os.Args) == 2 {
		mode = os.Args[1]
	}
	os.Exit(run(mode))
}

// run does the work; it returns only on failure (an exit status), after a
// probe, or as an init once its server has ended.
func run(mode string) int {
	if _, err := unix.FcntlInt(launcher.StatusFD, unix.F_GETFD, 0); err != nil {
		os.Stderr.WriteString(launcher.Binary + " is started by the stdio plugin (hermes-transport-stdio) to launch an MCP server; it does nothing by itself\n")
		return 2
	}
	unix.CloseOnExec(launcher.StatusFD)
	// Until Proceed is read, the plugin will send it (or close its side)
	// whatever happens here: a launcher that fails before must read it
	// before exiting, or its unread Proceed resets the socket and the
	// plugin's read of the status just sent fails with ECONNRESET (the
	// refusal lost; seen under load).
	proceedDue := mode == launcher.ModeRun
	fail := func(step string, err error) int {
		sendStatus(launcher.Status{Step: step, Error: err.Error()}, -1)
		if proceedDue {
			awaitPluginWord()
		}
		return 126
	}
	switch mode {
	case launcher.ModeNetnsProbe:
		if err := loopbackUp(); err != nil {
			return fail("netns", err)
		}
		return 0
	case launcher.ModeRun:
	default:
		return fail("launcher", errors.New("unknown launcher mode "+quote(mode)+" (the plugin and its launcher are of different builds: reinstall hermes)"))
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
	if plan.Net == launcher.NetworkHosts {
		env = launcher.ServerEnv(env, "", plan.ProxyPort)
	}
	// The launcher's own code and read-only data, to give back once it
	// only waits as an init (listed now: the sandbox may forbid reading
	// /proc).
	var code []selfmem.Span
	if plan.Init {
		code = selfmem.Find(selfmem.Code | selfmem.ReadOnlyData)
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
	// 7. The plugin's word that the server may start (it has moved the
	// launcher into the server's pids cgroup).
	err = awaitProceed()
	proceedDue = false
	if err != nil {
		return fail("proceed", err)
	}
	// 8. Nothing open but stdin, stdout and stderr reaches the server.
	if err := closeInherited(); err != nil {
		return fail("descriptors", err)
	}
	// 9. The server.
	if plan.Init {
		return serveAsInit(plan.Path, plan.Argv, env, code)
	}
	err = syscall.Exec(plan.Path, plan.Argv, env)
	return fail("exec", execError(err))
}

// confine applies the sandbox of plan to the calling thread (and the
// resource limits to the process); on failure it returns the step.
func confine(plan *launcher.Plan) (string, error) {
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
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return "no_new_privs", wrap("set no_new_privs", err)
	}
	// 5. Landlock.
	if plan.ABI > 0 {
		var ports []int
		if plan.Net == launcher.NetworkHosts {
			ports = []int{plan.ProxyPort}
		}
		restricted := plan.Net != launcher.NetworkAll
		if err := landlockRestrict(plan.ABI, plan.Rules, restricted, ports, restricted); err != nil {
			return "landlock", err
		}
	}
	// 6. seccomp: the filters the plugin assembled, in order.
	for _, f := range plan.Seccomp {
		if err := loadFilter(f); err != nil {
			return "seccomp", err
		}
	}
	return "", nil
}

// readPlan reads the plan the plugin wrote to PlanFD, to its end.
func readPlan() (*launcher.Plan, error) {
	defer unix.Close(launcher.PlanFD)
	b := make([]byte, 0, 16<<10)
	for {
		if len(b) == cap(b) {
			if len(b) > launcher.MaxPlanBytes {
				return nil, errors.New("plan too large")
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(launcher.PlanFD, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, wrap("read the plan", err)
		}
		if n == 0 {
			break
		}
		b = b[:len(b)+n]
	}
	var p launcher.Plan
	if err := p.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return &p, nil
}

// awaitProceed waits for launcher.Proceed on the status socket; anything
// else, or the plugin's end closing, is an error.
func awaitProceed() error {
	buf := make([]byte, len(launcher.Proceed)+1)
	for {
		n, _, _, _, err := unix.Recvmsg(launcher.StatusFD, buf, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return wrap("wait for the plugin", err)
		}
		if n == 0 {
			return errorText("the plugin closed the status socket before the server could start")
		}
		if string(buf[:n]) != launcher.Proceed {
			return errorText("unexpected message from the plugin")
		}
		return nil
	}
}

// pluginWordWait bounds how long a failed launcher waits for the plugin's
// Proceed (or the end of its side) before it exits all the same.
const pluginWordWait = 10 * time.Second

// awaitPluginWord reads, and drops, the plugin's Proceed or the end of its
// side, within pluginWordWait, so that nothing unread is left in the
// status socket when the launcher exits.
func awaitPluginWord() {
	tv := unix.NsecToTimeval(pluginWordWait.Nanoseconds())
	_ = unix.SetsockoptTimeval(launcher.StatusFD, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	buf := make([]byte, len(launcher.Proceed)+1)
	for {
		_, _, _, _, err := unix.Recvmsg(launcher.StatusFD, buf, nil, 0)
		if err != unix.EINTR {
			return
		}
	}
}

// sendStatus sends msg to the plugin, with the descriptor fd when fd >= 0.
func sendStatus(msg launcher.Status, fd int) {
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
	}
	_ = unix.Sendmsg(launcher.StatusFD, launcher.AppendStatus(nil, msg), oob, nil, 0)
}

// execError explains a failed execve of the server.
func execError(err error) error {
	if err == unix.EACCES {
		return errors.New(err.Error() + " (inside the sandbox: is it below a deny_read path?)")
	}
	return err
}

// wrap says what failed: "what: err".
func wrap(what string, err error) error { return errors.New(what + ": " + err.Error()) }

// errorf is wrap with a hint after the error: "what: err hint".
func errorf(what string, err error, hint string) error {
	return errors.New(what + ": " + err.Error() + hint)
}

// errorText is an error of its own.
func errorText(s string) error { return errors.New(s) }

// quote bounds and quotes s for a message (strconv is not linked).
func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return `"` + s + `"`
}
