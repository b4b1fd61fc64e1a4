package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/children"
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
	// NoPidNS keeps the server out of a pid namespace of its own, as on a
	// kernel that gives none: the plugin's subreaper is then all that
	// stops what the server leaves behind.
	NoPidNS bool
}

// startWait bounds the launcher's work, from its start to the server's
// execve, when the caller's context has no deadline.
const startWait = 30 * time.Second

// Launch is one sandboxed start of a server: made by New, wired into the
// server's exec.Cmd by Wrap, completed by Started, released by Close once
// the server has ended.
type Launch struct {
	server string
	// launcher is the path of hermes-stdio-launcher.
	launcher string
	sb       *transport.Sandbox
	log      hclog.Logger
	dec      decision
	abi      int
	plan     launcher.Plan

	tmp      string
	writable int
	denied   int
	// missing are the writable paths, as declared, that did not exist at
	// the start and so were not granted.
	missing []string
	cg      *pidsCgroup
	// born is set when the launcher was born in cg (Start), so Started
	// does not move it.
	born bool
	// proxy is the filtering proxy of network: hosts (nil for another
	// network), started once its listener is known.
	proxy *proxyProc

	planW  *os.File
	status *os.File
	child  []*os.File
	// initConn is the status socket of a launcher that is the init of the
	// server's pid namespace: it reports the server's end on it.
	initConn *net.UnixConn

	closeOnce sync.Once
}

// New decides how to enforce cfg.Sandbox for the executable path (found
// by the plugin on the server's PATH), and prepares what the sandbox holds:
// a private temp folder, a pids cgroup (root), the filtering proxy's
// listener (network: hosts, without a network namespace; with one, the
// launcher makes it). With Enforce set, a sandbox this kernel cannot fully
// enforce is refused with an sdk.CodeSandbox error that says what and how
// to override.
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
	bin, err := launcherPath()
	if err != nil {
		return nil, err
	}
	k := probeKernel(sb, o, bin)
	d := decide(sb, k)
	if len(d.gaps) > 0 && sb.Enforce {
		return nil, refusal(cfg.Server, d.gaps)
	}
	l := &Launch{server: cfg.Server, launcher: bin, sb: sb, log: log, abi: k.landlockABI}
	ok := false
	defer func() {
		if !ok {
			l.Close()
		}
	}()
	if d.cgroup {
		cg, err := newPidsCgroup(k.pidsBase, sb.Limits.Processes)
		if err != nil {
			if sb.Enforce {
				return nil, refusal(cfg.Server, []string{"limits.processes: " + err.Error()})
			}
			d.cgroup = false
			d.gaps = append(d.gaps, "limits.processes: "+err.Error())
		}
		l.cg = cg
	}
	tmp, err := os.MkdirTemp("", "hermes-sandbox-"+safeName(cfg.Server)+"-")
	if err != nil {
		return nil, sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: make its private temp folder: %v", cfg.Server, err)
	}
	l.tmp = tmp
	var rules []launcher.Rule
	if d.landlock {
		var grants []grant
		grants, l.writable = startGrants(paths, tmp, log)
		for _, w := range paths.Writable {
			if w.Missing || !exists(w.Path) {
				l.missing = append(l.missing, w.Declared)
			}
		}
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
	mode := networkMode(sb)
	proxyPort := 0
	if mode == transport.NetworkHosts {
		if _, err := proxy.NewAllowList(sb.Network.Hosts); err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "sandbox of server %q: %v; fix sandbox.network in config.yaml", cfg.Server, err)
		}
		pbin, err := proxyPath()
		if err != nil {
			return nil, err
		}
		l.proxy = newProxyProc(pbin, sb.Network.Hosts, log.Named("proxy"))
		if !d.netns {
			if proxyPort, err = l.proxy.listen(); err != nil {
				return nil, sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: start its network proxy: %v", cfg.Server, err)
			}
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
		Limits:    launcher.Limits(sb.Limits),
		NProc:     d.nproc,
	}
	if d.seccomp {
		if l.plan.Seccomp, err = seccompFilters(mode); err != nil {
			return nil, sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: %v", cfg.Server, err)
		}
	}
	if d.landlock {
		l.plan.ABI = k.landlockABI
	}
	l.plan.Init = !o.NoPidNS && noPidNS() == nil
	ok = true
	return l, nil
}

