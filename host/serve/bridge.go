package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
)

// DefaultBridge is the bridge plugin `hermes mcp serve` runs:
// hermes-bridge-messaging.
const DefaultBridge = "messaging"

// openTimeout bounds starting, describing and opening the plugin.
const openTimeout = 30 * time.Second

// BridgeOptions configure a Bridge.
type BridgeOptions struct {
	// Supervisor launches the plugin.
	Supervisor *supervisor.Supervisor
	// Name is the plugin's name: hermes-bridge-<Name>.
	Name string
	// Home is $HERMES_HOME, passed to the plugin.
	Home string
	// Settings is the plugin's block of mcp_serve (mcp_serve.<Name>).
	Settings map[string]any
	// Env returns the values of the named variables that are set (the
	// process environment first, then .env); nil passes none.
	Env func(names []string) (map[string]string, error)
	// MaxResultBytes bounds one result (mcp_serve.max_result_mb).
	MaxResultBytes int
	// Logger receives what happens to the plugin.
	Logger hclog.Logger
}

// Bridge keeps one bridge plugin running for the server: it launches it,
// checks its description, opens it over the home folder, and starts it
// again when it exits (supervisor.Instance: one start at a time, restart
// with backoff, the exit reason logged). Its methods are safe for
// concurrent use.
type Bridge struct {
	o    BridgeOptions
	log  hclog.Logger
	desc bridge.Description
	inst *supervisor.Instance[*pluginhost.BridgeClient]
}

// StartBridge launches the plugin, reads its description and opens it.
func StartBridge(ctx context.Context, o BridgeOptions) (*Bridge, error) {
	if o.Name == "" {
		o.Name = DefaultBridge
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	b := &Bridge{o: o, log: o.Logger.Named("bridge." + o.Name)}
	b.inst = supervisor.NewInstance(b.launch, supervisor.InstanceOptions{
		Restart: true,
		OnExit: func(reason string) {
			b.log.Warn("bridge plugin exited; starting it again", "reason", reason)
		},
		OnRestartFailed: func(err error) {
			b.log.Error("bridge plugin did not start again; the next call tries once more", "error", err)
		},
	})
	if _, _, err := b.inst.Get(ctx); err != nil {
		b.inst.Close()
		return nil, err
	}
	return b, nil
}

// Description is what the plugin offers, as it described itself at start.
func (b *Bridge) Description() bridge.Description { return b.desc }

// binary names the plugin binary in messages.
func (b *Bridge) binary() string { return sdk.BinaryName(sdk.KindBridge, b.o.Name) }

// launch starts one plugin process, describes and opens it.
func (b *Bridge) launch(ctx context.Context) (*pluginhost.BridgeClient, *supervisor.Plugin, error) {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	p, err := b.o.Supervisor.Launch(supervisor.Spec{
		Kind: sdk.KindBridge, Name: b.o.Name, Label: "bridge." + b.o.Name,
		Plugins: map[string]plugin.Plugin{sdk.KindBridge: pluginhost.BridgePlugin{}},
	})
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*pluginhost.BridgeClient, *supervisor.Plugin, error) {
		p.Kill()
		return nil, nil, err
	}
	raw, err := p.Dispense()
	if err != nil {
		return fail(fmt.Errorf("%s: %w", b.binary(), err))
	}
	h, ok := raw.(*pluginhost.Bridge)
	if !ok {
		return fail(fmt.Errorf("%s is not a bridge plugin", b.binary()))
	}
	desc, err := h.Describe(ctx)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", b.binary(), err))
	}
	var env map[string]string
	if b.o.Env != nil && len(desc.Env) > 0 {
		if env, err = b.o.Env(desc.Env); err != nil {
			return fail(err)
		}
	}
	// The calls travel on the socket the plugin inherited, not on
	// go-plugin's multiplexer: two goroutine hand-offs fewer on each side
	// of each message.
	c, err := h.Open(ctx, bridge.Config{Home: b.o.Home, Env: env, Settings: b.o.Settings}, pluginhost.BridgeOptions{MaxResultBytes: max(b.o.MaxResultBytes, 0), Stream: p.Stream()})
	if err != nil {
		return fail(fmt.Errorf("%s: open: %w", b.binary(), err))
	}
	// The first start's description is the one clients get (starts are
	// one at a time, so this needs no lock).
	if b.desc.Name == "" {
		b.desc = desc
	} else if !sameTools(desc, b.desc) {
		b.log.Warn("the restarted bridge plugin describes other tools than at start; clients keep the first list until serve restarts")
	}
	b.log.Debug("bridge plugin started", "pid", p.Pid(), "tools", len(desc.Tools))
	return c, p, nil
}

