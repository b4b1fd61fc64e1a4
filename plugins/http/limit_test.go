package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/pluginconn"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// feed counts the chunks through a limitedBody and reports whether it
// tripped.
func feed(sse bool, max int64, chunks ...string) bool {
	tripped := false
	var all []byte
	for _, c := range chunks {
		all = append(all, c...)
	}
	b := &limitedBody{body: io.NopCloser(iotest.OneByteReader(bytes.NewReader(all))), max: max, sse: sse, size: -1,
		trip: func() *sdk.Error { tripped = true; return sdk.NewError(sdk.CodeTooLarge, "over") }}
	buf := make([]byte, 7) // small reads: events and line ends straddle them
	var got []byte
	for {
		n, err := b.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			if !tripped && !bytes.Equal(got, all) {
				panic(fmt.Sprintf("read %q, want %q", got, all))
			}
			return tripped
		}
	}
}

// A body is bounded as a whole; an event stream per event, with CR, LF and
// CRLF line ends, so that many small events pass and one large one fails.
func TestLimitedBody(t *testing.T) {
	for _, c := range []struct {
		name string
		sse  bool
		body []string
		want bool
	}{
		{"body at the limit", false, []string{strings.Repeat("x", 100)}, false},
		{"body over the limit", false, []string{strings.Repeat("x", 101)}, true},
		{"many small events (LF)", true, []string{strings.Repeat("data: "+strings.Repeat("x", 40)+"\n\n", 50)}, false},
		{"many small events (CRLF)", true, []string{strings.Repeat("data: "+strings.Repeat("x", 40)+"\r\n\r\n", 50)}, false},
		{"many small events (CR)", true, []string{strings.Repeat("data: "+strings.Repeat("x", 40)+"\r\r", 50)}, false},
		{"one event of many CRLF lines", true, []string{strings.Repeat("data: xxxxxxxxxx\r\n", 10) + "\r\n"}, true},
		{"one long line", true, []string{"data: " + strings.Repeat("x", 200)}, true},
		{"a large event after small ones", true, []string{"data: a\n\ndata: b\n\n", "data: " + strings.Repeat("y", 120) + "\n\n"}, true},
	} {
		if got := feed(c.sse, 100, c.body...); got != c.want {
			t.Errorf("%s: tripped %v, want %v", c.name, got, c.want)
		}
	}
}

// An event reaches the reader as soon as it is whole, before the stream
// goes on; the events before one over the limit are read, then the error.
func TestLimitedBodyStreamsWholeEvents(t *testing.T) {
	pr, pw := io.Pipe()
	b := &limitedBody{body: pr, max: 100, sse: true, size: -1, trip: func() *sdk.Error { return sdk.NewError(sdk.CodeTooLarge, "over") }}
	go func() { _, _ = io.WriteString(pw, "data: first\r\n\r\n") }()
	buf := make([]byte, 64)
	n, err := b.Read(buf)
	if err != nil || string(buf[:n]) != "data: first\r\n\r\n" {
		t.Fatalf("first event: %q, %v", buf[:n], err)
	}
	go func() {
		_, _ = io.WriteString(pw, "data: second\n\ndata: ")
		_, _ = io.WriteString(pw, strings.Repeat("x", 200))
	}()
	var got []byte
	for {
		n, err := b.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			if sdk.ErrorCode(err) != sdk.CodeTooLarge || string(got) != "data: second\n\n" {
				t.Fatalf("then %q, %v", got, err)
			}
			break
		}
	}
	// A body that announces a length over the limit is refused unread.
	b = &limitedBody{body: io.NopCloser(strings.NewReader("{}")), max: 100, size: 101, trip: func() *sdk.Error { return sdk.NewError(sdk.CodeTooLarge, "over") }}
	if _, err := b.Read(buf); sdk.ErrorCode(err) != sdk.CodeTooLarge {
		t.Fatalf("announced length: %v", err)
	}
}

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
	s := mustConnect(t, transport.Config{URL: ms.URL}, pluginconn.DialOptions{TransportOptions: pluginhost.TransportOptions{MaxMessageBytes: 1 << 20}})
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

// Requests of the server's own pass an event stream only while the gate
// has room: one more waits until an answer went out; closing the stream
// lets go of what it held.
func TestRequestGate(t *testing.T) {
	gate := newRequestGate(transport.Config{MaxServerRequests: 1}) // room for 2
	var stream strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&stream, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"sampling/createMessage\"}\n\n", i)
		stream.WriteString("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
	}
	b := &limitedBody{body: io.NopCloser(strings.NewReader(stream.String())), max: 1 << 20, sse: true, size: -1,
		gate: gate, closed: make(chan struct{}), trip: func() *sdk.Error { return sdk.NewError(sdk.CodeTooLarge, "over") }}
	rd := bufio.NewReader(b)
	event := func() string {
		var ev strings.Builder
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if ev.WriteString(line); line == "\n" {
				return ev.String()
			}
		}
	}
	for i := 1; i <= 2; i++ {
		if ev := event(); !strings.Contains(ev, fmt.Sprintf(`"id":%d,`, i)) {
			t.Fatalf("event %d: %q", i, ev)
		}
		_ = event() // the notification after it
	}
	if len(gate.slots) != 2 || !gate.busy() {
		t.Fatalf("gate holds %d", len(gate.slots))
	}
	got := make(chan string, 1)
	go func() { got <- event() }()
	gate.release("1") // the answer to request 1 went out
	if ev := <-got; !strings.Contains(ev, `"id":3,`) {
		t.Fatalf("event 3: %q", ev)
	}
	if _, ok := answered(httptestPost(t, `{"jsonrpc":"2.0","id":2,"result":{}}`)); !ok {
		t.Fatal("an answer POST is not recognised")
	}
	_ = b.Close()
	if gate.busy() || len(gate.slots) != 0 {
		t.Fatalf("after close the gate still holds %d", len(gate.slots))
	}
}

func httptestPost(t *testing.T, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}
