// Package serve is the plugin process's side of go-plugin, shared by every
// kind: the handshake, Serve (the whole main of a plugin, through its kind
// package), parent-death handling and Exit, and the message socket the host
// passes at start. Kind packages build a Kind and hand it to Serve; the host
// side (sdk/pluginhost) uses the same Handshake.
package serve

import (
	"context"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// MagicCookieKey and MagicCookieValue are the go-plugin handshake cookie
// every Hermes plugin and the host share. The cookie only keeps people from
// running a plugin by hand; it is not a security measure.
const (
	MagicCookieKey   = "HERMES_PLUGIN"
	MagicCookieValue = "7f3c1e0a9b5d4c2e8a6f1b3d5e7c9a0b"
)

// StreamFDEnv names the environment variable through which a host tells a
// plugin process that it inherited a connected socket for the message
// stream, and its file descriptor number (sdk.StreamFDEnv).
const StreamFDEnv = "HERMES_PLUGIN_STREAM_FD"

// Handshake returns the go-plugin handshake of a plugin kind whose contract
// is at version: each binary serves one kind, so the protocol version is
// that kind's contract version, and a change to one kind refuses only the
// plugins of that kind.
func Handshake(version int) plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  uint(version),
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// Kind is one plugin kind's side of the contract, as its kind package builds
// it for Serve.
type Kind interface {
	// Name is the kind, e.g. sdk.KindTransport.
	Name() string
	// Version is the kind's contract version.
	Version() int
	// Plugin is the go-plugin glue served under Name.
	Plugin() plugin.Plugin
	// Shutdown ends what the plugin has open, gracefully, within ctx. It is
	// called once, when the host is gone or the plugin is told to stop.
	Shutdown(ctx context.Context)
}

// Options tune Serve; sdk.ServeOption sets them. The zero value is what
// plugins want.
type Options struct {
	// Logger is the plugin's logger; by default JSON to stderr, which the
	// host reads into its own log at the same level.
	Logger hclog.Logger
	// ParentPollInterval is how often the plugin checks that its host is
	// still alive; default 500ms.
	ParentPollInterval time.Duration
	// ShutdownGrace bounds Kind.Shutdown once the host is gone; default
	// DefaultShutdownGrace.
	ShutdownGrace time.Duration
}

// DefaultShutdownGrace is Options.ShutdownGrace's default.
const DefaultShutdownGrace = 10 * time.Second

// NewLogger returns the logger a plugin should use: JSON lines on stderr,
// which the host re-emits into its log under the plugin's name.
func NewLogger(name string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      hclog.Debug,
		Output:     os.Stderr,
		JSONFormat: true,
	})
}

// Serve serves k to the host and returns never; the process exits when the
// host is done with it or dies, after k.Shutdown.
func Serve(k Kind, o Options) {
	if o.Logger == nil {
		o.Logger = NewLogger(k.Name())
	}
	if o.ParentPollInterval == 0 {
		o.ParentPollInterval = 500 * time.Millisecond
	}
	if o.ShutdownGrace == 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	exiter.set(k, o)
	armPages()
	// Once the host is gone, its end of our stderr is closed: a log line
	// must fail with EPIPE, not kill the plugin with SIGPIPE in the middle
	// of stopping its server gracefully. (A handler, not SIG_IGN, so a
	// server the plugin starts gets the default disposition back.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	watchHost(o.ParentPollInterval)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake(k.Version()),
		VersionedPlugins: map[int]plugin.PluginSet{k.Version(): {k.Name(): k.Plugin()}},
		Logger:           o.Logger,
	})
	// The host closed the connection (Control.Quit or gone).
	Exit("host closed the plugin connection")
}

// exit holds what Exit needs; set once by Serve.
type exit struct {
	once  sync.Once
	mu    sync.Mutex
	kind  Kind
	log   hclog.Logger
	grace time.Duration
}

var exiter exit

func (e *exit) set(k Kind, o Options) {
	e.mu.Lock()
	e.kind, e.log, e.grace = k, o.Logger, o.ShutdownGrace
	e.mu.Unlock()
}

// Exit ends the plugin process: the kind's Shutdown within the shutdown
// grace, then SIGKILL to the plugin's process group (any server it started
// and did not stop), then exit status 0. Kind packages call it when the host
// asks a plugin to finish on its own (a one-shot command that does not wait);
// it is also what happens when the host dies. Only the first call counts;
// later calls block until the process exits.
func Exit(reason string) {
	exiter.once.Do(func() {
		exiter.mu.Lock()
		k, log, grace := exiter.kind, exiter.log, exiter.grace
		exiter.mu.Unlock()
		if log != nil {
			log.Debug("plugin exiting", "reason", reason)
		}
		if k != nil {
			ctx, cancel := context.WithTimeout(context.Background(), grace)
			done := make(chan struct{})
			go func() { k.Shutdown(ctx); close(done) }()
			select {
			case <-done:
			case <-ctx.Done():
			}
			cancel()
		}
		killOwnGroup()
		os.Exit(0)
	})
	select {}
}

// watchHost ends the plugin when its host dies: on SIGTERM (the host starts
// plugins with it as the parent-death signal) or SIGHUP, and as a fallback
// when the parent process changes.
func watchHost(every time.Duration) {
	parent := os.Getppid()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		Exit("signal " + s.String())
	}()
	go func() {
		for {
			time.Sleep(every)
			if os.Getppid() != parent {
				Exit("host exited")
			}
		}
	}()
}

var inheritedOnce sync.Once

// InheritedStream returns, once, the connected socket the host passed to
// the plugin process at start for its message stream (StreamFDEnv), or nil
// when there is none or it was already taken: a kind package then uses a
// broker stream.
func InheritedStream() net.Conn {
	var c net.Conn
	inheritedOnce.Do(func() {
		fd, err := strconv.Atoi(os.Getenv(StreamFDEnv))
		if err != nil || fd < 3 {
			return
		}
		f := os.NewFile(uintptr(fd), "hermes-stream")
		if f == nil {
			return
		}
		conn, err := net.FileConn(f)
		f.Close()
		if err != nil {
			return
		}
		c = conn
	})
	return c
}

// CloseInheritedStream closes the message socket the host passed, for a
// kind that has no message stream (auth, bridge): a command the plugin runs
// must not inherit it.
func CloseInheritedStream() {
	if c := InheritedStream(); c != nil {
		c.Close()
	}
}

// InProcess builds, per kind name, the Kind its package's Serve would serve
// from the same arguments (an Opener; for a bridge, a Description, an
// Opener and, optionally, a net.Conn standing for the socket a plugin
// process inherits), without a process. The kind packages fill it at init; sdktest
// and sdk/pluginhost's tests use it to run a plugin in-process.
var InProcess = map[string]func(args ...any) Kind{}
