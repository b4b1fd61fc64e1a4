package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/rpc"
	"sync/atomic"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
	bw "github.com/hermes-agent/hermes/sdk/internal/wire/bridgewire"
)

// BridgePlugin is the host's go-plugin glue of the bridge kind: put it in
// the plugin set under sdk.KindBridge, and Dispense returns a *Bridge.
type BridgePlugin struct{}

// Server is the plugin's side: not served by a host.
func (BridgePlugin) Server(*plugin.MuxBroker) (any, error) {
	return nil, sdk.NewError(sdk.CodeContract, "a host does not serve the bridge kind")
}

// Client returns the host-side handle, a *Bridge.
func (BridgePlugin) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &Bridge{rpc: rpcx.NewClient(c, "bridge plugin"), broker: b}, nil
}

// ErrNotSent is wrapped by the error (a CodeClosed one) of a call that
// never reached the plugin because its connection was already closed: the
// plugin did nothing, so the call may be sent again to a new process.
var ErrNotSent = rpcx.ErrNotSent

// Bridge is the host's handle on a dispensed bridge plugin: Describe it,
// then Open it once.
type Bridge struct {
	rpc    *rpcx.Client
	broker *plugin.MuxBroker
}

// Limits a host applies to what a bridge plugin sends; a plugin is
// untrusted input.
const (
	// MaxBridgeTools bounds the tools of a Description.
	MaxBridgeTools = 1000
	// MaxBridgeDescriptionBytes bounds the Description's JSON.
	MaxBridgeDescriptionBytes = 4 << 20
	// DefaultMaxResultBytes is BridgeOptions.MaxResultBytes's default.
	DefaultMaxResultBytes = 16 << 20
)

// Describe asks the plugin what it offers, and checks the answer: a
// Description too large, with too many tools, a tool without a name, a
// duplicate name or a schema that is not a JSON object is refused with a
// CodeContract error.
func (h *Bridge) Describe(ctx context.Context) (bridge.Description, error) {
	var reply bw.DescribeReply
	if err := h.rpc.Call(ctx, bw.MethodDescribe, &rpcx.Call{}, &reply); err != nil {
		return bridge.Description{}, err
	}
	if len(reply.Description) > MaxBridgeDescriptionBytes {
		return bridge.Description{}, sdk.NewError(sdk.CodeContract, "bridge plugin: its description is %d bytes, over the limit of %d", len(reply.Description), MaxBridgeDescriptionBytes)
	}
	var d bridge.Description
	if err := json.Unmarshal(reply.Description, &d); err != nil {
		return bridge.Description{}, sdk.NewError(sdk.CodeContract, "bridge plugin: its description is not valid JSON: %v", err)
	}
	if err := checkDescription(&d); err != nil {
		return bridge.Description{}, err
	}
	return d, nil
}

// checkDescription validates a Description received from a plugin.
func checkDescription(d *bridge.Description) error {
	if len(d.Tools) > MaxBridgeTools {
		return sdk.NewError(sdk.CodeContract, "bridge plugin: %d tools, over the limit of %d", len(d.Tools), MaxBridgeTools)
	}
	seen := make(map[string]bool, len(d.Tools))
	for i, t := range d.Tools {
		if t.Name == "" || len(t.Name) > 128 {
			return sdk.NewError(sdk.CodeContract, "bridge plugin: tool %d has no name or one over 128 bytes", i)
		}
		if seen[t.Name] {
			return sdk.NewError(sdk.CodeContract, "bridge plugin: tool %.128q is described twice", t.Name)
		}
		seen[t.Name] = true
		if !isObject(t.InputSchema) {
			return sdk.NewError(sdk.CodeContract, "bridge plugin: the input schema of tool %.128q is not a JSON object", t.Name)
		}
		if len(t.OutputSchema) > 0 && !isObject(t.OutputSchema) {
			return sdk.NewError(sdk.CodeContract, "bridge plugin: the output schema of tool %.128q is not a JSON object", t.Name)
		}
	}
	return nil
}

// isObject reports whether raw is one JSON object. It checks without
// decoding (every call's structured content goes through it): valid JSON
// whose first byte past any white space opens an object.
func isObject(raw json.RawMessage) bool {
	i := 0
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i < len(raw) && raw[i] == '{' && json.Valid(raw)
}

// BridgeOptions configures the host side of an opened bridge plugin.
type BridgeOptions struct {
	// MaxResultBytes bounds the text plus structured content of one
	// result; a larger one is refused with a CodeTooLarge error, while it
	// is read (a reply over it plus a small envelope is never held whole;
	// the plugin's connection ends with it) or once decoded. 0 is
	// DefaultMaxResultBytes; below 0, no bound.
	MaxResultBytes int
	// Stream is the host's end of the socket the plugin process inherited
	// at start (sdk.StreamFDEnv), or nil. When set, the calls travel on it
	// rather than on a stream of go-plugin's multiplexer, which hands each
	// message through two more goroutines on each side; a plugin built
	// before it could is called on a broker stream as before, and Stream
	// is closed. The BridgeClient owns it.
	Stream net.Conn
}

