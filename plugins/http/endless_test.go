package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// attacker answers the tool "attack" with a body or an SSE event that never
// ends, and with stream, the GET stream with an endless event too.
func attacker(sse, stream bool) func(http.Handler) http.Handler {
	endless := func(w http.ResponseWriter, r *http.Request, prefix string) {
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		_, _ = io.WriteString(w, prefix)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodGet && stream:
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				endless(w, r, "event: message\ndata: ")
				return
			case r.Method == http.MethodPost:
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var m struct {
					ID     json.RawMessage `json:"id"`
					Params struct {
						Name string `json:"name"`
					} `json:"params"`
				}
				if json.Unmarshal(body, &m) == nil && m.Params.Name == "attack" {
					prefix := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"`
					if sse {
						w.Header().Set("Content-Type", "text/event-stream")
						endless(w, r, "event: message\ndata: "+prefix)
					} else {
						w.Header().Set("Content-Type", "application/json")
						endless(w, r, prefix)
					}
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// An endless response body or SSE event fails its request with too_large,
// naming max_message_mb, and the connection goes on serving.
func TestEndlessResponse(t *testing.T) {
	for name, sse := range map[string]bool{"json body": false, "sse event": true} {
		t.Run(name, func(t *testing.T) {
			ms := newMCPServer(t, serverOpts{wrap: attacker(sse, false)})
			s := mustConnect(t, transport.Config{URL: ms.URL}, pluginconn.DialOptions{TransportOptions: pluginhost.TransportOptions{MaxMessageBytes: 1 << 20}})
			_, err := s.call("attack", nil)
			se := sdkError(t, err)
			if se.Code != sdk.CodeTooLarge || !strings.Contains(se.Message, "max_message_mb") || !strings.Contains(se.Message, "1 MB") {
				t.Fatalf("attack: %s %q", se.Code, se.Message)
			}
			if got, err := s.call("echo", map[string]any{"message": "still"}); err != nil || got != "still" {
				t.Fatalf("echo after the attack = %q, %v", got, err)
			}
		})
	}
}

// An endless event on the GET stream ends the connection with too_large.
func TestEndlessStreamEvent(t *testing.T) {
	ms := newMCPServer(t, serverOpts{wrap: attacker(true, true)})
	s, err := connect(t, transport.Config{URL: ms.URL}, pluginconn.DialOptions{TransportOptions: pluginhost.TransportOptions{MaxMessageBytes: 1 << 20}})
	if err != nil {
		// The stream opens as soon as the session exists: its endless
		// event may end the connection before the handshake's last
		// message (notifications/initialized) is sent. Then that is the
		// connect's failure.
		if sdk.ErrorCode(err) != sdk.CodeTooLarge {
			t.Fatalf("connect failed with %v (code %q); want the endless event's too_large, or a connection that it ends", err, sdk.ErrorCode(err))
		}
		return
	}
	select {
	case <-s.conn.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the connection did not end")
	}
	var se *sdk.Error
	if err := s.conn.Err(); !errors.As(err, &se) || se.Code != sdk.CodeTooLarge || !strings.Contains(se.Message, "an SSE event over the limit") {
		t.Fatalf("the connection ended with %v", err)
	}
}

// Over the legacy SSE transport, an endless event on the event stream ends
// the connection with too_large.
func TestEndlessLegacySSEEvent(t *testing.T) {
	events := make(chan string, 16)
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: endpoint\ndata: /message\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-events:
				if ev != "attack" {
					_, _ = io.WriteString(w, ev)
					w.(http.Flusher).Flush()
					continue
				}
				chunk := bytes.Repeat([]byte("x"), 64<<10)
				_, _ = io.WriteString(w, "event: message\ndata: ")
				for r.Context().Err() == nil {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
				return
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("/message", func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusAccepted)
		switch m.Method {
		case "initialize":
			events <- "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + string(m.ID) +
				",\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}\n\n"
		case "tools/call":
			events <- "attack"
		}
	})
	srv := httptestServer(t, mux)
	s := mustConnect(t, transport.Config{Transport: "sse", URL: srv + "/sse"}, pluginconn.DialOptions{TransportOptions: pluginhost.TransportOptions{MaxMessageBytes: 1 << 20}})
	if _, err := s.call("attack", nil); err == nil {
		t.Fatal("the attack call succeeded")
	}
	select {
	case <-s.conn.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the connection did not end")
	}
	var se *sdk.Error
	if err := s.conn.Err(); !errors.As(err, &se) || se.Code != sdk.CodeTooLarge || !strings.Contains(se.Message, "max_message_mb") {
		t.Fatalf("the connection ended with %v", err)
	}
}

// httptestServer serves h for the test and returns its base URL.
func httptestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
