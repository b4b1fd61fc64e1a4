package main

import (
	"math"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
	"github.com/hermes-agent/hermes/sdk/selfmem"
)

// forwarded are the signals the init passes on to the server: the ones a
// plugin or a user sends to stop it or to make it do something. Every
// other signal sent to the init of a pid namespace from outside it is
// ignored by the kernel, SIGKILL apart, which ends the init and so the
// whole namespace.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// mountProc gives the launcher's mount namespace (made with its pid
// namespace) a /proc of that pid namespace: the server's pids and what
// /proc shows then agree, and the server sees no process outside it. The
// mounts are made private first, so nothing done here reaches the
// plugin's mount namespace.
func mountProc() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return wrap("make the mounts of its namespace private", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return wrap("mount the /proc of its pid namespace", err)
	}
	return nil
}

// clearAmbient drops the ambient capabilities the plugin gave the
// launcher to set up its namespaces (as another user than root), so the
// server gets none of them.
func clearAmbient() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return wrap("clear the ambient capabilities", err)
	}
	return nil
}

// closeInherited marks every descriptor above 2 close-on-exec, so the
// server gets stdin, stdout and stderr and nothing else: not what the
// plugin inherited from hermes, nor what hermes inherited from its caller
// (`hermes mcp call ... 7<secret`). close_range(2) does it at once (Linux
// 5.11); otherwise each descriptor listed in /proc/self/fd.
func closeInherited() error {
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	d, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return wrap("list the open descriptors", err)
	}
	defer unix.Close(d)
	buf := make([]byte, 4096)
	var names []string
	for {
		n, err := unix.Getdents(d, buf)
		if err != nil {
			return wrap("list the open descriptors", err)
		}
		if n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	for _, name := range names {
		fd, ok := atoi(name)
		if !ok || fd <= 2 || fd == d {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return wrap("mark descriptor "+name+" close-on-exec", err)
		}
	}
	return nil
}

// atoi parses a small decimal number (strconv is not linked).
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// serveAsInit is the rest of the launcher's life as the init of the
// server's pid namespace: it starts the server as its child (from the
// calling, locked thread, whose sandbox the server inherits), tells the
// plugin, passes the forwarded signals on, reaps every process handed to
// it, and once the server has ended reports its wait status and exits
// with it (128+signal for a signal), which makes the kernel kill what is
// left in the namespace.
func serveAsInit(path string, argv, env []string, code []selfmem.Span) int {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		sendStatus(launcher.Status{Step: "exec", Error: execError(err).Error()}, -1)
		return 126
	}
	sendStatus(launcher.Status{Started: true}, -1)
	// The init keeps no copy of the server's stdin and stdout: they close
	// when the server (and what it started) closes them.
	if null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
		_ = unix.Dup3(null, 0, 0)
		_ = unix.Dup3(null, 1, 0)
		_ = unix.Close(null)
	}
	selfmem.Shed(code)
	go func() {
		for s := range sigs {
			_ = syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 1 // no child left: cannot happen before the server's end
		}
		if got != pid {
			continue // an orphan handed to the init
		}
		raw := uint32(ws)
		sendStatus(launcher.Status{Exit: &raw}, -1)
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}
