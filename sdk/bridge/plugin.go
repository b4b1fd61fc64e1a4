package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
)

// Serve is the whole main of a bridge plugin: it serves desc and the
// Server open builds to the host and never returns; the process exits when
// the host is done with it.
func Serve(desc Description, open Opener, opts ...sdk.ServeOptions) {
	var o sdk.ServeOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Logger == nil {
		o.Logger = sdk.NewPluginLogger(sdk.KindBridge)
	}
	// The host hands every plugin a message socket; a bridge has no
	// messages besides its calls.
	if c := sdk.InheritedStream(); c != nil {
		c.Close()
	}
	sdk.Serve(NewKind(desc, open, o.Logger), o)
}

// NewKind returns the bridge kind for sdk.Serve, or for an in-process test
// with go-plugin's test helpers. log may be nil.
func NewKind(desc Description, open Opener, log hclog.Logger) *Kind {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Kind{glue: &Plugin{Desc: desc, Open: open, log: log}}
}

// Kind is the bridge kind's sdk.Kind.
type Kind struct {
	glue *Plugin
}

// Name returns sdk.KindBridge.
func (k *Kind) Name() string { return sdk.KindBridge }

// Plugin returns the go-plugin glue.
func (k *Kind) Plugin() plugin.Plugin { return k.glue }

// Shutdown cancels the calls in flight and closes the servers that
// implement io.Closer, within ctx.
func (k *Kind) Shutdown(ctx context.Context) {
	k.glue.mu.Lock()
	servers := append([]*rpcServer(nil), k.glue.servers...)
	k.glue.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for _, s := range servers {
			s.close()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Plugin is the go-plugin glue of the bridge kind. Plugins get it through
// Serve; the host uses a zero Plugin in its plugin set and gets a *Handle
// from Dispense.
type Plugin struct {
	// Desc describes the plugin's tools; unused on the host side.
	Desc Description
	// Open builds the Server; nil on the host side.
	Open Opener
	log  hclog.Logger

	mu      sync.Mutex
	servers []*rpcServer
}

// Server returns the plugin-side RPC receiver.
func (p *Plugin) Server(broker *plugin.MuxBroker) (any, error) {
	log := p.log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &rpcServer{desc: p.Desc, open: p.Open, log: log, broker: broker}
	p.mu.Lock()
	p.servers = append(p.servers, s)
	p.mu.Unlock()
	return s, nil
}

// Client returns the host-side handle, a *Handle.
func (p *Plugin) Client(broker *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &Handle{client: c, broker: broker}, nil
}

// Wire types. Every call carries an id and a deadline: net/rpc has no
// context, so the plugin rebuilds one, and the host cancels it with
// Cancel(id).

// Call is the part every call's arguments share.
type Call struct {
	ID       uint64
	Deadline time.Time
}

// DescribeReply carries the Description as JSON.
type DescribeReply struct {
	Description []byte
	Err         *sdk.Error
}

// OpenArgs opens the plugin's Server.
type OpenArgs struct {
	Call
	Config []byte // JSON Config
	// Results is the broker stream the plugin dials and serves its calls
	// on (see results.go); 0 serves them on the control connection.
	Results uint32
}

// CallArgs runs one tool.
type CallArgs struct {
	Call
	Name string
	Args []byte
}

// CallReply carries a tool's result or the call's error.
type CallReply struct {
	Result Result
	Err    *sdk.Error
}

// ErrReply carries only an error.
type ErrReply struct {
	Err *sdk.Error
}

// CancelArgs cancels the call with ID.
type CancelArgs struct {
	ID uint64
}

// rpcServer is the plugin-side RPC receiver of one dispense.
type rpcServer struct {
	desc   Description
	open   Opener
	log    hclog.Logger
	broker *plugin.MuxBroker

	mu    sync.Mutex
	srv   Server
	calls sdk.Calls
}

// Describe answers with the plugin's Description.
func (s *rpcServer) Describe(_ Call, reply *DescribeReply) error {
	raw, err := json.Marshal(s.desc)
	if err != nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "encode the bridge description: %v", err)
		return nil
	}
	reply.Description = raw
	return nil
}

