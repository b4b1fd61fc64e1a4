package model

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/sdk"
	sdkmodel "github.com/hermes-agent/hermes/sdk/model"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
)

// PluginName is the name of the model plugin hermes runs: the binary
// Binary, a process of its own so that the OpenAI client library is linked
// there and not into hermes, whose every command would pay its
// initialisation.
const PluginName = "openai"

// Binary is the model plugin's file name, hermes-<kind>-<name>.
const Binary = "hermes-model-openai"

// DefaultIdleAfter is Options.IdleAfter's default: a chat that asks the
// model nothing for this long lets its model plugin go (the next question
// starts it again, in a few milliseconds).
const DefaultIdleAfter = 5 * time.Minute

// openTimeout bounds starting and opening the plugin.
const openTimeout = 30 * time.Second

// Options configure a Client.
type Options struct {
	// Supervisor launches the model plugin (found on its search path, in
	// its process group, with the parent-death signal and its logs).
	Supervisor *supervisor.Supervisor
	// IdleAfter is how long the plugin may go without a call before it is
	// stopped; 0 is DefaultIdleAfter, below 0 never.
	IdleAfter time.Duration
	// Logger receives what happens to the plugin; nil logs nothing.
	Logger hclog.Logger
}

// Client calls the endpoint of its settings through the model plugin
// (Binary), one process for as long as the client is used: started on the
// first call through the supervisor (supervisor.Instance: one start at a
// time, started again when it died), stopped after Options.IdleAfter
// without a call, and by Close. It is safe for concurrent use.
type Client struct {
	s    *Settings
	o    Options
	log  hclog.Logger
	inst *supervisor.Instance[*pluginhost.ModelClient]

	mu       sync.Mutex
	inflight int
	idle     *time.Timer
	idleGen  uint64 // which idle timer is the current one
	closed   bool
}

// New returns a client of the endpoint s describes. Nothing starts before
// the first call.
func New(s *Settings, o Options) *Client {
	if o.IdleAfter == 0 {
		o.IdleAfter = DefaultIdleAfter
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	c := &Client{s: s, o: o, log: o.Logger.Named("model." + PluginName)}
	c.inst = supervisor.NewInstance(c.launch, supervisor.InstanceOptions{
		// A model call that finds its plugin gone starts it again at
		// once; only a start that fails backs off.
		HealthyOnStart: true,
		// Told of every end but Drop's and Close's: a crash, or the end
		// of the run (the supervisor stops its plugins), which is no
		// warning; a crash during a call is the call's error.
		OnExit: func(reason string) {
			c.log.Info("model plugin exited; the next call starts it again", "reason", reason)
		},
	})
	return c
}

// Settings returns the client's settings.
func (c *Client) Settings() *Settings { return c.s }

// launch starts one plugin process and opens its model with the
// settings (the key crosses here, over the plugin's connection).
func (c *Client) launch(ctx context.Context) (*pluginhost.ModelClient, *supervisor.Plugin, error) {
	if c.o.Supervisor == nil {
		return nil, nil, errors.New("no supervisor to start the model plugin")
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	p, err := c.o.Supervisor.Launch(supervisor.Spec{
		Kind: sdk.KindModel, Name: PluginName, Label: "model." + PluginName,
		Plugins: map[string]plugin.Plugin{sdk.KindModel: pluginhost.ModelPlugin{}},
	})
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*pluginhost.ModelClient, *supervisor.Plugin, error) {
		p.Kill()
		return nil, nil, err
	}
	raw, err := p.Dispense()
	if err != nil {
		return fail(err)
	}
	h, ok := raw.(*pluginhost.Model)
	if !ok {
		return fail(fmt.Errorf("plugin %s is not a model plugin", p.Path))
	}
	mc, err := h.Open(ctx, c.s.Config(), pluginhost.ModelOptions{
		// What the plugin may send: the response bound, twice (the text
		// streamed, then the answer that holds it), and some slack.
		MaxTextBytes:     int(c.s.MaxResponseBytes)*2 + lineSlack,
		MaxResponseBytes: int(c.s.MaxResponseBytes)*2 + lineSlack,
	})
	if err != nil {
		return fail(fmt.Errorf("%s: open: %w", p.Path, err))
	}
	c.log.Debug("model plugin started", "pid", p.Pid())
	return mc, p, nil
}

// lineSlack is what the plugin may send beyond the response bound.
const lineSlack = 1 << 20

// Starts counts the model plugin processes started so far.
func (c *Client) Starts() int { return c.inst.Starts() }

// Close stops the plugin; later calls fail.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	if c.idle != nil {
		c.idle.Stop()
	}
	c.mu.Unlock()
	c.inst.Close()
}