// NewInit prepares the start of a server without a sandbox as the child
// of a launcher that is the init of a pid namespace of its own, so that
// nothing the server starts outlives it or the plugin (docs/HOSTILE.md,
// Processes). It returns nil when this kernel gives the plugin no pid
// namespace (or o.NoPidNS): the server is then started directly. The
// server gets exactly cfg.Env, its folder and stdio as a direct start
// would; the launcher applies nothing else. It fails, saying what to do,
// when the launcher is not installed beside the plugin.
func NewInit(cfg transport.Config, path string, log hclog.Logger, o Options) (*Launch, error) {
	if o.NoPidNS {
		return nil, nil
	}
	bin, err := launcherPath()
	if err != nil {
		return nil, err
	}
	if noPidNS() != nil {
		return nil, nil
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	env := (&exec.Cmd{Env: cfg.Env}).Environ() // as exec.Cmd would pass it: the last of a repeated name
	if env == nil {
		env = []string{}
	}
	return &Launch{server: cfg.Server, launcher: bin, log: log, plan: launcher.Plan{
		Path: path,
		Argv: append([]string{cfg.Command}, cfg.Args...),
		Env:  env,
		Net:  launcher.NetworkAll,
		Bare: true,
		Init: true,
	}}, nil
}

// launcherEnv is the launcher's own environment (the server's travels in
// the plan): one scheduler thread is all it uses, and fewer threads keep
// it smaller while it waits as an init.
var launcherEnv = []string{"GOMAXPROCS=1"}

// launcherPath finds hermes-stdio-launcher beside this process's
// executable, once; it is an error, naming the file and what to do, when it
// is not there. There is no other way to start a server in a namespace of
// its own or a sandbox, so there is no fallback.
var launcherPath = sync.OnceValues(func() (string, error) { return besidePlugin(launcher.Binary, "launcher") })

// besidePlugin returns the path of the executable name, installed beside
// this process's executable, or an error that names it, says what it is
// (what) and what to do.
func besidePlugin(name, what string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", sdk.NewError(sdk.CodeOther, "find the stdio plugin's own executable, beside which %s is installed: %v", name, err)
	}
	p := filepath.Join(filepath.Dir(exe), name)
	fi, err := os.Stat(p)
	if err == nil && (!fi.Mode().IsRegular() || fi.Mode()&0o111 == 0) {
		err = errors.New("not an executable file")
	}
	if err != nil {
		return "", sdk.NewError(sdk.CodeOther, "the stdio plugin's %s %s is missing or unusable (%v): reinstall hermes (make install), or run make build, so that %s is beside %s",
			what, p, errText(err), name, filepath.Base(exe))
	}
	return p, nil
}

// errText is err without the path an *fs.PathError repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Wrap turns cmd (the server's command, with its stdin, stdout, stderr,
// folder and parent-death signal set) into the start of the launcher,
// which will execute the server under the sandbox.
func (l *Launch) Wrap(cmd *exec.Cmd) error {
	planR, planW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox plan pipe: %w", err)
	}
	status, childStatus, err := socketPair()
	if err != nil {
		planR.Close()
		planW.Close()
		return err
	}
	l.planW, l.status = planW, status
	l.child = []*os.File{planR, childStatus}
	cmd.Path = l.launcher
	cmd.Err = nil
	cmd.Args = []string{launcher.Binary, launcher.ModeRun}
	cmd.Env = launcherEnv
	cmd.ExtraFiles = []*os.File{planR, childStatus} // launcher.PlanFD, launcher.StatusFD
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setNamespaces(cmd.SysProcAttr, l.plan.NetNS, l.plan.Init)
	return nil
}

// Start starts the launcher that Wrap made of cmd and registers it as one
// of the plugin's children. Where the kernel lets it (a cgroup v1 pids
// hierarchy), the launcher is born in the server's pids cgroup rather than
// moved there by Started, which spares the wait a move begins with.
func (l *Launch) Start(cmd *exec.Cmd) error {
	if l.cg == nil {
		return children.Start(cmd)
	}
	inside, err := l.cg.bornInside(func() error { return children.Start(cmd) })
	if !inside {
		return children.Start(cmd)
	}
	if err != nil && cmd.Process != nil {
		// Started, but the thread could not leave the cgroup.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		children.Reaped(cmd.Process.Pid)
		cmd.Process = nil
	}
	l.born = err == nil
	return err
}

