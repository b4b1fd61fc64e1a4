package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// TestResumeAfterCutOff: an answer's event stream that the server ends
// before the answer, after naming its events (and a reconnection time), is
// resumed with a GET carrying Last-Event-ID, and the answer comes on it.
func TestResumeAfterCutOff(t *testing.T) {
	var mu sync.Mutex
	var callID json.RawMessage
	var resumedWith []string
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			last := r.Header.Get("Last-Event-ID")
			if last == "" {
				w.WriteHeader(http.StatusMethodNotAllowed) // no listen stream
				return
			}
			mu.Lock()
			resumedWith = append(resumedWith, last)
			id := callID
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: e2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n", id)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		switch m.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"cut","version":"1"}}}`, m.ID)
		case "tools/call":
			mu.Lock()
			callID = m.ID
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			// A priming event, then the stream ends before the answer.
			_, _ = io.WriteString(w, "id: e1\nretry: 50\ndata: \n\n")
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	srv := httptestServer(t, mux)
	s := mustConnect(t, transport.Config{URL: srv + "/mcp", Extra: map[string]any{"skip_preflight": true}}, pluginconn.DialOptions{})
	got, err := s.call("anything", nil)
	if err != nil || got != "resumed" {
		t.Fatalf("call = %q, %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(resumedWith, ",") != "e1" {
		t.Fatalf("resumed with Last-Event-ID %q, want e1 once", resumedWith)
	}
}
