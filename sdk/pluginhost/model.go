package pluginhost

import (
	"context"
	"encoding/json"
	"fmt"
	"net/rpc"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
	mw "github.com/hermes-agent/hermes/sdk/internal/wire/modelwire"
	"github.com/hermes-agent/hermes/sdk/model"
)

// ModelPlugin is the host's go-plugin glue of the model kind: put it in
// the plugin set under sdk.KindModel, and Dispense returns a *Model.
type ModelPlugin struct{}

// Server is the plugin's side: not served by a host.
func (ModelPlugin) Server(*plugin.MuxBroker) (any, error) {
	return nil, sdk.NewError(sdk.CodeContract, "a host does not serve the model kind")
}

// Client returns the host-side handle, a *Model.
func (ModelPlugin) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &Model{rpc: rpcx.NewClient(c, "model plugin"), broker: b}, nil
}

// Model is the host's handle on a dispensed model plugin; Open it once.
type Model struct {
	rpc    *rpcx.Client
	broker *plugin.MuxBroker
}

// Limits a host applies to what a model plugin sends; a plugin is
// untrusted input.
const (
	// DefaultMaxModelTextBytes is ModelOptions.MaxTextBytes's default.
	DefaultMaxModelTextBytes = 16 << 20
	// DefaultMaxModelResponseBytes is ModelOptions.MaxResponseBytes's
	// default.
	DefaultMaxModelResponseBytes = 32 << 20
)

// ModelOptions configures the host side of an opened model plugin.
type ModelOptions struct {
	// MaxTextBytes bounds the text one completion streams; past it the
	// completion is cancelled and fails with a CodeTooLarge error. 0 is
	// DefaultMaxModelTextBytes.
	MaxTextBytes int
	// MaxResponseBytes bounds one answer as it crosses (its JSON); a
	// larger one fails with a CodeTooLarge error. 0 is
	// DefaultMaxModelResponseBytes.
	MaxResponseBytes int
}

// Open builds the plugin's Model for cfg (the API key in it crosses once,
// here, and is never logged); opts carries the host's limits. Every kind
// opens alike: Open(ctx, cfg, options).
func (h *Model) Open(ctx context.Context, cfg model.Config, opts ModelOptions) (*ModelClient, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode the model config of %s: %w", cfg.BaseURL, err)
	}
	if opts.MaxTextBytes <= 0 {
		opts.MaxTextBytes = DefaultMaxModelTextBytes
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxModelResponseBytes
	}
	c := &ModelClient{rpc: h.rpc, o: opts, text: &textCallbacks{streams: map[uint64]*textStream{}}}
	var id uint32
	if h.broker != nil {
		id = rpcx.ServeCallbacks(h.broker, c.text)
	}
	if err := h.rpc.Call(ctx, mw.MethodOpen, &mw.OpenArgs{Config: raw, CallbackID: id}, &rpcx.ErrReply{}); err != nil {
		return nil, err
	}
	return c, nil
}

// ModelClient is the host's side of one opened model.Model. Its methods
// are safe for concurrent use.
type ModelClient struct {
	rpc     *rpcx.Client
	o       ModelOptions
	text    *textCallbacks
	streams atomic.Uint64
}

// Complete makes one completion of req; req.OnText, when set, receives the
// text as it streams in, in order, all of it before Complete returns. ctx
// ends the call on both sides (the process stays). The error is a
// *model.Error when the endpoint failed, else a *sdk.Error: CodeClosed
// when the plugin is gone (wrapping ErrNotSent when the call never reached
// it), CodeCanceled or CodeTimeout when ctx ended, CodeTooLarge past
// ModelOptions' bounds, or what the plugin returned.
func (c *ModelClient) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	// A completion whose context already ended is not asked for: the
	// plugin could answer it before the cancellation reached it.
	if err := ctx.Err(); err != nil {
		return model.Response{}, sdk.AsError(err)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return model.Response{}, fmt.Errorf("encode the model request: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var id uint64
	var st *textStream
	if req.OnText != nil {
		id = c.streams.Add(1)
		st = &textStream{onText: req.OnText, left: c.o.MaxTextBytes, cancel: cancel}
		c.text.add(id, st)
		defer c.text.remove(id)
	}
	var reply mw.CompleteReply
	err = c.rpc.Call(ctx, mw.MethodComplete, &mw.CompleteArgs{Request: raw, Stream: id}, &reply)
	if st != nil && st.overflowed() {
		return model.Response{}, sdk.NewError(sdk.CodeTooLarge, "the model plugin streamed more than %d bytes of text for one answer", c.o.MaxTextBytes)
	}
	if err != nil {
		return model.Response{}, err
	}
	if len(reply.EndpointErr) > 0 {
		var me model.Error
		if err := json.Unmarshal(reply.EndpointErr, &me); err != nil {
			return model.Response{}, sdk.NewError(sdk.CodeContract, "model plugin: its error is not a model error: %v", err)
		}
		return model.Response{}, &me
	}
	if len(reply.Response) > c.o.MaxResponseBytes {
		return model.Response{}, sdk.NewError(sdk.CodeTooLarge, "model plugin: its answer is %d bytes, over the limit of %d", len(reply.Response), c.o.MaxResponseBytes)
	}
	var res model.Response
	if err := json.Unmarshal(reply.Response, &res); err != nil {
		return model.Response{}, sdk.NewError(sdk.CodeContract, "model plugin: its answer is not a model response: %v", err)
	}
	return res, nil
}

// textCallbacks is the host's callback server of a model plugin: it hands
// each completion's text to that completion's OnText.
type textCallbacks struct {
	mu      sync.Mutex
	streams map[uint64]*textStream
}

// textStream is one completion's text: where it goes and how much more may
// come.
type textStream struct {
	onText func(string)
	cancel context.CancelFunc

	mu   sync.Mutex
	left int
	over bool
}

func (t *textCallbacks) add(id uint64, s *textStream) {
	t.mu.Lock()
	t.streams[id] = s
	t.mu.Unlock()
}

func (t *textCallbacks) remove(id uint64) {
	t.mu.Lock()
	delete(t.streams, id)
	t.mu.Unlock()
}

// Text hands on text of a completion in flight; text of one that ended is
// dropped, and text past the bound ends the completion.
func (t *textCallbacks) Text(args mw.TextArgs, reply *rpcx.ErrReply) error {
	t.mu.Lock()
	s := t.streams[args.Stream]
	t.mu.Unlock()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		reply.Err = sdk.NewError(sdk.CodeTooLarge, "too much text")
		return nil
	}
	if len(args.Text) > s.left {
		s.over = true
		s.cancel()
		reply.Err = sdk.NewError(sdk.CodeTooLarge, "too much text")
		return nil
	}
	s.left -= len(args.Text)
	s.onText(args.Text)
	return nil
}

// Cancel answers a cancelled callback: Text does not block, so there is
// nothing to end.
func (t *textCallbacks) Cancel(rpcx.CancelArgs, *rpcx.ErrReply) error { return nil }

func (s *textStream) overflowed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.over
}