// Started completes the start of the launcher pid: it moves it into the
// pids cgroup (or, born there, sets the cgroup's bound), hands it the plan, starts the filtering proxy on its
// listener (the plugin's, or the one the launcher sends from its network
// namespace), and returns once the launcher has executed the server (or
// with the error that stopped it; the caller then kills and reaps it).
func (l *Launch) Started(ctx context.Context, pid int) error {
	for _, f := range l.child {
		_ = f.Close()
	}
	l.child = nil
	b, err := l.plan.MarshalBinary()
	if err != nil {
		_ = l.planW.Close()
		return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: %v", l.server, err)
	}
	go func() {
		_, _ = l.planW.Write(b)
		_ = l.planW.Close()
	}()
	if l.proxy != nil && l.proxy.ln != nil {
		// On the plugin's own listener, while the launcher reads its plan.
		if err := l.proxy.start(nil); err != nil {
			return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: %v", l.server, err)
		}
	}
	c, err := net.FileConn(l.status)
	if err != nil {
		return fmt.Errorf("sandbox status socket: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return errors.New("sandbox status socket is not a Unix socket")
	}
	kept := false
	defer func() {
		if !kept {
			c.Close()
		}
	}()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(startWait)
	}
	_ = uc.SetReadDeadline(deadline)
	// The move into the pids cgroup waits for the kernel (an RCU grace
	// period, about 10 ms, for the first move in a while): it runs while
	// the launcher reads and applies its plan, which starts the server
	// only once it has Proceed, sent after the move (or, for a launcher
	// born in the cgroup, after its bound is set).
	moved, moveDone := make(chan error, 1), make(chan struct{})
	// Started returns once the move is over, whatever happened: a move
	// still under way after the launcher was killed and reaped could move
	// a process that reused its pid.
	defer func() { <-moveDone }()
	go func() {
		defer close(moveDone)
		if l.cg != nil {
			place := func() error { return l.cg.add(pid) }
			if l.born {
				place = l.cg.limit
			}
			if err := place(); err != nil {
				moved <- err
				// No Proceed: the launcher, waiting for one, reads the
				// end of our side, reports and exits, and the reader
				// below hears it. A launcher that had failed already
				// (the process the move missed) has said why first.
				_ = uc.CloseWrite()
				return
			}
		}
		// A launcher that failed has said why on the socket already.
		_, _ = uc.Write([]byte(launcher.Proceed))
		moved <- nil
	}()
	moveFailed := func() error {
		select {
		case err := <-moved:
			if err != nil {
				return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: %v", l.server, err)
			}
		default:
		}
		return nil
	}
	buf := make([]byte, launcher.MaxStatusBytes)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
		// A failed read may give -1 for either count (recvmsg's answer).
		n, oobn = max(n, 0), max(oobn, 0)
		if n == 0 && oobn == 0 {
			if merr := moveFailed(); merr != nil {
				return merr
			}
			if err != nil && !errors.Is(err, net.ErrClosed) && !isEOF(err) {
				return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: no word from its launcher: %v", l.server, err)
			}
			return nil // the status socket closed on execve: the server runs
		}
		msg, perr := launcher.ParseStatus(buf[:n])
		if perr != nil {
			closeRights(oob[:oobn])
			return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: garbled word from its launcher", l.server)
		}
		if msg.Error != "" {
			closeRights(oob[:oobn])
			if msg.Step == "proceed" {
				// It gave up waiting because the move failed: that is why.
				if merr := moveFailed(); merr != nil {
					return merr
				}
			}
			if msg.Step == "pidns" && l.plan.Init {
				return l.pidnsFailed(errors.New(msg.Error))
			}
			if msg.Step == "exec" {
				return sdk.NewError(sdk.CodeOther, "start %q in its sandbox: %s", l.plan.Argv[0], clip(msg.Error, 500))
			}
			return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: %s failed: %s", l.server, msg.Step, clip(msg.Error, 500))
		}
		if msg.Started {
			// The init runs the server; it reports its end here.
			_ = uc.SetReadDeadline(time.Time{})
			l.initConn, kept = uc, true
			return nil
		}
		if msg.Listener > 0 && l.proxy != nil && l.proxy.cmd == nil {
			ln, err := listenerFrom(oob[:oobn])
			if err != nil {
				return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: proxy listener: %v", l.server, err)
			}
			l.plan.ProxyPort = msg.Listener
			if err := l.proxy.start(ln); err != nil {
				return sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: %v", l.server, err)
			}
			continue
		}
		closeRights(oob[:oobn])
	}
}