// Chat asks the model for one completion, streamed. Errors are *Error or
// say what went wrong with the plugin; none of them shows the key
// (Settings.RedactError), whatever the endpoint or the plugin echoed.
func (c *Client) Chat(ctx context.Context, req Request) (*Response, error) {
	res, err := c.chat(ctx, req)
	return res, c.s.RedactError(err)
}

func (c *Client) chat(ctx context.Context, req Request) (*Response, error) {
	// The call's own deadline travels to the plugin with the call.
	ctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	c.begin()
	defer c.end()
	for attempt := 0; ; attempt++ {
		res, err := c.complete(ctx, req)
		if errors.Is(err, pluginhost.ErrNotSent) && attempt == 0 && ctx.Err() == nil {
			// The plugin was gone before the call reached it: a new one
			// gets it.
			continue
		}
		if err == nil {
			return &res, nil
		}
		return nil, c.failure(ctx, req, err)
	}
}

// complete is one attempt of chat: the running plugin (started when none
// runs) makes the completion.
func (c *Client) complete(ctx context.Context, req Request) (Response, error) {
	mc, p, err := c.inst.Get(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		return Response{}, &startError{err: err}
	}
	select {
	case <-p.Exited():
		c.inst.Drop(p)
		return Response{}, pluginhost.ErrNotSent
	default:
	}
	res, err := mc.Complete(ctx, req)
	switch {
	case errors.Is(err, pluginhost.ErrNotSent):
		c.inst.Drop(p)
	case sdk.ErrorCode(err) == sdk.CodeClosed && ctx.Err() == nil:
		// The connection broke during the call: the process is going.
		c.inst.Drop(p)
		return Response{}, &crashError{reason: p.ExitReason(time.Second)}
	}
	return res, err
}

// startError is a plugin that could not be started.
type startError struct{ err error }

func (e *startError) Error() string {
	return fmt.Sprintf("cannot start the model plugin %s (%v); reinstall hermes (make install)", Binary, e.err)
}

func (e *startError) Unwrap() error { return e.err }

// crashError is a plugin that exited during a call.
type crashError struct{ reason string }

func (e *crashError) Error() string {
	why := ""
	if e.reason != "" {
		why = " (" + e.reason + ")"
	}
	return fmt.Sprintf("the model plugin %s stopped during the call%s; ask again (it starts again)", Binary, why)
}

// failure words err, a failed completion, for the user.
func (c *Client) failure(ctx context.Context, req Request, err error) error {
	var pe *sdkmodel.Error
	var se *startError
	var ce *crashError
	switch {
	case errors.As(err, &pe):
		return FromPlugin(pe, c.s)
	case errors.As(err, &se), errors.As(err, &ce):
		return err
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		e := &Error{Kind: KindTimeout, BaseURL: c.s.BaseURL, Model: req.Model, Detail: "the call was cancelled"}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || (ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)) {
			e.Detail = fmt.Sprintf("within model.timeout (%s)", c.s.Timeout)
		}
		return NewError(e, c.s)
	default:
		return fmt.Errorf("the model plugin %s failed: %s", Binary, Clean(c.s.Redact(err.Error())))
	}
}

// begin counts a call in flight: the plugin is not idle.
func (c *Client) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight++
	c.idleGen++
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
}

// end counts a call as ended; the last one sets the idle timer.
func (c *Client) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight--
	if c.inflight > 0 || c.closed || c.o.IdleAfter < 0 {
		return
	}
	gen := c.idleGen
	c.idle = time.AfterFunc(c.o.IdleAfter, func() { c.idleStop(gen) })
}

// idleStop stops the plugin when no call came since the timer of gen was
// set; the next call starts it again.
func (c *Client) idleStop(gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.idleGen || c.inflight > 0 || c.closed {
		return
	}
	c.idle = nil
	if _, p, ok := c.inst.Current(); ok {
		c.log.Debug("model plugin stopped after being idle; the next call starts it again", "idle_after", c.o.IdleAfter)
		c.inst.Drop(p)
	}
}

// Pid returns the process id of the running model plugin, 0 when none
// runs.
func (c *Client) Pid() int {
	if _, p, ok := c.inst.Current(); ok {
		return p.Pid()
	}
	return 0
}
