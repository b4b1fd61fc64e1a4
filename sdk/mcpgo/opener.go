package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Factory builds the mcp-go transport for one server; Opener starts it.
type Factory func(cfg transport.Config, host transport.Host) (mcptransport.Interface, error)

// Watched is implemented by an mcp-go transport that can tell when its
// connection ended on its own (the server exited, the stream broke); the
// adapter then ends the plugin connection at once, with Err as the reason.
type Watched interface {
	Done() <-chan struct{}
	Err() error
}

// Opener turns a factory of mcp-go transports into a transport plugin's
// Opener:
//
//	func main() {
//		transport.Serve(mcpgo.Opener(func(cfg transport.Config, _ transport.Host) (mcptransport.Interface, error) {
//			return mcptransport.NewStdio(cfg.Command, cfg.Env, cfg.Args...), nil
//		}))
//	}
//
// The adapter decodes each message the host writes just enough to call the
// transport's SendRequest or SendNotification (or to answer a request of the
// server's own), and encodes what the transport delivers.
func Opener(f Factory) transport.Opener {
	return func(ctx context.Context, cfg transport.Config, host transport.Host) (transport.Conn, error) {
		inner, err := f(cfg, host)
		if err != nil {
			return nil, err
		}
		return Adapt(ctx, inner)
	}
}

// Adapt starts inner and returns it as a plugin Conn. ctx bounds the start.
func Adapt(ctx context.Context, inner mcptransport.Interface) (*Conn, error) {
	life, cancel := context.WithCancel(context.Background())
	c := &Conn{
		inner:   inner,
		life:    life,
		cancel:  cancel,
		in:      make(chan []byte, 64),
		done:    make(chan struct{}),
		waiters: map[string]chan *mcptransport.JSONRPCResponse{},
	}
	inner.SetNotificationHandler(c.onNotification)
	if bi, ok := inner.(mcptransport.BidirectionalInterface); ok {
		bi.SetRequestHandler(c.onRequest)
	}
	started := make(chan error, 1)
	go func() { started <- inner.Start(life) }()
	select {
	case err := <-started:
		if err != nil {
			cancel()
			return nil, err
		}
	case <-ctx.Done():
		cancel()
		_ = inner.Close()
		return nil, ctx.Err()
	}
	if w, ok := inner.(Watched); ok {
		go func() {
			select {
			case <-w.Done():
				c.end(w.Err())
			case <-c.done:
			}
		}()
	}
	return c, nil
}

// Conn is an mcp-go transport as a plugin connection (transport.Conn).
type Conn struct {
	inner  mcptransport.Interface
	life   context.Context
	cancel context.CancelFunc

	in      chan []byte
	endOnce sync.Once
	done    chan struct{}
	err     error

	mu      sync.Mutex
	waiters map[string]chan *mcptransport.JSONRPCResponse // server requests awaiting the host's answer
}

// Inner returns the adapted mcp-go transport.
func (c *Conn) Inner() mcptransport.Interface { return c.inner }

// Read returns the next message for the host.
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		// Deliver what arrived before the end first.
		select {
		case m := <-c.in:
			return m, nil
		default:
		}
		return nil, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write decodes one message from the host and sends it.
