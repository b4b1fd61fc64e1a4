package sdk

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// ServeOptions tunes ServeTransport. The zero value is what plugins want.
type ServeOptions struct {
	// Logger is the plugin's logger; by default JSON to stderr, which the
	// host reads into its own log at the same level.
	Logger hclog.Logger
	// ParentPollInterval is how often the plugin checks that its host is
	// still alive; default 500ms.
	ParentPollInterval time.Duration
}

// ServeTransport is the whole main of a transport plugin: it serves the
// transports built by factory to the host and returns when the host is done
// with the plugin. It exits the process when the host dies.
func ServeTransport(factory TransportFactory, opts ...ServeOptions) {
	var o ServeOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Logger == nil {
		o.Logger = NewPluginLogger("plugin")
	}
	if o.ParentPollInterval == 0 {
		o.ParentPollInterval = 500 * time.Millisecond
	}
	tp := &TransportPlugin{Factory: factory}
	// One receiver per dispense; remember them so they can be closed when
	// the host goes away.
	var servers []*transportServer
	wrapped := &trackingPlugin{TransportPlugin: tp, track: func(s *transportServer) { servers = append(servers, s) }}
	cleanup := func() {
		for _, s := range servers {
			s.closeAll()
		}
	}
	watchHost(o.Logger, o.ParentPollInterval, cleanup)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{KindTransport: wrapped},
		Logger:          o.Logger,
	})
	cleanup()
}

// NewPluginLogger returns the logger a plugin should use: JSON lines on
// stderr, which the host re-emits into its log under the plugin's name.
func NewPluginLogger(name string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      hclog.Debug,
		Output:     os.Stderr,
		JSONFormat: true,
	})
}

// trackingPlugin records each server-side receiver it hands out.
type trackingPlugin struct {
	*TransportPlugin
	track func(*transportServer)
}

// Server returns a tracked receiver.
func (p *trackingPlugin) Server(b *plugin.MuxBroker) (any, error) {
	s := &transportServer{factory: p.Factory, broker: b}
	p.track(s)
	return s, nil
}

// watchHost ends the plugin when its host dies: on SIGTERM (the host starts
// plugins with it as the parent-death signal) and, as a fallback, when the
// parent process changes. cleanup closes the transports first, so a local
// server is stopped too.
func watchHost(log hclog.Logger, every time.Duration, cleanup func()) {
	parent := os.Getppid()
	exit := func(why string) {
		log.Debug("host gone, exiting", "reason", why)
		done := make(chan struct{})
		go func() { cleanup(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
		}
		killOwnGroup()
		os.Exit(0)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		exit("signal " + s.String())
	}()
	go func() {
		for {
			time.Sleep(every)
			if os.Getppid() != parent {
				exit("parent exited")
			}
		}
	}()
}