// Open builds the Server.
func (s *rpcServer) Open(args OpenArgs, reply *ErrReply) error {
	var cfg Config
	if err := json.Unmarshal(args.Config, &cfg); err != nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "bridge config: %v", err)
		return nil
	}
	if s.open == nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "this plugin serves no bridge")
		return nil
	}
	s.mu.Lock()
	opened := s.srv != nil
	s.mu.Unlock()
	if opened {
		reply.Err = sdk.NewError(sdk.CodeContract, "the bridge was already opened")
		return nil
	}
	ctx, end := s.calls.Begin(args.Call.ID, args.Call.Deadline)
	defer end()
	srv, err := s.open(ctx, cfg)
	if err != nil {
		reply.Err = sdk.AsError(err)
		return nil
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	if args.Results != 0 && s.broker != nil {
		conn, err := s.broker.Dial(args.Results)
		if err != nil {
			reply.Err = sdk.NewError(sdk.CodeClosed, "dial the results connection: %v", err)
			return nil
		}
		rs := rpc.NewServer()
		if err := rs.RegisterName("Plugin", s); err != nil {
			conn.Close()
			reply.Err = sdk.NewError(sdk.CodeContract, "serve the results connection: %v", err)
			return nil
		}
		go rs.ServeConn(conn)
	}
	return nil
}

// Call answers Server.Call.
func (s *rpcServer) Call(args CallArgs, reply *CallReply) error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "the bridge was not opened")
		return nil
	}
	ctx, end := s.calls.Begin(args.Call.ID, args.Call.Deadline)
	defer end()
	res, err := srv.Call(ctx, args.Name, args.Args)
	reply.Result, reply.Err = res, sdk.AsError(err)
	return nil
}

// Cancel ends the context of a running call.
func (s *rpcServer) Cancel(args CancelArgs, _ *ErrReply) error {
	s.calls.Cancel(args.ID)
	return nil
}

func (s *rpcServer) close() {
	s.calls.CancelAll()
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if c, ok := srv.(io.Closer); ok {
		if err := c.Close(); err != nil {
			s.log.Warn("closing the bridge failed", "error", err)
		}
	}
}

// ErrNotSent is wrapped by the error (a CodeClosed one) of a call that
// never reached the plugin because its connection was already closed: the
// plugin did nothing, so the call may be sent again to a new process.
var ErrNotSent = errors.New("the call was not sent")

// Handle is the host's handle on a dispensed bridge plugin: Describe it,
// then Open it once.
type Handle struct {
	client *rpc.Client
	broker *plugin.MuxBroker
	ids    atomic.Uint64
}

// Limits a host applies to what a bridge plugin sends; a plugin is
// untrusted input.
const (
	// MaxTools bounds the tools of a Description.
	MaxTools = 1000
	// MaxDescriptionBytes bounds the Description's JSON.
	MaxDescriptionBytes = 4 << 20
	// DefaultMaxResultBytes is Client.MaxResultBytes's default.
	DefaultMaxResultBytes = 16 << 20
)

// call runs one RPC whose arguments args builds around the call header;
// when ctx ends first the plugin's call is cancelled.
func (h *Handle) call(ctx context.Context, what, method string, args func(Call) any, reply any) error {
	return h.callOn(ctx, h.client, what, method, args, reply)
}

// callOn is call on client: the control connection, or a results
// connection (whose replies are bounded while they are read).
func (h *Handle) callOn(ctx context.Context, client *rpc.Client, what, method string, args func(Call) any, reply any) error {
	hdr := Call{ID: h.ids.Add(1)}
	if d, ok := ctx.Deadline(); ok {
		hdr.Deadline = d
	}
	call := client.Go(method, args(hdr), reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		if errors.Is(call.Error, rpc.ErrShutdown) {
			return fmt.Errorf("%w: %w", sdk.NewError(sdk.CodeClosed, "bridge plugin: %s: its connection is closed", what), ErrNotSent)
		}
		if call.Error != nil {
			return sdk.NewError(sdk.CodeClosed, "bridge plugin: %s: %v", what, call.Error)
		}
		return nil
	case <-ctx.Done():
		end, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cc := h.client.Go("Plugin.Cancel", CancelArgs{ID: hdr.ID}, &ErrReply{}, make(chan *rpc.Call, 1))
		select {
		case <-cc.Done:
		case <-end.Done():
		}
		return sdk.AsError(ctx.Err())
	}
}

// Describe asks the plugin what it offers, and checks the answer: a
// Description too large, with too many tools, a tool without a name, a
// duplicate name or a schema that is not a JSON object is refused with a
// CodeContract error.
func (h *Handle) Describe(ctx context.Context) (Description, error) {
	var reply DescribeReply
	if err := h.call(ctx, "describe", "Plugin.Describe", func(c Call) any { return c }, &reply); err != nil {
		return Description{}, err
	}
	if reply.Err != nil {
		return Description{}, reply.Err
	}
	if len(reply.Description) > MaxDescriptionBytes {
		return Description{}, sdk.NewError(sdk.CodeContract, "bridge plugin: its description is %d bytes, over the limit of %d", len(reply.Description), MaxDescriptionBytes)
	}
	var d Description
	if err := json.Unmarshal(reply.Description, &d); err != nil {
		return Description{}, sdk.NewError(sdk.CodeContract, "bridge plugin: its description is not valid JSON: %v", err)
	}
	if err := d.check(); err != nil {
		return Description{}, err
	}
	return d, nil
}