// errClosed is the error of a call after Close.
var errClosed = errors.New("hermes mcp serve is stopping")

// sameTools reports whether two descriptions have the same tool names.
func sameTools(a, b bridge.Description) bool {
	if len(a.Tools) != len(b.Tools) {
		return false
	}
	for i := range a.Tools {
		if a.Tools[i].Name != b.Tools[i].Name {
			return false
		}
	}
	return true
}

// CrashError is the error of a call the plugin did not finish because it
// exited (crashed, was killed) during the call or could not be started.
type CrashError struct {
	Binary string
	// Reason is how the process ended, when known.
	Reason string
	// Start is set when the plugin could not be started at all.
	Start error
}

func (e *CrashError) Error() string {
	if e.Start != nil {
		return fmt.Sprintf("the bridge plugin %s could not be started (%v); check 'hermes mcp serve -v' output and the log in $HERMES_HOME/logs", e.Binary, e.Start)
	}
	why := ""
	if e.Reason != "" {
		why = " (" + e.Reason + ")"
	}
	return fmt.Sprintf("the bridge plugin %s stopped during the call%s; it is being started again: call the tool again", e.Binary, why)
}

// Call runs tool name with args in the plugin. When the plugin exits
// during the call, the call fails at once with a *CrashError, and the
// plugin is started again for the next call. A call that finds the plugin
// already gone (it never reached it) is sent to a new process instead.
func (b *Bridge) Call(ctx context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	for attempt := 0; ; attempt++ {
		res, err := b.call(ctx, name, args)
		if errors.Is(err, pluginhost.ErrNotSent) && attempt == 0 && ctx.Err() == nil {
			continue
		}
		if errors.Is(err, pluginhost.ErrNotSent) {
			err = &CrashError{Binary: b.binary(), Reason: "its connection is closed"}
		}
		return res, err
	}
}

// call is one attempt of Call.
func (b *Bridge) call(ctx context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	c, p, err := b.inst.Get(ctx)
	if err != nil {
		if errors.Is(err, supervisor.ErrInstanceClosed) {
			return bridge.Result{}, errClosed
		}
		if ctx.Err() != nil {
			return bridge.Result{}, err
		}
		return bridge.Result{}, &CrashError{Binary: b.binary(), Start: err}
	}
	select {
	case <-p.Exited():
		// Gone before the call: not sent; the next attempt starts a new
		// process without waiting for the watcher.
		b.inst.Drop(p)
		return bridge.Result{}, pluginhost.ErrNotSent
	default:
	}
	// No goroutine watches the process during the call: its end of the
	// calls' connection closes when it exits, which fails the call at once
	// (CodeClosed), and the exit is read then.
	res, err := c.Call(ctx, name, args)
	if err == nil {
		return res, nil
	}
	if errors.Is(err, pluginhost.ErrNotSent) {
		b.inst.Drop(p)
		return bridge.Result{}, err
	}
	if sdk.ErrorCode(err) != sdk.CodeClosed || ctx.Err() != nil {
		return res, err
	}
	if reason := p.ExitReason(exitWait); reason != "" {
		// It exited on its own: the instance starts it again, with backoff
		// if it keeps crashing.
		return bridge.Result{}, &CrashError{Binary: b.binary(), Reason: reason}
	}
	// The connection broke and the process is still there: make sure it
	// is gone, and say so.
	b.inst.Drop(p)
	return bridge.Result{}, &CrashError{Binary: b.binary(), Reason: "its connection broke"}
}

// exitWait bounds the wait for the exit of a plugin whose connection ended
// during a call (the exit is seen a moment after the socket closes).
const exitWait = time.Second

// Pid returns the process id of the running plugin, 0 when none runs.
func (b *Bridge) Pid() int {
	if _, p, ok := b.inst.Current(); ok {
		return p.Pid()
	}
	return 0
}

// Close stops the plugin and every later call fails.
func (b *Bridge) Close() { b.inst.Close() }

// DotEnvLookup returns an Env function for BridgeOptions over the process
// environment and the given .env values (the environment wins).
func DotEnvLookup(dotenv map[string]string) func(names []string) (map[string]string, error) {
	return func(names []string) (map[string]string, error) {
		out := map[string]string{}
		for _, n := range names {
			if v, ok := os.LookupEnv(n); ok && v != "" {
				out[n] = v
			} else if v, ok := dotenv[n]; ok && v != "" {
				out[n] = v
			}
		}
		return out, nil
	}
}
