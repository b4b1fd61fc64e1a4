package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
)

// Session is a small JSON-RPC client on a plugin connection, as the host's
// MCP client would be: requests matched with their responses by id, the
// server's roots/list answered with one root (file:///sdktest), its
// notifications on Notifications.
type Session struct {
	conn *pluginhost.TransportConn
	ids  atomic.Int64

	mu      sync.Mutex
	pending map[string]chan rpcMessage
	// seqs maps the write sequence of a pending request to its id, so a
	// failed write fails that request only; early holds the failures that
	// came before their write's sequence was recorded.
	seqs  map[uint64]string
	early map[uint64]*sdk.Error
	// Notifications receives the method of each notification of the
	// server's (dropped when full).
	Notifications chan string
}

func newSession() *Session {
	return &Session{pending: map[string]chan rpcMessage{}, seqs: map[uint64]string{}, early: map[uint64]*sdk.Error{},
		Notifications: make(chan string, 16)}
}

// Conn returns the plugin connection.
func (s *Session) Conn() *pluginhost.TransportConn { return s.conn }

func (s *Session) options() pluginhost.TransportOptions {
	return pluginhost.TransportOptions{
		OnMessage:    s.onMessage,
		OnWriteError: s.writeFailed,
	}
}

// writeFailed fails the request whose write (seq) failed, and only that
// one: a cancelled request's exchange ends with such a failure too.
func (s *Session) writeFailed(seq uint64, err *sdk.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, ok := s.seqs[seq]
	if !ok {
		s.early[seq] = err
		return
	}
	delete(s.seqs, seq)
	s.failLocked(key, err)
}

// track records the write sequence of the pending request key; s.mu held.
func (s *Session) trackLocked(seq uint64, key string) {
	if err, ok := s.early[seq]; ok {
		delete(s.early, seq)
		s.failLocked(key, err)
		return
	}
	s.seqs[seq] = key
}

func (s *Session) failLocked(key string, err *sdk.Error) {
	if ch, ok := s.pending[key]; ok {
		ch <- rpcMessage{Error: &rpcError{Code: -1, Message: err.Message}}
		delete(s.pending, key)
	}
}

func (s *Session) onMessage(b []byte) {
	var m rpcMessage
	if json.Unmarshal(b, &m) != nil {
		return
	}
	switch {
	case m.Method == "roots/list" && len(m.ID) > 0:
		out, _ := json.Marshal(rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(`{"roots":[{"uri":"file:///sdktest","name":"sdktest"}]}`)})
		go func() { _, _ = s.conn.Write(out, nil) }()
	case m.Method != "" && len(m.ID) > 0:
		out, _ := json.Marshal(rpcMessage{JSONRPC: "2.0", ID: m.ID, Error: &rpcError{Code: -32601, Message: "not handled"}})
		go func() { _, _ = s.conn.Write(out, nil) }()
	case m.Method != "":
		select {
		case s.Notifications <- m.Method:
		default:
		}
	case len(m.ID) > 0:
		s.mu.Lock()
		ch := s.pending[string(m.ID)]
		delete(s.pending, string(m.ID))
		s.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// Request sends a request and waits for its result, the end of ctx (the
// server is then told with notifications/cancelled, and the plugin's
// exchange is abandoned), or the end of the connection.
func (s *Session) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := json.RawMessage(strconv.FormatInt(s.ids.Add(1), 10))
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	msg, _ := json.Marshal(rpcMessage{JSONRPC: "2.0", ID: id, Method: method, Params: p})
	ch := make(chan rpcMessage, 1)
	s.mu.Lock()
	s.pending[string(id)] = ch
	s.mu.Unlock()
	seq, err := s.conn.Write(msg, nil)
	if err != nil {
		s.mu.Lock()
		delete(s.pending, string(id))
		s.mu.Unlock()
		return nil, err
	}
	s.mu.Lock()
	s.trackLocked(seq, string(id))
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.seqs, seq)
		s.mu.Unlock()
	}()
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: JSON-RPC error %d: %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result, nil
	case <-s.conn.Done():
		return nil, s.conn.Err()
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.pending, string(id))
		s.mu.Unlock()
		note, _ := json.Marshal(rpcMessage{JSONRPC: "2.0", Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":` + string(id) + `}`)})
		_ = s.conn.Send(context.Background(), note)
		s.conn.Cancel(seq)
		return nil, ctx.Err()
	}
}

// Notify sends a notification and returns once the plugin has written it.
func (s *Session) Notify(ctx context.Context, method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	msg, _ := json.Marshal(rpcMessage{JSONRPC: "2.0", Method: method, Params: p})
	return s.conn.Send(ctx, msg)
}

// Initialize runs the MCP handshake (initialize, notifications/initialized)
// at protocol revision 2025-06-18, and tells the plugin the revision the
// server answered, as a host does (an HTTP plugin opens its GET stream
// then).
func (s *Session) Initialize(ctx context.Context) error {
	res, err := s.Request(ctx, "initialize", map[string]any{"protocolVersion": "2025-06-18",
		"clientInfo": map[string]string{"name": "sdktest", "version": "1"}, "capabilities": map[string]any{"roots": map[string]any{}}})
	if err != nil {
		return err
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.ProtocolVersion == "" {
		return fmt.Errorf("initialize: a result without protocolVersion: %.200s", res)
	}
	s.conn.SetProtocolVersion(r.ProtocolVersion)
	return s.Notify(ctx, "notifications/initialized", nil)
}

// CallTool calls a tool and returns its first text content; a result with
// isError is an error with that text.
func (s *Session) CallTool(ctx context.Context, name string, args map[string]any) (string, error) {
	res, err := s.Request(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", err
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		return "", fmt.Errorf("tools/call %s: a result without text content: %.200s", name, res)
	}
	if r.IsError {
		return "", fmt.Errorf("tool %s: %s", name, r.Content[0].Text)
	}
	return r.Content[0].Text, nil
}
