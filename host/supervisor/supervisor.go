// Package supervisor owns the plugin processes of the host: it finds plugin
// binaries on the search path (or runs the exact binary a catalog install
// pinned, checked against its sha256), starts one go-plugin process per
// use with a clean environment, detached stdin, its own process group and
// a parent-death signal, notices at once when one exits, and kills them
// all when the host stops; Instance is the one lifecycle of a long-lived
// plugin (start on demand, one start at a time, restart with backoff, exit
// reason) that the registry, the auth plugins and the serve bridge share.
// It knows nothing about MCP; callers dispense the plugin and speak the sdk
// contract.
package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
)

// ErrNotFound is wrapped by Find's error when no plugin binary exists.
var ErrNotFound = errors.New("plugin not found")

// StartTimeout bounds a plugin's go-plugin handshake.
const StartTimeout = 20 * time.Second

// pluginEnv lists the host variables a plugin process inherits; everything
// else is dropped (the host's secrets never reach a plugin by accident).
var pluginEnv = []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// Options configures a Supervisor.
type Options struct {
	// Home is $HERMES_HOME; its plugins/ folder is searched.
	Home string
	// Logger receives the supervisor's and the plugins' logs.
	Logger hclog.Logger
	// ExtraDirs are searched after the standard places (e.g. the install
	// folder of a catalog entry that ships its own plugin).
	ExtraDirs []string
	// Env looks up the host's environment: $HERMES_PLUGIN_PATH and the
	// variables a plugin inherits. Nil is os.LookupEnv.
	Env func(string) (string, bool)
}

// lookupEnv reads the host's environment through Options.Env.
func (s *Supervisor) lookupEnv(key string) (string, bool) {
	if s.opts.Env != nil {
		return s.opts.Env(key)
	}
	return os.LookupEnv(key)
}

// Supervisor starts and tracks plugin processes.
type Supervisor struct {
	opts Options
	log  hclog.Logger

	mu      sync.Mutex
	plugins map[*Plugin]struct{}
	stopped bool
	// early are the plugins Prelaunch started that no Launch took yet;
	// prelaunches counts the starts still running (prelaunch.go).
	early       []*early
	prelaunches sync.WaitGroup
	// socketBase holds the folders of the plugins' unix sockets (go-plugin
	// makes one per plugin), made on first use and removed when the
	// supervisor stops, so a plugin killed or left to finish on its own
	// leaves nothing behind in the temp folder.
	socketBase string
}

// New returns a Supervisor.
func New(opts Options) *Supervisor {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Supervisor{opts: opts, log: opts.Logger, plugins: map[*Plugin]struct{}{}}
}

// SearchPath returns the folders searched for plugin binaries, in order:
// $HERMES_PLUGIN_PATH, the folder of the running executable,
// $HERMES_HOME/plugins, then Options.ExtraDirs.
func (s *Supervisor) SearchPath() []string {
	var dirs []string
	if p, _ := s.lookupEnv("HERMES_PLUGIN_PATH"); p != "" {
		dirs = append(dirs, filepath.SplitList(p)...)
	}
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		dirs = append(dirs, filepath.Dir(exe))
	}
	if s.opts.Home != "" {
		dirs = append(dirs, homedir.Dir(s.opts.Home).Plugins())
	}
	return append(dirs, s.opts.ExtraDirs...)
}

// Find returns the path of the plugin binary hermes-<kind>-<name>.
func (s *Supervisor) Find(kind, name string) (string, error) {
	return s.find(kind, name, "")
}

