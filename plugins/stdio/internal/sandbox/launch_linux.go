package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/proxy"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// Options tune New; the zero value is what the plugin uses.
type Options struct {
	// NoNetNS keeps network: hosts out of a network namespace of its own,
	// as on a kernel without (unprivileged) namespaces: the Landlock port
	// rule alone then keeps the server to the proxy.
	NoNetNS bool
	// MaxRules bounds the Landlock rules; DefaultMaxRules when 0.
	MaxRules int
}

// startWait bounds the launcher's work, from its start to the server's
// execve, when the caller's context has no deadline.
const startWait = 30 * time.Second

// Launch is one sandboxed start of a server: made by New, wired into the
// server's exec.Cmd by Wrap, completed by Started, released by Close once
// the server has ended.
type Launch struct {
	server string
	sb     *transport.Sandbox
	log    hclog.Logger
	dec    decision
	abi    int
	plan   launcher.Plan

	tmp      string
	writable int
	denied   int
	cg       *pidsCgroup
	proxy    *proxy.Proxy

	planW  *os.File
	status *os.File
	child  []*os.File

	closeOnce sync.Once
}

// New decides how to enforce cfg.Sandbox for the executable path (found
// by the plugin on the server's PATH), and prepares what the sandbox holds:
// a private temp folder, a pids cgroup (root), the filtering proxy (network:
// hosts). With Enforce set, a sandbox this kernel cannot fully enforce is
// refused with an sdk.CodeSandbox error that says what and how to override.
func New(cfg transport.Config, path string, log hclog.Logger, o Options) (*Launch, error) {
	sb := cfg.Sandbox
	if err := checkSandbox(cfg.Server, sb); err != nil {
		return nil, err
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if o.MaxRules <= 0 {
		o.MaxRules = DefaultMaxRules
	}
	paths, err := startPaths(cfg.Server, sb)
	if err != nil {
		return nil, err
	}
	k := probeKernel(sb, o)
	d := decide(sb, k)
	if len(d.gaps) > 0 && sb.Enforce {
		return nil, refusal(cfg.Server, d.gaps)
	}
	l := &Launch{server: cfg.Server, sb: sb, log: log, abi: k.landlockABI}
	ok := false
	defer func() {
		if !ok {
			l.Close()
		}
	}()
	tmp, err := os.MkdirTemp("", "hermes-sandbox-"+safeName(cfg.Server)+"-")
	if err != nil {
		return nil, sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: make its private temp folder: %v", cfg.Server, err)
	}
	l.tmp = tmp
	var rules []launcher.Rule
	if d.landlock {
		var grants []grant
		grants, l.writable = startGrants(paths, tmp, log)
		rules, err = buildRules(grants, paths.DenyRead, o.MaxRules)
		if err != nil && sb.Enforce {
			return nil, refusal(cfg.Server, []string{"deny_read: " + err.Error()})
		}
		if err != nil {
			// Deny what fits, one path at a time; the rest is a gap.
			var kept []string
			for _, p := range sb.DenyRead {
				r, perr := buildRules(grants, append(slices.Clone(kept), p), o.MaxRules)
				if perr != nil {
					d.gaps = append(d.gaps, "deny_read: "+perr.Error())
					continue
				}
				kept, rules = append(kept, p), r
			}
			if len(kept) == 0 {
				rules, _ = buildRules(grants, nil, o.MaxRules)
			}
			l.denied = len(kept)
		} else {
			l.denied = len(sb.DenyRead)
		}
		if rules, err = pinRules(cfg.Server, rules); err != nil {
			return nil, err
		}
	}
	if d.cgroup {
		cg, err := newPidsCgroup(sb.Limits.Processes)
		if err != nil {
			if sb.Enforce {
				return nil, refusal(cfg.Server, []string{"limits.processes: " + err.Error()})
			}
			d.cgroup = false
			d.gaps = append(d.gaps, "limits.processes: "+err.Error())
		}
		l.cg = cg
	}
	mode := networkMode(sb)
	proxyPort := 0
	if mode == transport.NetworkHosts {
		allow, err := proxy.NewAllowList(sb.Network.Hosts)
		if err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "sandbox of server %q: %v; fix sandbox.network in config.yaml", cfg.Server, err)
		}
		l.proxy = proxy.New(allow, log.Named("proxy"))
		if !d.netns {
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				return nil, sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: start its network proxy: %v", cfg.Server, err)
			}
			proxyPort = ln.Addr().(*net.TCPAddr).Port
			go func() { _ = l.proxy.Serve(ln) }()
		}
	}
	l.dec = d
	l.plan = launcher.Plan{
		Path:      path,
		Argv:      append([]string{cfg.Command}, cfg.Args...),
		Env:       launcher.ServerEnv(cfg.Env, tmp, 0),
		Rules:     rules,
		Net:       mode,
		ProxyPort: proxyPort,
		NetNS:     d.netns,
		Seccomp:   d.seccomp,
		Limits:    launcher.Limits(sb.Limits),
		NProc:     d.nproc,
	}
	if d.landlock {
		l.plan.ABI = k.landlockABI
	}
	ok = true
	return l, nil
}

