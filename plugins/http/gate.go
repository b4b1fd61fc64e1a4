package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/hermes-agent/hermes/sdk/transport"
)

// requestGate bounds the requests of the server's own that the plugin has
// handed over and not yet answered. mcp-go starts a goroutine for each one
// it reads and keeps it until the answer is POSTed back, so a burst of them
// would grow the plugin without bound; instead, an event stream that
// brings one more request than the gate admits is held back (the server
// feels it as a slow reader) until an answer has gone out. The gate admits
// twice what the host handles at once (max_server_requests): past the
// host's own limit the host refuses at once, and refusals go out fast.
type requestGate struct {
	slots chan struct{}

	mu   sync.Mutex
	held map[string]int // request id → requests with it in flight
}

func newRequestGate(cfg transport.Config) *requestGate {
	n := cfg.MaxServerRequests
	if n <= 0 {
		n = 64
	}
	return &requestGate{slots: make(chan struct{}, 2*n), held: map[string]int{}}
}

// acquire waits for room for the request id, or for done; it reports
// whether it got it.
func (g *requestGate) acquire(id string, done <-chan struct{}) bool {
	select {
	case g.slots <- struct{}{}:
	case <-done:
		return false
	}
	g.mu.Lock()
	g.held[id]++
	g.mu.Unlock()
	return true
}

// release frees the room of one request id, if it holds any.
func (g *requestGate) release(id string) {
	g.mu.Lock()
	n := g.held[id]
	switch {
	case n == 0:
		g.mu.Unlock()
		return
	case n == 1:
		delete(g.held, id)
	default:
		g.held[id] = n - 1
	}
	g.mu.Unlock()
	<-g.slots
}

// busy reports whether any request is in flight.
func (g *requestGate) busy() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held) > 0
}

// requestID returns the id of the event when its data is a request of the
// server's own as mcp-go reads one (an id that is a string or a number,
// and a method), or ok false.
func requestID(event []byte) (id string, ok bool) {
	var data []byte
	for _, line := range bytes.Split(event, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if v, found := bytes.CutPrefix(line, []byte("data:")); found {
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
	}
	return messageID(data, true)
}

// messageID returns the id of a JSON-RPC message: of a request with
// request, else of a response.
func messageID(data []byte, request bool) (string, bool) {
	var m struct {
		ID     json.RawMessage  `json:"id"`
		Method *json.RawMessage `json:"method"`
	}
	if len(data) == 0 || json.Unmarshal(data, &m) != nil || len(m.ID) == 0 {
		return "", false
	}
	if c := m.ID[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return "", false
	}
	if (m.Method != nil) != request {
		return "", false
	}
	return string(m.ID), true
}

// answered returns the id of the answer a POST carries, or ok false.
func answered(req *http.Request) (string, bool) {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return "", false
	}
	body, err := req.GetBody()
	if err != nil {
		return "", false
	}
	defer body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(body); err != nil {
		return "", false
	}
	return messageID(buf.Bytes(), false)
}
