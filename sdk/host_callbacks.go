package sdk

import (
	"context"
	"net/rpc"
)

// Host is what a plugin may ask of the host while it runs.
type Host interface {
	// Headers returns extra headers for one HTTP request to the server (for
	// example Authorization from an auth plugin). Transports call it before
	// each request only when TransportConfig.DynamicHeaders is set.
	Headers(ctx context.Context, req HeadersRequest) (map[string]string, error)
}

// HeadersRequest describes the request headers are wanted for.
type HeadersRequest struct {
	Method string
	URL    string
}

// HeadersReply carries the headers, or the reason there are none.
type HeadersReply struct {
	Headers map[string]string
	Err     *Error
}

// HostFuncs implements Host with plain functions; a nil function answers
// with nothing. The host passes one to NewTransportClient.
type HostFuncs struct {
	HeadersFunc func(ctx context.Context, req HeadersRequest) (map[string]string, error)
}

// Headers calls HeadersFunc.
func (h HostFuncs) Headers(ctx context.Context, req HeadersRequest) (map[string]string, error) {
	if h.HeadersFunc == nil {
		return nil, nil
	}
	return h.HeadersFunc(ctx, req)
}

// hostCallbacks is the plugin-side client of the host's callback server.
type hostCallbacks struct {
	client *rpc.Client
}

func (h *hostCallbacks) Headers(ctx context.Context, req HeadersRequest) (map[string]string, error) {
	if h.client == nil {
		return nil, nil
	}
	var reply HeadersReply
	call := h.client.Go("Plugin.Headers", req, &reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		if call.Error != nil {
			return nil, NewError(CodeClosed, "host callback: %v", call.Error)
		}
		if reply.Err != nil {
			return nil, reply.Err
		}
		return reply.Headers, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// hostCallbackServer is served by the host on the broker for the plugin.
type hostCallbackServer struct {
	impl Host
}

// Headers answers a plugin's request for headers.
func (s *hostCallbackServer) Headers(req HeadersRequest, reply *HeadersReply) error {
	h, err := s.impl.Headers(context.Background(), req)
	reply.Headers = h
	reply.Err = AsError(err)
	return nil
}
