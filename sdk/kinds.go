package sdk

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk/internal/serve"
)

// Version is the version of this sdk module (its git tag is sdk/v<Version>).
// Each kind's contract has a version of its own (transport.ContractVersion,
// auth.ContractVersion, bridge.ContractVersion, model.ContractVersion): the
// host refuses a plugin built for another version of its kind's contract,
// and only those.
const Version = "0.5.0"

// Plugin kinds. A plugin binary is named hermes-<kind>-<name>, and the
// go-plugin plugin set it serves has one entry named after its kind.
const (
	KindTransport = "transport"
	KindAuth      = "auth"
	KindBridge    = "bridge"
	KindModel     = "model"
)

// BinaryName returns the file name of a plugin binary of the given kind and
// name, e.g. BinaryName(KindTransport, "stdio") = "hermes-transport-stdio".
func BinaryName(kind, name string) string {
	return fmt.Sprintf("hermes-%s-%s", kind, name)
}

// StreamFDEnv names the environment variable through which the host tells a
// plugin process that it inherited a connected socket for the message
// stream, and its file descriptor number. The kind packages take the socket;
// a plugin that starts other processes keeps it from them.
const StreamFDEnv = "HERMES_PLUGIN_STREAM_FD"

// EarlyOpenFDEnv names the environment variable through which the host
// tells a transport plugin that it inherited, at that file descriptor, a
// pipe carrying the config of the Open it will ask for first (the JSON of
// transport.Config, as Open sends it). The plugin opens that connection at
// once, while the go-plugin handshake and the dispense run, and the first
// Open with exactly those bytes takes it; another Open closes it. A plugin
// that does not know the variable ignores the pipe.
const EarlyOpenFDEnv = "HERMES_TRANSPORT_EARLY_FD"

// KeepPagesEnv names the environment variable through which the host (or
// whoever runs a plugin) keeps the plugin from giving back the resident
// pages of its binary (its code and read-only data) once its start is
// over: set to anything but "" or "0", they stay mapped. By default every
// plugin served by a kind's Serve gives them back PagesShedDelay after its
// start is over (they stay in the page cache, and what is read again is
// mapped again); docs/PLUGINS.md says when and what it saves.
const KeepPagesEnv = serve.KeepPagesEnv

// PagesShedDelay is how long after its start is over (a transport: the
// host's first frame; the other kinds: the end of the first Open) a plugin
// gives back its pages, in the background: a plugin that serves one call
// and exits never pays for it.
const PagesShedDelay = serve.ShedDelay

// HostEnv reports whether the environment variable key is one the host sets
// for the plugin process itself (go-plugin's PLUGIN_* variables, the
// handshake cookie, StreamFDEnv, EarlyOpenFDEnv, KeepPagesEnv, GOMAXPROCS):
// a command the plugin runs must not inherit it.
func HostEnv(key string) bool {
	return strings.HasPrefix(key, "PLUGIN_") || key == serve.MagicCookieKey || key == StreamFDEnv || key == EarlyOpenFDEnv || key == KeepPagesEnv || key == "GOMAXPROCS"
}

// ServeOption tunes a kind's Serve, e.g. transport.Serve(open,
// sdk.WithLogger(l)). Without options Serve does what plugins want.
type ServeOption func(*serve.Options)

// WithLogger sets the plugin's logger; by default JSON lines on stderr
// (NewPluginLogger), which the host reads into its own log at the same
// level.
func WithLogger(l hclog.Logger) ServeOption {
	return func(o *serve.Options) { o.Logger = l }
}

// WithShutdownGrace bounds closing what the plugin has open once the host
// is gone or asks it to stop (default DefaultShutdownGrace); past it the
// plugin kills its process group, and so any server it started, and exits.
func WithShutdownGrace(d time.Duration) ServeOption {
	return func(o *serve.Options) { o.ShutdownGrace = d }
}

// WithParentPollInterval sets how often the plugin checks that its host is
// still alive (default 500ms), besides the parent-death signal.
func WithParentPollInterval(d time.Duration) ServeOption {
	return func(o *serve.Options) { o.ParentPollInterval = d }
}

// DefaultShutdownGrace is WithShutdownGrace's default.
const DefaultShutdownGrace = 10 * time.Second

// NewPluginLogger returns the logger a plugin should use: JSON lines on
// stderr, which the host re-emits into its log under the plugin's name.
func NewPluginLogger(name string) hclog.Logger { return serve.NewLogger(name) }