func isEOF(err error) bool {
	return err != nil && strings.Contains(err.Error(), "EOF")
}

// listenerFrom returns the one descriptor in oob, a listening socket.
func listenerFrom(oob []byte) (*os.File, error) {
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
	return os.NewFile(uintptr(fds[0]), "sandbox-proxy"), nil
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

// ServerPid returns the pid of the server (as the plugin sees it) that the
// launcher pid runs: the launcher's child when it is the init of the
// server's pid namespace, else the launcher itself, which became the
// server. Call it after Started.
func (l *Launch) ServerPid(pid int) int {
	if l.initConn == nil {
		return pid
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			if child, err := strconv.Atoi(f[0]); err == nil {
				return child
			}
		}
	}
	return pid
}

// initExitWait bounds how long ServerExit waits for the init's last word
// once the init has exited (it is queued by then).
const initExitWait = time.Second

// ServerExit says how the server ended, as its init reported it ("exited
// with status 3", "was killed by signal SIGKILL ..."); ok is false when the
// launcher was not an init or did not say (it was killed itself). Call it
// once the launcher has been waited for.
func (l *Launch) ServerExit() (reason string, ok bool) {
	if l.initConn == nil {
		return "", false
	}
	_ = l.initConn.SetReadDeadline(time.Now().Add(initExitWait))
	buf := make([]byte, launcher.MaxStatusBytes)
	for {
		n, err := l.initConn.Read(buf)
		if n == 0 || err != nil {
			return "", false
		}
		if msg, err := launcher.ParseStatus(buf[:n]); err == nil && msg.Exit != nil {
			return sdk.WaitReason(syscall.WaitStatus(*msg.Exit)), true
		}
	}
}

// Report says what is in force (call it after Started); nil for a
// launcher that applies no sandbox (NewInit).
func (l *Launch) Report() *transport.SandboxReport {
	if l.sb == nil {
		return nil
	}
	return report(l.sb, l.dec, l.abi, l.plan.Rules, l.writable, l.denied, l.plan.NetNS, l.plan.ProxyPort)
}

// TempDir is the server's private temp folder.
func (l *Launch) TempDir() string { return l.tmp }

// Refused says what this sandbox refused the server so far, one short
// phrase each: writable paths it could not grant because they did not
// exist, and hosts its proxy turned away. A server that fails often says
// only that something was denied, if anything; this says what.
func (l *Launch) Refused() []string {
	var out []string
	for _, m := range l.missing {
		out = append(out, "writing to "+strconv.QuoteToASCII(clip(m, 200))+" (a writable path that did not exist when the server started, so it was not granted; create it)")
	}
	if l.proxy != nil {
		for _, h := range l.proxy.refused() {
			out = append(out, "a connection to "+strconv.QuoteToASCII(clip(h, 300))+" (not in sandbox.network)")
		}
	}
	return out
}

