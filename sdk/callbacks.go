package sdk

import (
	"context"
	"net/rpc"

	"github.com/hashicorp/go-plugin"
)

// ServeHostCallbacks serves receiver (a net/rpc receiver, registered as
// "Plugin") on the broker for the plugin's calls back into the host, and
// returns the broker id to send to the plugin. Kind packages use it on the
// host side; each kind defines its own callback methods.
func ServeHostCallbacks(b *plugin.MuxBroker, receiver any) uint32 {
	id := b.NextId()
	go b.AcceptAndServe(id, receiver)
	return id
}

// HostConn is a plugin's connection to its host's callback server.
type HostConn struct {
	c *rpc.Client
}

// DialHost connects to the callback server the host announced with id. An
// id of 0 means the host serves no callbacks: the HostConn then answers
// every call with a CodeContract error.
func DialHost(b *plugin.MuxBroker, id uint32) (*HostConn, error) {
	if id == 0 {
		return &HostConn{}, nil
	}
	c, err := b.Dial(id)
	if err != nil {
		return nil, NewError(CodeClosed, "dial the host's callback server: %v", err)
	}
	return &HostConn{c: rpc.NewClient(c)}, nil
}

// Call calls the host's callback method ("Plugin.<Name>") and waits for its
// answer or the end of ctx. A broken connection is a CodeClosed error.
func (h *HostConn) Call(ctx context.Context, method string, args, reply any) error {
	if h == nil || h.c == nil {
		return NewError(CodeContract, "the host serves no callbacks (%s)", method)
	}
	call := h.c.Go(method, args, reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		if call.Error != nil {
			return NewError(CodeClosed, "host callback %s: %v", method, call.Error)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the connection.
func (h *HostConn) Close() error {
	if h == nil || h.c == nil {
		return nil
	}
	return h.c.Close()
}
