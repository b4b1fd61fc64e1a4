package sdk

import (
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Handlers keeps the notification and request handlers a transport is
// given, safe for concurrent use. Embed it in a transport to get
// SetNotificationHandler and SetRequestHandler; read the handlers back with
// Notification and Request (nil when unset).
type Handlers struct {
	mu     sync.RWMutex
	onNote func(mcp.JSONRPCNotification)
	onReq  transport.RequestHandler
}

// SetNotificationHandler sets the handler of server notifications.
func (h *Handlers) SetNotificationHandler(f func(mcp.JSONRPCNotification)) {
	h.mu.Lock()
	h.onNote = f
	h.mu.Unlock()
}

// SetRequestHandler sets the handler of server-to-client requests.
func (h *Handlers) SetRequestHandler(f transport.RequestHandler) {
	h.mu.Lock()
	h.onReq = f
	h.mu.Unlock()
}

// Notification returns the notification handler, or nil.
func (h *Handlers) Notification() func(mcp.JSONRPCNotification) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.onNote
}

// Request returns the request handler, or nil.
func (h *Handlers) Request() transport.RequestHandler {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.onReq
}