// find is Find with an extra folder searched first.
func (s *Supervisor) find(kind, name, dir string) (string, error) {
	bin := sdk.BinaryName(kind, name)
	dirs := s.SearchPath()
	if dir != "" {
		dirs = append([]string{dir}, dirs...)
	}
	for _, d := range dirs {
		p := filepath.Join(d, bin)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s is not in %s; reinstall hermes (make install) or put the plugin in one of those folders", ErrNotFound, bin, strings.Join(dirs, ", "))
}

// Spec says which plugin to launch and how. Kind and Name are required.
type Spec struct {
	// Kind and Name name the binary hermes-<kind>-<name>.
	Kind, Name string
	// Label names the plugin in logs (e.g. the server name).
	Label string
	// Dir, when set, is searched first, for this launch only: the install
	// folder of a catalog entry that ships its own plugin.
	Dir string
	// Path, when set, is the exact binary to run (an absolute path named
	// hermes-<kind>-<name>): the search path and Dir are not consulted, so
	// a same-named binary elsewhere is never run instead.
	Path string
	// SHA256, when set, is the hex sha256 the binary must have. It is
	// checked on the very file that is executed (on Linux the opened file
	// itself is executed, so a swap after the check is not run).
	SHA256 string
	// Reinstall, when set, marks a pinned spec (see PinnedSpec): the server
	// entry whose install recorded Path and SHA256. Both are then required,
	// and a binary that changed since is refused with a *ChecksumError
	// saying to run 'hermes mcp install <Reinstall>' again.
	Reinstall string
	// Plugins is the host side of the kind's go-plugin glue, keyed by kind
	// (e.g. {sdk.KindTransport: pluginhost.TransportPlugin{}}).
	Plugins map[string]plugin.Plugin
	// MaxFrameBytes is the largest frame the host accepts from this plugin;
	// the kind's client enforces it (see Plugin.Spec).
	MaxFrameBytes uint64
}

// Plugin is one running plugin process.
type Plugin struct {
	Kind, Name, Path string

	// socketDir is the folder of this plugin's unix sockets.
	socketDir string

	spec   Spec
	sup    *Supervisor
	client *plugin.Client
	proto  plugin.ClientProtocol
	run    *groupRunner

	detached atomic.Bool

	streamMu sync.Mutex
	stream   net.Conn
}

// ContractError is returned by Launch when a plugin speaks another version
// of the plugin contract than this host.
type ContractError struct {
	Path          string
	PluginVersion int
	HostVersion   int
}

func (e *ContractError) Error() string {
	return fmt.Sprintf("plugin %s speaks plugin contract v%d but this hermes speaks v%d: install a build of %s for contract v%d (rebuild it against the current sdk), or remove it",
		e.Path, e.PluginVersion, e.HostVersion, filepath.Base(e.Path), e.HostVersion)
}

// ChecksumError is returned by Launch when a plugin binary does not have
// the sha256 its spec pins.
type ChecksumError struct {
	Path, Want, Got string
	// Reinstall is the spec's Reinstall: the server entry to install again.
	Reinstall string
}

func (e *ChecksumError) Error() string {
	if e.Reinstall != "" {
		return fmt.Sprintf("plugin binary %s changed since install (sha256 %s, pinned %s); run `hermes mcp install %s` again", e.Path, e.Got, e.Want, e.Reinstall)
	}
	return fmt.Sprintf("plugin %s has sha256 %s, not the pinned %s: it was changed after install; reinstall it (hermes mcp install --force NAME) and do not run it", e.Path, e.Got, e.Want)
}

// Pin names the one binary a server entry's catalog install trusts to run
// for a plugin: the plugin hermes-<Kind>-<Name> at Path, which must have
// the sha256 SHA256 (hex) every time it is started. It has the fields of
// the config's plugin: block (config.PluginPin), so the resolved entry
// converts to it: (*supervisor.Pin)(launch.Pin).
type Pin struct {
	// Kind is "transport" or "auth"; Name is the plugin's name.
	Kind, Name string
	// Path is the binary's absolute path.
	Path string
	// SHA256 is the hex sha256 recorded at install.
	SHA256 string
}

// PinnedSpec applies the pin of server entry to spec when the pin is for
// spec's plugin (same kind and name): the spec then runs the pinned binary
// at pin.Path only, checked against pin.SHA256, and a changed binary is
// refused naming entry (see Spec.Reinstall). Any other spec is returned
// unchanged, so it can be applied to every launch of the entry's plugins
// (its transport, its auth method).
//
// The install folder is deliberately not searched for the entry's other
// plugins: only the pinned file of a catalog install is trusted to run.
func PinnedSpec(spec Spec, pin *Pin, entry string) Spec {
	if pin == nil || pin.Kind != spec.Kind || pin.Name != spec.Name {
		return spec
	}
	spec.Path = pin.Path
	spec.SHA256 = pin.SHA256
	spec.Dir = ""
	spec.Reinstall = entry
	return spec
}

// resolve returns the binary spec runs: its exact Path, or the first
// hermes-<kind>-<name> on the search path (Dir first).
func (s *Supervisor) resolve(spec Spec) (string, error) {
	bin := sdk.BinaryName(spec.Kind, spec.Name)
	again := ""
	if spec.Reinstall != "" {
		again = fmt.Sprintf("; run `hermes mcp install %s` again", spec.Reinstall)
	}
	switch {
	case spec.Path == "" && spec.Reinstall == "":
		return s.find(spec.Kind, spec.Name, spec.Dir)
	case spec.Path == "":
		return "", fmt.Errorf("the plugin %s of %s is pinned without a path%s", bin, spec.Reinstall, again)
	case !filepath.IsAbs(spec.Path):
		return "", fmt.Errorf("plugin binary %s is not an absolute path%s", spec.Path, again)
	case filepath.Base(spec.Path) != bin:
		return "", fmt.Errorf("plugin binary %s is not named %s%s", spec.Path, bin, again)
	case spec.Reinstall != "" && spec.SHA256 == "":
		return "", fmt.Errorf("plugin binary %s is pinned without a sha256%s", spec.Path, again)
	}
	fi, err := os.Stat(spec.Path)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: plugin binary %s: %v%s", ErrNotFound, spec.Path, errors.Unwrap(err), orDefault(again, "; put the plugin there"))
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return "", fmt.Errorf("%w: plugin binary %s is not an executable file%s", ErrNotFound, spec.Path, orDefault(again, "; make it one"))
	}
	return spec.Path, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var incompatible = lazyregexp.New(`incompatible API version with plugin\. Plugin version: (\d+)`)

// Launch starts the plugin spec names and completes the go-plugin
// handshake, refusing at once a plugin of another contract version or with
// the wrong checksum. A plugin Prelaunch started for the same spec is
// taken instead (its handshake waited for), not started again.
func (s *Supervisor) Launch(spec Spec) (*Plugin, error) {
	if e := s.takeEarly(spec); e != nil {
		<-e.done
		return e.p, e.err
	}
	return s.launch(spec, nil)
}

// errShuttingDown refuses a plugin once the supervisor has stopped.
var errShuttingDown = errors.New("hermes is shutting down")

// launch is Launch without a prelaunched plugin. openConfig, when not
// nil, is handed to the plugin for an early open (Prelaunch).
func (s *Supervisor) launch(spec Spec, openConfig []byte) (*Plugin, error) {
	path, err := s.resolve(spec)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil, errShuttingDown
	}
	s.mu.Unlock()
	exe, err := openChecked(path, spec.SHA256)
	if err != nil {
		var ce *ChecksumError
		if errors.As(err, &ce) {
			ce.Reinstall = spec.Reinstall
		}
		return nil, err
	}
	defer exe.Close()
	label := spec.Label
	if label == "" {
		label = spec.Name
	}
	socketBase, err := s.socketFolder()
	if err != nil {
		return nil, err
	}
	p := &Plugin{Kind: spec.Kind, Name: spec.Name, Path: path, spec: spec, sup: s}
	logger := s.log.Named(label)
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginhost.Handshake(spec.Kind),
		VersionedPlugins: pluginhost.VersionedPlugins(spec.Plugins),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		SkipHostEnv:      true,
		StartTimeout:     StartTimeout,
		Logger:           logger,
		SyncStdout:       logger.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
		SyncStderr:       logger.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: socketBase},
		RunnerFunc: func(l hclog.Logger, cmd *exec.Cmd, socketDir string) (runner.Runner, error) {
			p.socketDir = socketDir
			var pinned *os.File
			if spec.SHA256 != "" {
				pinned = exe
			}
			r, err := newGroupRunner(path, pinned, cmd.Env, s.lookupEnv, openConfig)
			if err != nil {
				return nil, err
			}
			p.run = r
			p.stream = r.hostEnd
			return r, nil
		},
	})
	proto, err := p.client.Client()
	if err != nil {
		p.client.Kill()
		if p.run != nil {
			p.run.stop()
		}
		if m := incompatible.FindStringSubmatch(err.Error()); m != nil {
			v, _ := strconv.Atoi(m[1])
			return nil, &ContractError{Path: path, PluginVersion: v, HostVersion: pluginhost.ContractVersion(spec.Kind)}
		}
		return nil, fmt.Errorf("start plugin %s: %w", path, err)
	}
	p.proto = proto
	s.mu.Lock()
	if s.stopped {
		// Stopped during the handshake (KillAll, Interrupt): nothing
		// started may outlive the supervisor.
		s.mu.Unlock()
		p.Kill()
		return nil, errShuttingDown
	}
	s.plugins[p] = struct{}{}
	s.mu.Unlock()
	go func() {
		<-p.run.exited
		s.mu.Lock()
		delete(s.plugins, p)
		s.mu.Unlock()
		// Whatever the plugin left behind in its group (its server) goes
		// too, unless the plugin was detached to finish on its own.
		if !p.detached.Load() {
			p.run.killGroup()
		}
		// go-plugin removes the socket folder only when the host kills
		// the plugin; one that exited or crashed leaves it.
		if p.socketDir != "" {
			_ = os.RemoveAll(p.socketDir)
		}
	}()
	return p, nil
}

