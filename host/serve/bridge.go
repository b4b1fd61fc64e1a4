package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
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

// Restart backoff after a crash: the first restart is at once, later ones
// of a plugin that keeps crashing wait longer, up to maxRestartWait; a
// plugin that ran for stableAfter counts as healthy again.
const (
	firstRestartWait = 250 * time.Millisecond
	maxRestartWait   = 30 * time.Second
	stableAfter      = time.Minute
	// openTimeout bounds starting, describing and opening the plugin.
	openTimeout = 30 * time.Second
)

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
// again when it exits. Its methods are safe for concurrent use.
type Bridge struct {
	o    BridgeOptions
	log  hclog.Logger
	desc bridge.Description

	mu       sync.Mutex
	cur      *instance
	starting chan struct{} // closed when the start under way ends
	closed   bool
	wait     time.Duration // the next restart's backoff
}

// instance is one running plugin process, opened.
type instance struct {
	p       *supervisor.Plugin
	c       *pluginhost.BridgeClient
	started time.Time
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
	inst, desc, err := b.launch(ctx)
	if err != nil {
		return nil, err
	}
	b.desc = desc
	b.mu.Lock()
	b.cur = inst
	b.mu.Unlock()
	go b.watch(inst)
	return b, nil
}

// Description is what the plugin offers, as it described itself at start.
func (b *Bridge) Description() bridge.Description { return b.desc }

// binary names the plugin binary in messages.
func (b *Bridge) binary() string { return sdk.BinaryName(sdk.KindBridge, b.o.Name) }

// launch starts one plugin process, describes and opens it.
func (b *Bridge) launch(ctx context.Context) (*instance, bridge.Description, error) {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	p, err := b.o.Supervisor.Launch(supervisor.Spec{
		Kind: sdk.KindBridge, Name: b.o.Name, Label: "bridge." + b.o.Name,
		Plugins: map[string]plugin.Plugin{sdk.KindBridge: pluginhost.BridgePlugin{}},
	})
	if err != nil {
		return nil, bridge.Description{}, err
	}
	fail := func(err error) (*instance, bridge.Description, error) {
		p.Kill()
		return nil, bridge.Description{}, err
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
	c, err := h.Open(ctx, bridge.Config{Home: b.o.Home, Env: env, Settings: b.o.Settings})
	if err != nil {
		return fail(fmt.Errorf("%s: open: %w", b.binary(), err))
	}
	if b.o.MaxResultBytes > 0 {
		c.MaxResultBytes = b.o.MaxResultBytes
	}
	b.log.Debug("bridge plugin started", "pid", p.Pid(), "tools", len(desc.Tools))
	return &instance{p: p, c: c, started: time.Now()}, desc, nil
}

// watch starts the plugin again when inst exits.
func (b *Bridge) watch(inst *instance) {
	<-inst.p.Exited()
	reason := inst.p.ExitReason(time.Second)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	if b.cur == inst {
		b.cur = nil
	}
	if time.Since(inst.started) > stableAfter || b.wait == 0 {
		b.wait = firstRestartWait
	} else if b.wait *= 2; b.wait > maxRestartWait {
		b.wait = maxRestartWait
	}
	wait := b.wait
	b.mu.Unlock()
	b.log.Warn("bridge plugin exited; starting it again", "reason", reason, "in", wait)
	t := time.NewTimer(wait)
	defer t.Stop()
	<-t.C
	if _, err := b.instance(context.Background()); err != nil {
		b.log.Error("bridge plugin did not start again; the next call tries once more", "error", err)
	}
}

// errClosed is the error of a call after Close.
var errClosed = errors.New("hermes mcp serve is stopping")

// instance returns the running plugin, starting it when none runs. One
// start runs at a time; other callers wait for it.
func (b *Bridge) instance(ctx context.Context) (*instance, error) {
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, errClosed
		}
		if b.cur != nil {
			inst := b.cur
			b.mu.Unlock()
			return inst, nil
		}
		if ch := b.starting; ch != nil {
			b.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		b.starting = ch
		b.mu.Unlock()

		inst, desc, err := b.launch(ctx)
		b.mu.Lock()
		b.starting = nil
		close(ch)
		if err != nil {
			b.mu.Unlock()
			return nil, err
		}
		if b.closed {
			b.mu.Unlock()
			inst.p.Kill()
			return nil, errClosed
		}
		b.cur = inst
		b.mu.Unlock()
		if !sameTools(desc, b.desc) {
			b.log.Warn("the restarted bridge plugin describes other tools than at start; clients keep the first list until serve restarts")
		}
		go b.watch(inst)
		return inst, nil
	}
}

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
	inst, err := b.instance(ctx)
	if err != nil {
		if errors.Is(err, errClosed) || ctx.Err() != nil {
			return bridge.Result{}, err
		}
		return bridge.Result{}, &CrashError{Binary: b.binary(), Start: err}
	}
	select {
	case <-inst.p.Exited():
		// Gone before the call: not sent; the next attempt starts a new
		// process without waiting for the watcher.
		b.drop(inst)
		return bridge.Result{}, pluginhost.ErrNotSent
	default:
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	exited := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-inst.p.Exited():
			close(exited)
			cancel()
		case <-stop:
		}
	}()
	res, err := inst.c.Call(callCtx, name, args)
	if errors.Is(err, pluginhost.ErrNotSent) {
		b.drop(inst)
		return bridge.Result{}, err
	}
	select {
	case <-exited:
		return bridge.Result{}, &CrashError{Binary: b.binary(), Reason: inst.p.ExitReason(time.Second)}
	default:
	}
	if sdk.ErrorCode(err) == sdk.CodeClosed && ctx.Err() == nil {
		// The connection broke without the exit being seen yet: the
		// process is going; make sure it is gone, and say so.
		b.drop(inst)
		return bridge.Result{}, &CrashError{Binary: b.binary(), Reason: "its connection broke"}
	}
	return res, err
}

// drop forgets inst, a plugin process that is gone or broken, and kills
// what is left of it; the next call starts a new one.
func (b *Bridge) drop(inst *instance) {
	b.mu.Lock()
	if b.cur == inst {
		b.cur = nil
	}
	b.mu.Unlock()
	go inst.p.Kill()
}

// Pid returns the process id of the running plugin, 0 when none runs.
func (b *Bridge) Pid() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur == nil {
		return 0
	}
	return b.cur.p.Pid()
}

// Close stops the plugin and every later call fails.
func (b *Bridge) Close() {
	b.mu.Lock()
	b.closed = true
	inst := b.cur
	b.cur = nil
	b.mu.Unlock()
	if inst != nil {
		inst.p.Kill()
	}
}

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
