package sdktest

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ServeEnv is the environment variable that makes ServeReferenceIfAsked
// serve the reference server.
const ServeEnv = "HERMES_SDKTEST_SERVE"

// WaitingNotification is sent by the reference server's wait tool once it
// has the request.
const WaitingNotification = "notifications/sdktest/waiting"

// ServeReferenceIfAsked turns the current process into the reference MCP
// server on stdio when ServeEnv is set, and never returns then. Call it
// first thing in TestMain, so that the test binary can be the server a
// stdio-like plugin starts (see ReferenceCommand).
func ServeReferenceIfAsked() {
	if os.Getenv(ServeEnv) != "1" {
		return
	}
	ServeReference(os.Stdin, os.Stdout)
	os.Exit(0)
}

// ReferenceCommand returns the command and environment that start the
// reference server over stdio: the running test binary with ServeEnv set.
func ReferenceCommand() (string, []string) {
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return self, []string{ServeEnv + "=1", "PATH=" + os.Getenv("PATH")}
}

// ServeReference serves the reference MCP server, a small raw JSON-RPC one
// (newline-delimited, MCP's stdio framing), on r and w until r ends. Its
// tools:
//
//   - echo {message}: returns message.
//   - roots: asks the client for its roots (a request of the server's own)
//     and returns them as JSON.
//   - wait: sends the notification WaitingNotification, then blocks until
//     the request is cancelled (notifications/cancelled) or 30s pass.
//   - cancellations: how many wait calls were cancelled so far.
//   - exit {code}: the server process exits with code at once, without
//     answering.
func ServeReference(r io.Reader, w io.Writer) {
	s := &refServer{w: w, waits: map[string]chan struct{}{}, asks: map[string]chan json.RawMessage{}}
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 64<<10), 64<<20)
	for in.Scan() {
		var m rpcMessage
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		s.handle(m)
	}
}

// rpcMessage is any JSON-RPC message.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type refServer struct {
	mu        sync.Mutex
	w         io.Writer
	waits     map[string]chan struct{}        // request id → closed when cancelled
	asks      map[string]chan json.RawMessage // own request id → the client's result
	asked     atomic.Int64
	cancelled atomic.Int64
}

func (s *refServer) send(m rpcMessage) {
	m.JSONRPC = "2.0"
	b, _ := json.Marshal(m)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.w.Write(append(b, '\n'))
}

func (s *refServer) result(id json.RawMessage, v any) {
	b, _ := json.Marshal(v)
	s.send(rpcMessage{ID: id, Result: b})
}

func (s *refServer) text(id json.RawMessage, text string, isError bool) {
	s.result(id, map[string]any{"content": []map[string]string{{"type": "text", "text": text}}, "isError": isError})
}

func (s *refServer) handle(m rpcMessage) {
	switch {
	case m.Method == "" && len(m.ID) > 0: // the client's answer to our request
		s.mu.Lock()
		ch := s.asks[string(m.ID)]
		delete(s.asks, string(m.ID))
		s.mu.Unlock()
		if ch != nil {
			ch <- m.Result
		}
	case m.Method == "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.result(m.ID, map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]string{"name": "sdktest-reference", "version": "1.0.0"}})
	case m.Method == "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.mu.Lock()
		ch := s.waits[string(p.RequestID)]
		delete(s.waits, string(p.RequestID))
		s.mu.Unlock()
		if ch != nil {
			close(ch)
		}
	case m.Method == "tools/list":
		tools := []map[string]any{}
		for _, n := range []string{"echo", "roots", "wait", "cancellations", "exit"} {
			tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
		}
		s.result(m.ID, map[string]any{"tools": tools})
	case m.Method == "tools/call":
		go s.call(m)
	case len(m.ID) > 0 && m.Method != "":
		s.send(rpcMessage{ID: m.ID, Error: &rpcError{Code: -32601, Message: "method not found: " + m.Method}})
	}
}

func (s *refServer) call(m rpcMessage) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &p)
	switch p.Name {
	case "echo":
		msg, _ := p.Arguments["message"].(string)
		s.text(m.ID, msg, false)
	case "roots":
		id := json.RawMessage(strconv.Quote("ref-" + strconv.FormatInt(s.asked.Add(1), 10)))
		ch := make(chan json.RawMessage, 1)
		s.mu.Lock()
		s.asks[string(id)] = ch
		s.mu.Unlock()
		s.send(rpcMessage{ID: id, Method: "roots/list"})
		select {
		case res := <-ch:
			var r struct {
				Roots json.RawMessage `json:"roots"`
			}
			_ = json.Unmarshal(res, &r)
			s.text(m.ID, string(r.Roots), false)
		case <-time.After(30 * time.Second):
			s.text(m.ID, "roots: no answer", true)
		}
	case "wait":
		ch := make(chan struct{})
		s.mu.Lock()
		s.waits[string(m.ID)] = ch
		s.mu.Unlock()
		s.send(rpcMessage{Method: WaitingNotification})
		select {
		case <-ch:
			s.cancelled.Add(1)
		case <-time.After(30 * time.Second):
			s.text(m.ID, "not cancelled", false)
		}
	case "cancellations":
		s.text(m.ID, strconv.FormatInt(s.cancelled.Load(), 10), false)
	case "exit":
		code, _ := p.Arguments["code"].(float64)
		os.Exit(int(code))
	default:
		s.send(rpcMessage{ID: m.ID, Error: &rpcError{Code: -32602, Message: "unknown tool " + p.Name}})
	}
}