// Open opens the plugin's Server over cfg; opts carries the host's
// limits. Every kind opens alike: Open(ctx, cfg, options).
func (h *Bridge) Open(ctx context.Context, cfg bridge.Config, opts BridgeOptions) (*BridgeClient, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		if opts.Stream != nil {
			opts.Stream.Close()
		}
		return nil, fmt.Errorf("encode the bridge config: %w", err)
	}
	if opts.MaxResultBytes == 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	c := &BridgeClient{h: h, maxResult: max(opts.MaxResultBytes, 0)}
	c.limit.Store(math.MaxInt64)
	if c.maxResult > 0 {
		c.limit.Store(int64(c.maxResult) + resultSlack)
	}
	args := bw.OpenArgs{Config: raw, InheritedStream: opts.Stream != nil}
	type accepted struct {
		conn io.ReadWriteCloser
		err  error
	}
	acc := make(chan accepted, 1)
	if h.broker != nil {
		// A plugin that does not take the inherited socket dials this
		// stream during Open and waits for it to be accepted; one that
		// takes it never dials, and the accept gives up on its own
		// (go-plugin's broker waits 5 s).
		args.Results = h.broker.NextId()
		go func() {
			conn, err := h.broker.Accept(args.Results)
			acc <- accepted{conn, err}
		}()
	}
	var reply bw.OpenReply
	if err := h.rpc.Call(ctx, bw.MethodOpen, &args, &reply); err != nil {
		if opts.Stream != nil {
			opts.Stream.Close()
		}
		return nil, err
	}
	switch {
	case reply.InheritedStream && opts.Stream != nil:
		c.rc, c.frames = newResultsClient(opts.Stream, &c.limit)
	case args.Results != 0:
		if opts.Stream != nil {
			opts.Stream.Close()
		}
		select {
		case a := <-acc:
			if a.err != nil {
				return nil, sdk.NewError(sdk.CodeClosed, "bridge plugin: open its results connection: %v", a.err)
			}
			c.rc, c.frames = newResultsClient(a.conn, &c.limit)
		case <-ctx.Done():
			return nil, sdk.AsError(ctx.Err())
		}
	default:
		if opts.Stream != nil {
			opts.Stream.Close()
		}
	}
	return c, nil
}

// BridgeClient is the host's side of one opened bridge.Server.
type BridgeClient struct {
	h         *Bridge
	maxResult int // BridgeOptions.MaxResultBytes; 0: no bound

	rc     *rpc.Client  // the results connection (nil: the control one, without a broker)
	frames *gobFrames   // rc's reader, nil without a broker
	limit  atomic.Int64 // the bound of one reply on rc
}

// Call runs the tool name with args. ctx ends the call on both sides. An
// error is a *sdk.Error: CodeClosed when the plugin is gone, CodeTooLarge
// for a result over BridgeOptions.MaxResultBytes, CodeContract for structured content
// that is not a JSON object, or what the plugin returned.
func (c *BridgeClient) Call(ctx context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	if c.refused() != nil {
		// A reply cut before this call ends the results connection; it
		// may not have closed yet. Not sent: the host starts a new plugin
		// (an error here would be read as this call's reply cut).
		return bridge.Result{}, fmt.Errorf("%w: %w", sdk.NewError(sdk.CodeClosed, "bridge plugin: its results connection ended with a reply it refused"), ErrNotSent)
	}
	var reply bw.CallReply[bridge.Result]
	if c.maxResult > 0 {
		c.limit.Store(int64(c.maxResult) + resultSlack)
	} else {
		c.limit.Store(math.MaxInt64)
	}
	if err := c.h.rpc.CallOn(ctx, c.rc, bw.MethodCall, &bw.CallArgs{Name: name, Args: args}, &reply); err != nil {
		if tl := c.refused(); tl != nil && !errors.Is(err, ErrNotSent) {
			// The reply was cut while it was read: the results
			// connection ends with it, and the next call is not sent
			// (ErrNotSent: the host starts a new plugin).
			return bridge.Result{}, &sdk.Error{Code: sdk.CodeTooLarge, Message: fmt.Sprintf("the result of tool %.128q is over the limit of %d bytes (the plugin began a reply of %d bytes); raise mcp_serve.max_result_mb in config.yaml", name, c.maxResult, tl.Size)}
		}
		return bridge.Result{}, err
	}
	r := reply.Result
	if n := len(r.Text) + len(r.Structured); c.maxResult > 0 && n > c.maxResult {
		return bridge.Result{}, &sdk.Error{Code: sdk.CodeTooLarge, Message: fmt.Sprintf("the result of tool %.128q is %d bytes, over the limit of %d bytes; raise mcp_serve.max_result_mb in config.yaml", name, n, c.maxResult)}
	}
	if len(r.Structured) > 0 && !isObject(r.Structured) {
		return bridge.Result{}, sdk.NewError(sdk.CodeContract, "the structured content of tool %.128q is not a JSON object", name)
	}
	return r, nil
}

// refused returns the reply the results connection refused, if it did.
func (c *BridgeClient) refused() *ResultTooLargeError {
	if c.frames == nil {
		return nil
	}
	return c.frames.refused.Load()
}