// Wrap turns cmd (the server's command, with its stdin, stdout, stderr,
// folder and parent-death signal set) into the start of the launcher,
// which will execute the server under the sandbox.
func (l *Launch) Wrap(cmd *exec.Cmd) error {
	planR, planW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox plan pipe: %w", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		planR.Close()
		planW.Close()
		return fmt.Errorf("sandbox status socket: %w", err)
	}
	l.planW, l.status = planW, os.NewFile(uintptr(fds[0]), "sandbox-status")
	childStatus := os.NewFile(uintptr(fds[1]), "sandbox-status")
	l.child = []*os.File{planR, childStatus}
	cmd.Path = "/proc/self/exe"
	cmd.Err = nil
	cmd.Args = []string{"hermes-sandbox-launcher"}
	cmd.Env = []string{launcher.EnvVar + "=" + launcher.ModeRun}
	cmd.ExtraFiles = []*os.File{planR, childStatus} // launcher.PlanFD, launcher.StatusFD
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if l.plan.NetNS {
		setNetNS(cmd.SysProcAttr)
	}
	return nil
}

// Started completes the start of the launcher pid: it moves it into the
// pids cgroup, hands it the plan, serves the proxy on the listener it sends
// from its network namespace, and returns once it has executed the server
// (or with the error that stopped it; the caller then kills and reaps it).
func (l *Launch) Started(ctx context.Context, pid int) error {
	for _, f := range l.child {
		_ = f.Close()
	}
	l.child = nil
	if l.cg != nil {
		if err := l.cg.add(pid); err != nil {
			_ = l.planW.Close()
			return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: %v", l.server, err)
		}
	}
	b, err := json.Marshal(l.plan)
	if err != nil {
		return err
	}
	go func() {
		_, _ = l.planW.Write(b)
		_ = l.planW.Close()
	}()
	c, err := net.FileConn(l.status)
	if err != nil {
		return fmt.Errorf("sandbox status socket: %w", err)
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("sandbox status socket is not a Unix socket")
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(startWait)
	}
	_ = uc.SetReadDeadline(deadline)
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
		if n == 0 && oobn == 0 {
			if err != nil && !errors.Is(err, net.ErrClosed) && !isEOF(err) {
				return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: no word from its launcher: %v", l.server, err)
			}
			return nil // the status socket closed on execve: the server runs
		}
		var msg launcher.Status
		if jerr := json.Unmarshal(buf[:n], &msg); jerr != nil {
			closeRights(oob[:oobn])
			return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: garbled word from its launcher", l.server)
		}
		if msg.Error != "" {
			closeRights(oob[:oobn])
			if msg.Step == "exec" {
				return sdk.NewError(sdk.CodeOther, "start %q in its sandbox: %s", l.plan.Argv[0], clip(msg.Error, 500))
			}
			return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: %s failed: %s", l.server, msg.Step, clip(msg.Error, 500))
		}
		if msg.Listener > 0 && l.proxy != nil {
			ln, err := listenerFrom(oob[:oobn])
			if err != nil {
				return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: proxy listener: %v", l.server, err)
			}
			l.plan.ProxyPort = msg.Listener
			go func() { _ = l.proxy.Serve(ln) }()
			continue
		}
		closeRights(oob[:oobn])
	}
}