// openChecked opens the binary at path and, when want is set, checks its
// sha256 on the opened file.
func openChecked(path, want string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open plugin %s: %w", path, err)
	}
	if want == "" {
		return f, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		f.Close()
		return nil, fmt.Errorf("hash plugin %s: %w", path, err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if !strings.EqualFold(got, strings.TrimSpace(want)) {
		f.Close()
		return nil, &ChecksumError{Path: path, Want: strings.ToLower(strings.TrimSpace(want)), Got: got}
	}
	return f, nil
}

// Spec returns the spec the plugin was launched from.
func (p *Plugin) Spec() Spec { return p.spec }

// Dispense returns the plugin's implementation of its kind (for a transport
// plugin, a *pluginhost.Transport).
func (p *Plugin) Dispense() (any, error) {
	raw, err := p.proto.Dispense(p.Kind)
	if err != nil {
		return nil, fmt.Errorf("dispense %s from %s: %w", p.Kind, p.Path, err)
	}
	return raw, nil
}

// Stream returns, once, the host's end of the socket the plugin inherited
// for its message stream (sdk.StreamFDEnv); nil after the first call.
func (p *Plugin) Stream() net.Conn {
	p.streamMu.Lock()
	defer p.streamMu.Unlock()
	c := p.stream
	p.stream = nil
	return c
}

// Exited is closed when the plugin process has exited.
func (p *Plugin) Exited() <-chan struct{} { return p.run.exited }

// Pid returns the plugin's process id.
func (p *Plugin) Pid() int { return p.run.pid }

// Kill stops the plugin: a graceful quit (bounded), then SIGKILL to its
// whole process group, so a server it started dies with it.
func (p *Plugin) Kill() {
	if p.detached.Load() {
		return
	}
	done := make(chan struct{})
	p.run.stopping.Store(true)
	go func() { p.client.Kill(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
	p.run.stop()
}

// Ending marks the plugin's coming end as on purpose before it is asked to
// finish (its kind's detach): a plugin may be gone before the answer to
// that request arrives, and its exit must not be logged as a crash then.
// It changes nothing else: Kill and KillAll still stop it until Detach.
func (p *Plugin) Ending() { p.run.stopping.Store(true) }

// Detach lets the plugin finish on its own: neither Kill nor KillAll stops
// it or its group any more, and the host may exit at once. Call it after
// the plugin was asked to close and exit by itself (its kind's detach); it
// then stops its server within its graces and exits, and dies with its
// host if it outlives it. Only Interrupt still kills it.
//
// Its end is then on purpose, like a Kill's, however it comes: a plugin
// finishing on its own may SIGKILL its whole process group, itself
// included (one built on an older sdk, or on a system without /proc), and
// a host still running must not log that as a crash (Wait, Stopped).
func (p *Plugin) Detach() {
	p.run.stopping.Store(true)
	p.detached.Store(true)
}

// KillAll kills every running plugin that is not detached, in parallel, and
// refuses new ones: the end of a command.
func (s *Supervisor) KillAll() {
	var wg sync.WaitGroup
	for _, p := range s.stop() {
		if p.detached.Load() {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); p.Kill() }()
	}
	wg.Wait()
	// A prelaunched plugin still in its handshake kills itself when the
	// handshake ends (launch sees the stop); wait for that, so that it
	// does not outlive the host.
	s.prelaunches.Wait()
	s.removeSockets()
}

// Interrupt SIGKILLs every running plugin's process group, detached ones
// included, and refuses new ones: the user interrupted hermes (SIGINT,
// SIGTERM), so nothing it started may outlive it.
func (s *Supervisor) Interrupt() {
	for _, p := range s.stop() {
		p.run.stop()
	}
	s.removeSockets()
}

// socketFolder returns the folder of the plugins' socket folders, made on
// first use.
func (s *Supervisor) socketFolder() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.socketBase == "" {
		d, err := os.MkdirTemp("", "hermes-plugins-")
		if err != nil {
			return "", fmt.Errorf("make a folder for the plugins' sockets: %w", err)
		}
		s.socketBase = d
	}
	return s.socketBase, nil
}

// removeSockets removes the plugins' socket folders: the supervisor has
// stopped. Plugins still finishing on their own keep their connections
// (the sockets are connected already).
func (s *Supervisor) removeSockets() {
	s.mu.Lock()
	base := s.socketBase
	s.socketBase = ""
	s.mu.Unlock()
	if base != "" {
		_ = os.RemoveAll(base)
	}
}

// stop refuses new plugins and returns the running ones.
func (s *Supervisor) stop() []*Plugin {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	ps := make([]*Plugin, 0, len(s.plugins))
	for p := range s.plugins {
		ps = append(ps, p)
	}
	return ps
}

// groupRunner runs a plugin in its own process group with stdin on
// /dev/null and a parent-death signal, and reports its exit on a channel.
type groupRunner struct {
	cmd     *exec.Cmd
	hostEnd net.Conn // the host's end of the message socket
	child   *os.File // the plugin's end, closed in the host after start
	// early is the config of an early open and earlyR, earlyW its pipe
	// (sdk.EarlyOpenFDEnv): written after the start, then closed.
	early          []byte
	earlyR, earlyW *os.File
	stdout         io.ReadCloser
	stderr         io.ReadCloser
	pid            int
	exited         chan struct{}
	once           sync.Once
	// stopping is set when hermes stops the plugin on purpose.
	stopping atomic.Bool
}

// newGroupRunner prepares the plugin's command. exe, when not nil, is the
// opened binary whose checksum was verified: it is executed itself. early,
// when not nil, is the config of an early open, on a pipe the plugin
// inherits (sdk.EarlyOpenFDEnv).
func newGroupRunner(path string, exe *os.File, env []string, lookupEnv func(string) (string, bool), early []byte) (*groupRunner, error) {
	cmd := &exec.Cmd{Path: path, Args: []string{path}}
	for _, k := range pluginEnv {
		if v, ok := lookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	// A connected socket pair carries the JSON-RPC messages: the plugin
	// inherits one end as fd 3, so messages cross one kernel socket instead
	// of go-plugin's multiplexer.
	fds, err := streamSocketpair()
	if err != nil {
		return nil, fmt.Errorf("message socket for %s: %w", path, err)
	}
	hostFile := os.NewFile(uintptr(fds[0]), "hermes-stream-host")
	child := os.NewFile(uintptr(fds[1]), "hermes-stream-plugin")
	hostEnd, err := net.FileConn(hostFile)
	hostFile.Close()
	if err != nil {
		child.Close()
		return nil, fmt.Errorf("message socket for %s: %w", path, err)
	}
	cmd.ExtraFiles = []*os.File{child}
	if execOpened && exe != nil {
		// Execute the opened (and checked) file itself, not the path
		// again: it is passed as fd 4 and run through /proc/self/fd.
		cmd.ExtraFiles = append(cmd.ExtraFiles, exe)
		cmd.Path = "/proc/self/fd/4"
	}
	cmd.Env = append(env, sdk.StreamFDEnv+"=3", "GOMAXPROCS=1")
	r := &groupRunner{cmd: cmd, hostEnd: hostEnd, child: child, exited: make(chan struct{})}
	if early != nil {
		if r.earlyR, r.earlyW, err = os.Pipe(); err != nil {
			child.Close()
			hostEnd.Close()
			return nil, fmt.Errorf("early open pipe for %s: %w", path, err)
		}
		r.early = early
		cmd.ExtraFiles = append(cmd.ExtraFiles, r.earlyR)
		cmd.Env = append(cmd.Env, sdk.EarlyOpenFDEnv+"="+strconv.Itoa(2+len(cmd.ExtraFiles)))
	}
	cmd.Stdin = nil
	cmd.SysProcAttr = pluginSysProcAttr()
	keepInherited()
	return r, nil
}

func (r *groupRunner) Start(context.Context) error {
	var err error
	if r.stdout, err = r.cmd.StdoutPipe(); err != nil {
		return err
	}
	if r.stderr, err = r.cmd.StderrPipe(); err != nil {
		return err
	}
	err = r.cmd.Start()
	r.child.Close()
	if r.earlyR != nil {
		r.earlyR.Close()
		if err != nil {
			r.earlyW.Close()
		} else {
			// The plugin reads it at its start; a plugin that does
			// not know the pipe leaves it unread, and its end closes it.
			go func(w *os.File, b []byte) {
				_, _ = w.Write(b)
				w.Close()
			}(r.earlyW, r.early)
		}
		r.early = nil
	}
	if err != nil {
		r.hostEnd.Close()
		return err
	}
	r.pid = r.cmd.Process.Pid
	return nil
}

// Wait waits for the plugin to exit. A plugin hermes stopped on purpose
// ends without an error: go-plugin logs a Wait error as "[ERROR] plugin
// process exited", which is for plugins that died on their own.
func (r *groupRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	r.once.Do(func() { close(r.exited) })
	if r.stopping.Load() {
		return nil
	}
	return err
}

// Kill is go-plugin's forced stop, after its graceful one timed out.
func (r *groupRunner) Kill(context.Context) error {
	r.stop()
	return nil
}

// stop kills the plugin's process group on purpose: its end is then not a
// crash (Wait, Plugin.ExitReason).
func (r *groupRunner) stop() {
	r.stopping.Store(true)
	r.killGroup()
}

// killGroup SIGKILLs the plugin's process group.
func (r *groupRunner) killGroup() {
	if r.pid > 0 {
		_ = syscall.Kill(-r.pid, syscall.SIGKILL)
	}
}

func (r *groupRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *groupRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *groupRunner) Name() string          { return r.cmd.Args[0] }
func (r *groupRunner) ID() string            { return strconv.Itoa(r.pid) }
func (r *groupRunner) Diagnose(context.Context) string {
	return "the plugin did not complete the handshake: is it a Hermes plugin built for this system?"
}
func (r *groupRunner) PluginToHost(network, address string) (string, string, error) {
	return network, address, nil
}
func (r *groupRunner) HostToPlugin(network, address string) (string, string, error) {
	return network, address, nil
}