// Close releases what the sandbox holds: the proxy (killed; what it
// refused stays known to Refused), the temp folder (with
// everything the server left there) and the pids cgroup. Call it once the
// server and every process it left have been reaped.
func (l *Launch) Close() {
	l.closeOnce.Do(func() {
		for _, f := range append(l.child, l.planW, l.status) {
			if f != nil {
				_ = f.Close()
			}
		}
		if l.initConn != nil {
			_ = l.initConn.Close()
		}
		if l.proxy != nil {
			l.proxy.stop()
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
func probeKernel(sb *transport.Sandbox, o Options, bin string) kernel {
	k := kernel{linux: true}
	k.landlockABI, k.landlockErr = landlockABI()
	k.seccompErr = seccompAvailable()
	k.root = runsAsRoot()
	if sb.Limits.Processes > 0 && k.root {
		k.pidsBase, k.pidsErr = pidsBase()
	}
	if networkMode(sb) == transport.NetworkHosts {
		if o.NoNetNS {
			k.netnsErr = errors.New("turned off")
		} else {
			k.netnsErr = netnsAvailable(bin)
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

// setNamespaces starts the launcher in namespaces of its own: a network
// namespace (netns) and a pid namespace with a mount namespace for its
// /proc (pidns). As root plain new namespaces; otherwise within a new
// user namespace that maps the user to itself, with the capabilities the
// launcher needs there (CAP_NET_ADMIN for the loopback, CAP_SYS_ADMIN for
// /proc) carried across its execve as ambient capabilities (it drops them
// before the server's).
func setNamespaces(a *syscall.SysProcAttr, netns, pidns bool) {
	root := runsAsRoot()
	if netns {
		a.Cloneflags |= syscall.CLONE_NEWNET
		if !root {
			a.AmbientCaps = append(a.AmbientCaps, unix.CAP_NET_ADMIN)
		}
	}
	if pidns {
		a.Cloneflags |= syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
		if !root {
			a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SYS_ADMIN)
		}
	}
	if root || !(netns || pidns) {
		return
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
}

var (
	netnsOnce sync.Once
	netnsErr  error
)

// netnsAvailable checks, once per plugin process, that the launcher bin
// can get a network namespace of its own and bring its loopback up.
func netnsAvailable(bin string) error {
	netnsOnce.Do(func() { netnsErr = probe(bin, launcher.ModeNetnsProbe, true, false) })
	return netnsErr
}

// ErrNoPidNS is wrapped by the error of a start that found that this
// kernel gives the plugin no pid namespace: the launcher could not be
// started in one, or could not mount its /proc there. Every later New and
// NewInit of the plugin starts its server without one; the caller releases
// what this start holds and starts the server again.
var ErrNoPidNS = errors.New("no pid namespace for the server")

var (
	pidnsMu sync.Mutex
	// pidnsErr is why this kernel gives no pid namespace, once a start
	// found out; nil until then.
	pidnsErr error
)

// noPidNS says why this kernel gives the plugin no pid namespace, nil
// when no start has found out yet. There is no probe ahead of the first
// start (it would cost a launcher's start of its own in every plugin): the
// first start tries, and one that fails for the namespace (ErrNoPidNS) is
// made again without it.
func noPidNS() error {
	pidnsMu.Lock()
	defer pidnsMu.Unlock()
	return pidnsErr
}

// pidnsFailed remembers why a start in a pid namespace failed and returns
// the error to start again with.
func (l *Launch) pidnsFailed(why error) error {
	pidnsMu.Lock()
	pidnsErr = why
	pidnsMu.Unlock()
	l.log.Debug("no pid namespace for the server's launcher; it will be started without one", "error", why)
	return fmt.Errorf("%w: %v", ErrNoPidNS, why)
}

// SpawnFailed is the error to return for a launcher (the command Wrap
// made) whose start failed with err: for one that was to be the init of a
// pid namespace, the kernel refusing the namespace (EPERM, EINVAL, ENOSPC,
// EUSERS, EACCES: not as root and without unprivileged user namespaces,
// or past a namespace limit) is remembered and wrapped in ErrNoPidNS; any
// other error is err.
func (l *Launch) SpawnFailed(err error) error {
	var errno syscall.Errno
	if !l.plan.Init || !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case unix.EPERM, unix.EINVAL, unix.ENOSPC, unix.EUSERS, unix.EACCES:
		return l.pidnsFailed(err)
	}
	return err
}

// probe runs the launcher bin in mode, in the namespaces asked for, and
// returns why it failed, or nil.
func probe(bin, mode string, netns, pidns bool) error {
	planR, planW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer planR.Close()
	planW.Close() // a probe reads no plan
	status, childStatus, err := socketPair()
	if err != nil {
		return err
	}
	defer status.Close()
	cmd := exec.Command(bin, mode)
	cmd.Args[0] = launcher.Binary
	cmd.Env = launcherEnv
	cmd.ExtraFiles = []*os.File{planR, childStatus} // launcher.PlanFD, launcher.StatusFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	setNamespaces(cmd.SysProcAttr, netns, pidns)
	err = cmd.Start()
	childStatus.Close()
	if err != nil {
		return err
	}
	buf := make([]byte, launcher.MaxStatusBytes)
	n, _ := status.Read(buf)
	werr := cmd.Wait()
	if n > 0 {
		if msg, perr := launcher.ParseStatus(buf[:n]); perr == nil && msg.Error != "" {
			return fmt.Errorf("%s: %s", msg.Step, clip(msg.Error, 200))
		}
	}
	return werr
}

// socketPair is the launcher's status socket: the plugin's end and the
// launcher's (launcher.StatusFD), both close-on-exec here.
func socketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox status socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "sandbox-status"), os.NewFile(uintptr(fds[1]), "sandbox-status"), nil
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