func isEOF(err error) bool {
	return err != nil && strings.Contains(err.Error(), "EOF")
}

// listenerFrom makes a listener of the one descriptor in oob.
func listenerFrom(oob []byte) (net.Listener, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("no descriptor")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return nil, errors.New("want one descriptor")
	}
	f := os.NewFile(uintptr(fds[0]), "sandbox-proxy")
	defer f.Close()
	return net.FileListener(f)
}

// closeRights closes descriptors that came with a message not meant to
// carry any.
func closeRights(oob []byte) {
	msgs, _ := unix.ParseSocketControlMessage(oob)
	for i := range msgs {
		fds, _ := unix.ParseUnixRights(&msgs[i])
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
	}
}

// Report says what is in force (call it after Started).
func (l *Launch) Report() *transport.SandboxReport {
	return report(l.sb, l.dec, l.abi, l.plan.Rules, l.writable, l.denied, l.plan.NetNS, l.plan.ProxyPort)
}

// TempDir is the server's private temp folder.
func (l *Launch) TempDir() string { return l.tmp }

// Close releases what the sandbox holds: the proxy, the temp folder (with
// everything the server left there) and the pids cgroup. Call it once the
// server and every process it left have been reaped.
func (l *Launch) Close() {
	l.closeOnce.Do(func() {
		for _, f := range append(l.child, l.planW, l.status) {
			if f != nil {
				_ = f.Close()
			}
		}
		if l.proxy != nil {
			_ = l.proxy.Close()
		}
		if l.tmp != "" {
			removeAll(l.tmp)
		}
		if l.cg != nil {
			l.cg.remove()
		}
	})
}

// removeAll removes dir even where the server took its own write bits away.
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// probeKernel finds out what this kernel can enforce of sb.
func probeKernel(sb *transport.Sandbox, o Options) kernel {
	k := kernel{linux: true}
	k.landlockABI, k.landlockErr = launcher.LandlockABI()
	k.seccompErr = launcher.SeccompAvailable()
	k.root = runsAsRoot()
	if sb.Limits.Processes > 0 && k.root {
		_, k.pidsErr = pidsBase()
	}
	if networkMode(sb) == transport.NetworkHosts {
		if o.NoNetNS {
			k.netnsErr = errors.New("turned off")
		} else {
			k.netnsErr = netnsAvailable()
		}
	}
	return k
}

// runsAsRoot reports whether this process is root in the initial user
// namespace, where the kernel ignores RLIMIT_NPROC.
func runsAsRoot() bool {
	if os.Getuid() != 0 {
		return false
	}
	f, err := os.Open("/proc/self/uid_map")
	if err != nil {
		return true
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) == 3 && fl[0] == "0" {
			return fl[1] == "0"
		}
	}
	return true
}

// setNetNS starts the launcher in a network namespace of its own: as root
// a plain new network namespace; otherwise within a new user namespace
// that maps the user to itself, with CAP_NET_ADMIN carried across the
// launcher's execve as an ambient capability (it drops it before the
// server's).
func setNetNS(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWNET
	if runsAsRoot() {
		return
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = []uintptr{unix.CAP_NET_ADMIN}
}

var (
	netnsOnce sync.Once
	netnsErr  error
)

// netnsAvailable checks, once per plugin process, that a launcher can get
// a network namespace of its own and bring its loopback up.
func netnsAvailable() error {
	netnsOnce.Do(func() {
		cmd := exec.Command("/proc/self/exe")
		cmd.Args = []string{"hermes-sandbox-probe"}
		cmd.Env = []string{launcher.EnvVar + "=" + launcher.ModeNetnsProbe}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		setNetNS(cmd.SysProcAttr)
		if out, err := cmd.CombinedOutput(); err != nil {
			netnsErr = fmt.Errorf("%v %s", err, clip(strings.TrimSpace(string(out)), 200))
		}
	})
	return netnsErr
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// safeName keeps a server name fit for a file name.
func safeName(s string) string {
	b := []byte(clip(s, 40))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