// check validates a Description received from a plugin.
func (d *Description) check() error {
	if len(d.Tools) > MaxTools {
		return sdk.NewError(sdk.CodeContract, "bridge plugin: %d tools, over the limit of %d", len(d.Tools), MaxTools)
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

// isObject reports whether raw is one JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// Open opens the plugin's Server over cfg.
func (h *Handle) Open(ctx context.Context, cfg Config) (*Client, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode the bridge config: %w", err)
	}
	c := &Client{h: h, MaxResultBytes: DefaultMaxResultBytes, rc: h.client}
	c.limit.Store(DefaultMaxResultBytes + resultSlack)
	var results uint32
	type accepted struct {
		conn io.ReadWriteCloser
		err  error
	}
	acc := make(chan accepted, 1)
	if h.broker != nil {
		results = h.broker.NextId()
		go func() {
			conn, err := h.broker.Accept(results)
			acc <- accepted{conn, err}
		}()
	}
	var reply ErrReply
	if err := h.call(ctx, "open", "Plugin.Open", func(hdr Call) any { return OpenArgs{Call: hdr, Config: raw, Results: results} }, &reply); err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	if results != 0 {
		select {
		case a := <-acc:
			if a.err != nil {
				return nil, sdk.NewError(sdk.CodeClosed, "bridge plugin: open its results connection: %v", a.err)
			}
			c.rc, c.frames = newResultsClient(a.conn, &c.limit)
		case <-ctx.Done():
			return nil, sdk.AsError(ctx.Err())
		}
	}
	return c, nil
}

// Client is the host's side of one opened Server.
type Client struct {
	h *Handle
	// MaxResultBytes bounds the text plus structured content of one
	// result; a larger one is refused with a CodeTooLarge error, while it
	// is read (a reply over it plus a small envelope is never held whole;
	// the plugin's connection ends with it) or once decoded.
	MaxResultBytes int

	rc     *rpc.Client  // the results connection (the control one without a broker)
	frames *gobFrames   // rc's reader, nil without a broker
	limit  atomic.Int64 // the bound of one reply on rc
}

// Call runs the tool name with args. ctx ends the call on both sides. An
// error is a *sdk.Error: CodeClosed when the plugin is gone, CodeTooLarge
// for a result over MaxResultBytes, CodeContract for structured content
// that is not a JSON object, or what the plugin returned.
func (c *Client) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	var reply CallReply
	if c.MaxResultBytes > 0 {
		c.limit.Store(int64(c.MaxResultBytes) + resultSlack)
	} else {
		c.limit.Store(math.MaxInt64)
	}
	if err := c.h.callOn(ctx, c.rc, "call "+name, "Plugin.Call", func(hdr Call) any { return CallArgs{Call: hdr, Name: name, Args: args} }, &reply); err != nil {
		if tl := c.refused(); tl != nil && !errors.Is(err, ErrNotSent) {
			// The reply was cut while it was read: the results
			// connection ends with it, and the next call is not sent
			// (ErrNotSent: the host starts a new plugin).
			return Result{}, &sdk.Error{Code: sdk.CodeTooLarge, Message: fmt.Sprintf("the result of tool %.128q is over the limit of %d bytes (the plugin began a reply of %d bytes); raise mcp_serve.max_result_mb in config.yaml", name, c.MaxResultBytes, tl.Size)}
		}
		return Result{}, err
	}
	if reply.Err != nil {
		return Result{}, reply.Err
	}
	r := reply.Result
	if n := len(r.Text) + len(r.Structured); c.MaxResultBytes > 0 && n > c.MaxResultBytes {
		return Result{}, &sdk.Error{Code: sdk.CodeTooLarge, Message: fmt.Sprintf("the result of tool %.128q is %d bytes, over the limit of %d bytes; raise mcp_serve.max_result_mb in config.yaml", name, n, c.MaxResultBytes)}
	}
	if len(r.Structured) > 0 && !isObject(r.Structured) {
		return Result{}, sdk.NewError(sdk.CodeContract, "the structured content of tool %.128q is not a JSON object", name)
	}
	return r, nil
}

// refused returns the reply the results connection refused, if it did.
func (c *Client) refused() *ResultTooLargeError {
	if c.frames == nil {
		return nil
	}
	return c.frames.refused.Load()
}
