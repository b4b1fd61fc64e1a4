package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/children"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/proxy"
)

// proxyPath finds hermes-stdio-proxy beside this process's executable,
// once, for the first server with a hosts list; it is an error, naming the
// file and what to do, when it is not there. Such a server is not started
// without its proxy.
var proxyPath = sync.OnceValues(func() (string, error) { return besidePlugin(proxy.Binary, "network proxy") })

// logOutput is where the proxy writes its log lines: the plugin's own
// stderr, as the plugin's logger does (the host reads hclog's JSON lines
// there). It is taken before main runs, while os.Stderr is still that:
// go-plugin replaces os.Stderr once it serves.
var logOutput = os.Stderr

// proxyProc is the filtering proxy of one server with a hosts list:
// hermes-stdio-proxy, a child of the plugin's own (package children),
// started on the listener the server reaches and killed with the server.
// It tells the plugin on a control socket which targets it refused; the
// plugin drains them without waiting, once the server has ended (each is
// sent before the server hears its 403, so by then they are all queued).
type proxyProc struct {
	bin   string
	hosts []string
	log   hclog.Logger
	// ln is the plugin's own listener (no network namespace) until start
	// hands it over.
	ln  *os.File
	cmd *exec.Cmd

	mu sync.Mutex
	// ctl is the plugin's end of the control socket; -1 before start and
	// after stop.
	ctl int
	// got are the targets the proxy refused, as drained from ctl.
	got []string
}

func newProxyProc(bin string, hosts []string, log hclog.Logger) *proxyProc {
	return &proxyProc{bin: bin, hosts: hosts, log: log, ctl: -1}
}

// listen opens the plugin's own listener on 127.0.0.1 (a free port) for a
// server without a network namespace, and returns its port.
func (p *proxyProc) listen() (int, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close() // the duplicate in p.ln listens on
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return 0, err
	}
	p.ln = f
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start starts the proxy on ln, or on the plugin's own listener when ln is
// nil; the plugin's copy of the listener is closed either way.
//
// The proxy gets no parent-death signal: that signal follows the thread
// that forked, not the plugin, and a locked thread of the plugin that ends
// would take the proxy with it. The control socket ties it to the plugin
// instead: the proxy exits when its other end closes, as the kernel does
// when the plugin dies.
func (p *proxyProc) start(ln *os.File) error {
	if ln == nil {
		ln, p.ln = p.ln, nil
	}
	if ln == nil {
		return errors.New("network proxy: no listener")
	}
	defer ln.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("network proxy's control socket: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "proxy-control")
	defer theirs.Close()
	level := "off" // a logger that logs nothing (hclog.NoLevel)
	if lv := p.log.GetLevel(); lv != hclog.NoLevel {
		level = lv.String()
	}
	cmd := exec.Command(p.bin, proxy.Args(p.log.Name(), level, p.hosts)...)
	cmd.Args[0] = proxy.Binary
	cmd.Env = []string{}
	cmd.Stderr = logOutput
	cmd.ExtraFiles = []*os.File{theirs, ln} // proxy.ControlFD, proxy.ListenerFD
	if err := children.Start(cmd); err != nil {
		_ = unix.Close(fds[0])
		return fmt.Errorf("start its network proxy %s: %w", p.bin, err)
	}
	p.mu.Lock()
	p.cmd, p.ctl = cmd, fds[0]
	p.mu.Unlock()
	return nil
}

// drainLocked reads the targets queued on the control socket, without
// waiting for more. p.mu is held.
func (p *proxyProc) drainLocked() {
	if p.ctl < 0 {
		return
	}
	var buf [proxy.MaxMessageBytes]byte
	for len(p.got) < proxy.MaxRefused {
		n, _, err := unix.Recvfrom(p.ctl, buf[:], unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		if t := string(buf[:n]); !slices.Contains(p.got, t) {
			p.got = append(p.got, t)
		}
	}
}

// refused returns the targets ("host:port") the proxy turned away because
// no entry of the hosts list names them, the first proxy.MaxRefused.
func (p *proxyProc) refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drainLocked()
	return slices.Clone(p.got)
}

// stop drains what the proxy refused, kills it and reaps it. Call it once
// the server has ended.
func (p *proxyProc) stop() {
	p.mu.Lock()
	p.drainLocked()
	if p.ctl >= 0 {
		_ = unix.Close(p.ctl)
		p.ctl = -1
	}
	cmd := p.cmd
	p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	if cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		children.Reaped(cmd.Process.Pid)
	}
}
