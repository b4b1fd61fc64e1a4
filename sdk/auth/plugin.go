package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
)

// Serve is the whole main of an auth plugin: it serves the Authenticator
// open builds to the host and never returns; the process exits when the
// host is done with it.
func Serve(open Opener, opts ...sdk.ServeOptions) {
	var o sdk.ServeOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Logger == nil {
		o.Logger = sdk.NewPluginLogger(sdk.KindAuth)
	}
	// The host hands every plugin a message socket; an auth plugin has no
	// messages, and a command it runs must not inherit the socket.
	if c := sdk.InheritedStream(); c != nil {
		c.Close()
	}
	sdk.Serve(NewKind(open, o.Logger), o)
}

// NewKind returns the auth kind for sdk.Serve, or for an in-process test
// with go-plugin's test helpers. log may be nil.
func NewKind(open Opener, log hclog.Logger) *Kind {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Kind{glue: &Plugin{Open: open, log: log}}
}

// Kind is the auth kind's sdk.Kind.
type Kind struct {
	glue *Plugin
}

// Name returns sdk.KindAuth.
func (k *Kind) Name() string { return sdk.KindAuth }

// Plugin returns the go-plugin glue.
func (k *Kind) Plugin() plugin.Plugin { return k.glue }

// Shutdown closes the authenticators that implement io.Closer.
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

// Plugin is the go-plugin glue of the auth kind. Plugins get it through
// Serve; the host uses a zero Plugin in its plugin set and gets a *Handle
// from Dispense.
type Plugin struct {
	// Open builds the Authenticator; nil on the host side.
	Open Opener
	log  hclog.Logger

	mu      sync.Mutex
	servers []*rpcServer
}

// Server returns the plugin-side RPC receiver.
func (p *Plugin) Server(b *plugin.MuxBroker) (any, error) {
	log := p.log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &rpcServer{open: p.Open, broker: b, log: log}
	p.mu.Lock()
	p.servers = append(p.servers, s)
	p.mu.Unlock()
	return s, nil
}

// Client returns the host-side handle, a *Handle.
func (p *Plugin) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &Handle{client: c, broker: b}, nil
}

// Wire types. Every call carries an id and a deadline: net/rpc has no
// context, so the plugin rebuilds one, and the host cancels it with
// Cancel(id).

// Call is the part every call's arguments share.
type Call struct {
	ID       uint64
	Deadline time.Time
	// Interactive says the host's UI has a user behind it for this call.
	Interactive bool
}

// OpenArgs opens the plugin's Authenticator.
type OpenArgs struct {
	Call
	Config []byte // JSON Config
	// CallbackID is the broker id of the host's UI callback server.
	CallbackID uint32
}

// HeadersArgs asks for headers.
type HeadersArgs struct {
	Call
	Req HeadersRequest
}

// HeadersReply carries headers or why there are none.
type HeadersReply struct {
	Headers Headers
	Err     *sdk.Error
}

// ChallengeArgs hands over a challenge.
type ChallengeArgs struct {
	Call
	Challenge Challenge
}

// ChallengeReply carries the plugin's answer.
type ChallengeReply struct {
	Answer Answer
	Err    *sdk.Error
}

// LoginArgs starts a login.
type LoginArgs struct {
	Call
	Options LoginOptions
}

// StatusReply carries a status (of Login and Status).
type StatusReply struct {
	Status Status
	Err    *sdk.Error
}

// LogoutReply carries what a logout did.
type LogoutReply struct {
	Result LogoutResult
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
	open   Opener
	broker *plugin.MuxBroker
	log    hclog.Logger

	mu    sync.Mutex
	a     Authenticator
	hc    *sdk.HostConn
	calls sdk.Calls
	// asks numbers the prompts of every call, so ids never repeat.
	asks atomic.Uint64
}

func (s *rpcServer) authenticator() (Authenticator, *sdk.HostConn, *sdk.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.a == nil {
		return nil, nil, sdk.NewError(sdk.CodeContract, "the auth plugin was not opened")
	}
	return s.a, s.hc, nil
}

func (s *rpcServer) ui(c Call, hc *sdk.HostConn) UI {
	if !c.Interactive {
		return NoUI{}
	}
	return &remoteUI{hc: hc, asks: &s.asks}
}