func (c *Conn) Write(ctx context.Context, msg []byte) error {
	var m incoming
	if err := json.Unmarshal(msg, &m); err != nil {
		return sdk.NewError(sdk.CodeContract, "the host wrote a message that is not JSON-RPC: %v", err)
	}
	switch {
	case m.Method != "" && hasID(m.ID):
		var id mcp.RequestId
		if err := json.Unmarshal(m.ID, &id); err != nil {
			return sdk.NewError(sdk.CodeContract, "request id: %v", err)
		}
		req := mcptransport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: m.Method, Header: transport.MessageHeader(ctx)}
		if len(m.Params) > 0 {
			req.Params = append(json.RawMessage(nil), m.Params...)
		}
		resp, err := c.inner.SendRequest(ctx, req)
		if err != nil {
			if errors.Is(err, mcptransport.ErrTransportClosed) && ctx.Err() == nil {
				// The transport is gone for good (mcp-go's stdio says so
				// when the server exits): end the connection too.
				c.end(sdk.NewError(sdk.CodeClosed, "the connection to the server ended: %v", err))
			}
			return err
		}
		if resp == nil {
			return sdk.NewError(sdk.CodeOther, "the transport returned no response to %s", m.Method)
		}
		resp.JSONRPC = mcp.JSONRPC_VERSION
		b, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		return c.deliver(b)
	case m.Method != "":
		var n mcp.JSONRPCNotification
		if err := json.Unmarshal(msg, &n); err != nil {
			return sdk.NewError(sdk.CodeContract, "notification: %v", err)
		}
		return c.inner.SendNotification(ctx, n)
	case hasID(m.ID):
		key := string(bytes.TrimSpace(m.ID))
		c.mu.Lock()
		ch, ok := c.waiters[key]
		delete(c.waiters, key)
		c.mu.Unlock()
		if ok {
			var id mcp.RequestId
			_ = json.Unmarshal(m.ID, &id)
			ch <- &mcptransport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Result: append(json.RawMessage(nil), m.Result...), Error: m.Error}
		}
		return nil
	}
	return sdk.NewError(sdk.CodeContract, "the host wrote a JSON-RPC message with neither method nor id")
}

// ConcurrentWrites is true: a request's Write lasts its whole exchange.
func (c *Conn) ConcurrentWrites() bool { return true }

// Properties says whether the transport speaks HTTP and needs the legacy
// protocol.
func (c *Conn) Properties() transport.Properties {
	_, isHTTP := c.inner.(mcptransport.HTTPConnection)
	p := transport.Properties{HTTP: isHTTP}
	if l, ok := c.inner.(interface{ RequiresLegacyProtocol() bool }); ok {
		p.LegacyOnly = l.RequiresLegacyProtocol()
	}
	return p
}

// SetProtocolVersion passes the negotiated version to an HTTP transport.
func (c *Conn) SetProtocolVersion(v string) {
	if hc, ok := c.inner.(mcptransport.HTTPConnection); ok {
		hc.SetProtocolVersion(v)
	}
}

// SessionID returns the transport's session id.
func (c *Conn) SessionID() string { return c.inner.GetSessionId() }

// Close closes the transport.
func (c *Conn) Close() error {
	err := c.inner.Close()
	c.end(sdk.NewError(sdk.CodeClosed, "connection closed"))
	return err
}

func (c *Conn) end(err error) {
	c.endOnce.Do(func() {
		if err == nil {
			err = sdk.NewError(sdk.CodeClosed, "connection ended")
		}
		c.err = err
		close(c.done)
		c.cancel()
	})
}

// deliver queues a message for the host.
func (c *Conn) deliver(b []byte) error {
	select {
	case c.in <- b:
		return nil
	case <-c.done:
		return c.err
	}
}

func (c *Conn) onNotification(n mcp.JSONRPCNotification) {
	n.JSONRPC = mcp.JSONRPC_VERSION
	b, err := json.Marshal(n)
	if err != nil {
		return
	}
	_ = c.deliver(b)
}

// onRequest passes a request of the server's own to the host and waits for
// the host's answer.
func (c *Conn) onRequest(ctx context.Context, req mcptransport.JSONRPCRequest) (*mcptransport.JSONRPCResponse, error) {
	req.JSONRPC = mcp.JSONRPC_VERSION
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	idb, err := json.Marshal(req.ID)
	if err != nil {
		return nil, err
	}
	key := string(idb)
	ch := make(chan *mcptransport.JSONRPCResponse, 1)
	c.mu.Lock()
	c.waiters[key] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiters, key)
		c.mu.Unlock()
	}
	if err := c.deliver(b); err != nil {
		forget()
		return nil, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	case <-c.done:
		forget()
		return nil, mcptransport.ErrTransportClosed
	}
}

// incoming is any JSON-RPC message, decoded just enough to route it.
type incoming struct {
	ID     json.RawMessage          `json:"id"`
	Method string                   `json:"method"`
	Params json.RawMessage          `json:"params"`
	Result json.RawMessage          `json:"result"`
	Error  *mcp.JSONRPCErrorDetails `json:"error"`
}

func hasID(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}