// Open builds the Authenticator.
func (s *rpcServer) Open(args OpenArgs, reply *ErrReply) error {
	var cfg Config
	if err := json.Unmarshal(args.Config, &cfg); err != nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "auth config: %v", err)
		return nil
	}
	if s.open == nil {
		reply.Err = sdk.NewError(sdk.CodeContract, "this plugin serves no auth method")
		return nil
	}
	hc, err := sdk.DialHost(s.broker, args.CallbackID)
	if err != nil {
		reply.Err = sdk.AsError(err)
		return nil
	}
	ctx, end := s.calls.Begin(args.Call.ID, args.Call.Deadline)
	defer end()
	a, err := s.open(ctx, cfg)
	if err != nil {
		hc.Close()
		reply.Err = sdk.AsError(err)
		return nil
	}
	s.mu.Lock()
	s.a, s.hc = a, hc
	s.mu.Unlock()
	return nil
}

// Headers answers Authenticator.Headers.
func (s *rpcServer) Headers(args HeadersArgs, reply *HeadersReply) error {
	a, _, e := s.authenticator()
	if e != nil {
		reply.Err = e
		return nil
	}
	ctx, end := s.calls.Begin(args.Call.ID, args.Call.Deadline)
	defer end()
	h, err := a.Headers(ctx, args.Req)
	reply.Headers, reply.Err = h, sdk.AsError(err)
	return nil
}

// Challenge answers Authenticator.Challenge.
func (s *rpcServer) Challenge(args ChallengeArgs, reply *ChallengeReply) error {
	a, hc, e := s.authenticator()
	if e != nil {
		reply.Err = e
		return nil
	}
	ctx, end := s.calls.Begin(args.Call.ID, args.Call.Deadline)
	defer end()
	ans, err := a.Challenge(ctx, args.Challenge, s.ui(args.Call, hc))
	reply.Answer, reply.Err = ans, sdk.AsError(err)
	return nil
}

// Login answers Authenticator.Login.
func (s *rpcServer) Login(args LoginArgs, reply *StatusReply) error {
	a, hc, e := s.authenticator()
	if e != nil {
		reply.Err = e
		return nil
	}
	ctx, end := s.calls.Begin(args.Call.ID, args.Call.Deadline)
	defer end()
	st, err := a.Login(ctx, args.Options, s.ui(args.Call, hc))
	reply.Status, reply.Err = st, sdk.AsError(err)
	return nil
}

// Logout answers Authenticator.Logout.
func (s *rpcServer) Logout(args Call, reply *LogoutReply) error {
	a, _, e := s.authenticator()
	if e != nil {
		reply.Err = e
		return nil
	}
	ctx, end := s.calls.Begin(args.ID, args.Deadline)
	defer end()
	r, err := a.Logout(ctx)
	reply.Result, reply.Err = r, sdk.AsError(err)
	return nil
}

// Status answers Authenticator.Status.
func (s *rpcServer) Status(args Call, reply *StatusReply) error {
	a, _, e := s.authenticator()
	if e != nil {
		reply.Err = e
		return nil
	}
	ctx, end := s.calls.Begin(args.ID, args.Deadline)
	defer end()
	st, err := a.Status(ctx)
	reply.Status, reply.Err = st, sdk.AsError(err)
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
	a, hc := s.a, s.hc
	s.mu.Unlock()
	if c, ok := a.(io.Closer); ok {
		if err := c.Close(); err != nil {
			s.log.Warn("closing the authenticator failed", "error", err)
		}
	}
	if hc != nil {
		hc.Close()
	}
}

// UI callbacks: plugin → host.

// URLArgs carries a URL to open.
type URLArgs struct{ URL string }

// AskArgs carries a prompt; ID names it for EndAsk.
type AskArgs struct {
	ID     uint64
	Prompt string
}

// AskReply carries the line the user typed.
type AskReply struct {
	Line string
	Err  *sdk.Error
}

// UI error codes on the wire.
const (
	codeNotInteractive = "not_interactive"
	codeNoBrowser      = "no_browser"
)

func uiError(err error) *sdk.Error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotInteractive):
		return &sdk.Error{Code: codeNotInteractive, Message: err.Error()}
	case errors.Is(err, ErrNoBrowser):
		return &sdk.Error{Code: codeNoBrowser, Message: err.Error()}
	}
	return sdk.AsError(err)
}

func fromUIError(e *sdk.Error) error {
	switch {
	case e == nil:
		return nil
	case e.Code == codeNotInteractive:
		return ErrNotInteractive
	case e.Code == codeNoBrowser:
		return ErrNoBrowser
	}
	return e
}

// remoteUI is the plugin's view of the host's UI.
type remoteUI struct {
	hc   *sdk.HostConn
	asks *atomic.Uint64
}

func (u *remoteUI) Interactive() bool { return true }

func (u *remoteUI) OpenURL(ctx context.Context, url string) error {
	var reply ErrReply
	if err := u.hc.Call(ctx, "Plugin.OpenURL", URLArgs{URL: url}, &reply); err != nil {
		return err
	}
	return fromUIError(reply.Err)
}

func (u *remoteUI) Show(ctx context.Context, n Notice) error {
	var reply ErrReply
	if err := u.hc.Call(ctx, "Plugin.Show", n, &reply); err != nil {
		return err
	}
	return fromUIError(reply.Err)
}

func (u *remoteUI) Ask(ctx context.Context, prompt string) (string, error) {
	id := u.asks.Add(1)
	var reply AskReply
	err := u.hc.Call(ctx, "Plugin.Ask", AskArgs{ID: id, Prompt: prompt}, &reply)
	if ctx.Err() != nil {
		// The host is still waiting for a line: end its prompt.
		end, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = u.hc.Call(end, "Plugin.EndAsk", CancelArgs{ID: id}, &ErrReply{})
		cancel()
		return "", ctx.Err()
	}
	if err != nil {
		return "", err
	}
	return reply.Line, fromUIError(reply.Err)
}

// uiCallbacks is the host's callback receiver: it relays to the host's UI.
type uiCallbacks struct {
	ui UI
	// timeout bounds one callback.
	timeout time.Duration

	mu   sync.Mutex
	asks map[uint64]context.CancelFunc
	// ended holds the ids of prompts ended before they arrived (net/rpc
	// serves calls concurrently, so EndAsk may overtake its Ask).
	ended map[uint64]bool
}

// OpenURL relays UI.OpenURL.
func (h *uiCallbacks) OpenURL(args URLArgs, reply *ErrReply) error {
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	reply.Err = uiError(h.ui.OpenURL(ctx, args.URL))
	return nil
}

// Show relays UI.Show.
func (h *uiCallbacks) Show(args Notice, reply *ErrReply) error {
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	reply.Err = uiError(h.ui.Show(ctx, args))
	return nil
}

// Ask relays UI.Ask until a line comes, the timeout passes or EndAsk.
func (h *uiCallbacks) Ask(args AskArgs, reply *AskReply) error {
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	h.mu.Lock()
	h.asks[args.ID] = cancel
	if h.ended[args.ID] {
		delete(h.ended, args.ID)
		cancel()
	}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.asks, args.ID)
		h.mu.Unlock()
		cancel()
	}()
	line, err := h.ui.Ask(ctx, args.Prompt)
	reply.Line, reply.Err = line, uiError(err)
	return nil
}

// EndAsk ends a pending Ask.
func (h *uiCallbacks) EndAsk(args CancelArgs, _ *ErrReply) error {
	h.mu.Lock()
	cancel := h.asks[args.ID]
	if cancel == nil && len(h.ended) < maxEnded {
		h.ended[args.ID] = true
	}
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

// maxEnded bounds the ids of prompts ended early that are remembered.
const maxEnded = 1024

// Handle is the host's handle on a dispensed auth plugin; Open it once.
type Handle struct {
	client *rpc.Client
	broker *plugin.MuxBroker
}

// DefaultUITimeout bounds one UI callback (and so one prompt) when
// Config.LoginTimeout is zero.
const DefaultUITimeout = 5 * time.Minute

// Open builds the plugin's Authenticator for cfg. ui answers the plugin's
// interactive steps during calls made with Interactive set.
func (h *Handle) Open(ctx context.Context, cfg Config, ui UI) (*Client, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode auth config of %q: %w", cfg.Server, err)
	}
	if ui == nil {
		ui = NoUI{}
	}
	timeout := cfg.LoginTimeout
	if timeout <= 0 {
		timeout = DefaultUITimeout
	}
	c := &Client{h: h, server: cfg.Server, ui: ui}
	cb := &uiCallbacks{ui: ui, timeout: timeout, asks: map[uint64]context.CancelFunc{}, ended: map[uint64]bool{}}
	id := sdk.ServeHostCallbacks(h.broker, cb)
	var reply ErrReply
	if err := c.call(ctx, "Plugin.Open", false, func(hdr Call) any { return OpenArgs{Call: hdr, Config: raw, CallbackID: id} }, &reply); err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	return c, nil
}

// Client is the host's side of one opened Authenticator. Its methods
// mirror Authenticator's; ctx ends a call (the plugin's context is
// cancelled too).
type Client struct {
	h      *Handle
	server string
	ui     UI
	ids    atomic.Uint64
}

// call runs one RPC whose arguments args builds around the call header.
func (c *Client) call(ctx context.Context, method string, interactive bool, args func(Call) any, reply any) error {
	hdr := Call{ID: c.ids.Add(1), Interactive: interactive && c.ui.Interactive()}
	if d, ok := ctx.Deadline(); ok {
		hdr.Deadline = d
	}
	call := c.h.client.Go(method, args(hdr), reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		if call.Error != nil {
			return sdk.NewError(sdk.CodeClosed, "auth plugin of %q: %s: %v", c.server, method, call.Error)
		}
		return nil
	case <-ctx.Done():
		end, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cc := c.h.client.Go("Plugin.Cancel", CancelArgs{ID: hdr.ID}, &ErrReply{}, make(chan *rpc.Call, 1))
		select {
		case <-cc.Done:
		case <-end.Done():
		}
		return ctx.Err()
	}
}

// Headers asks for the headers of one request.
func (c *Client) Headers(ctx context.Context, req HeadersRequest) (Headers, error) {
	var reply HeadersReply
	if err := c.call(ctx, "Plugin.Headers", false, func(hdr Call) any { return HeadersArgs{Call: hdr, Req: req} }, &reply); err != nil {
		return Headers{}, err
	}
	if reply.Err != nil {
		return Headers{}, reply.Err
	}
	return reply.Headers, nil
}

// Challenge hands the plugin a challenge; interactive lets it use the UI
// (a step-up login) when the UI has a user.
func (c *Client) Challenge(ctx context.Context, ch Challenge, interactive bool) (Answer, error) {
	var reply ChallengeReply
	if err := c.call(ctx, "Plugin.Challenge", interactive, func(hdr Call) any { return ChallengeArgs{Call: hdr, Challenge: ch} }, &reply); err != nil {
		return Answer{}, err
	}
	if reply.Err != nil {
		return Answer{}, reply.Err
	}
	return reply.Answer, nil
}

// Login logs in through the UI.
func (c *Client) Login(ctx context.Context, o LoginOptions) (Status, error) {
	var reply StatusReply
	if err := c.call(ctx, "Plugin.Login", true, func(hdr Call) any { return LoginArgs{Call: hdr, Options: o} }, &reply); err != nil {
		return Status{}, err
	}
	if reply.Err != nil {
		return reply.Status, reply.Err
	}
	return reply.Status, nil
}

// Logout revokes and deletes the credentials.
func (c *Client) Logout(ctx context.Context) (LogoutResult, error) {
	var reply LogoutReply
	if err := c.call(ctx, "Plugin.Logout", false, func(hdr Call) any { return hdr }, &reply); err != nil {
		return LogoutResult{}, err
	}
	if reply.Err != nil {
		return reply.Result, reply.Err
	}
	return reply.Result, nil
}

// Status describes the stored credentials.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var reply StatusReply
	if err := c.call(ctx, "Plugin.Status", false, func(hdr Call) any { return hdr }, &reply); err != nil {
		return Status{}, err
	}
	if reply.Err != nil {
		return reply.Status, reply.Err
	}
	return reply.Status, nil
}
