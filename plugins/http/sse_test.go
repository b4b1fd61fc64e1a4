package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// events reads every event of body through an eventReader with the given
// limit, in one-byte reads (so that events and line ends straddle them); it
// reports the data of the message events and whether the limit tripped.
func events(t *testing.T, max int64, body string) ([]string, bool) {
	t.Helper()
	er := newEventReader(iotest.OneByteReader(strings.NewReader(body)), max)
	var got []string
	for {
		ev, err := er.next()
		switch {
		case errors.Is(err, errTooLarge):
			return got, true
		case errors.Is(err, io.EOF):
			return got, false
		case err != nil:
			t.Fatal(err)
		}
		if ev.isMessage() {
			got = append(got, string(ev.data))
		}
	}
}

// An event stream is bounded per event, with CR, LF and CRLF line ends, so
// that many small events pass and one large one fails; the events before it
// are read first.
func TestEventLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		body string
		n    int
		want bool
	}{
		{"many small events (LF)", strings.Repeat("data: "+strings.Repeat("x", 40)+"\n\n", 50), 50, false},
		{"many small events (CRLF)", strings.Repeat("data: "+strings.Repeat("x", 40)+"\r\n\r\n", 50), 50, false},
		{"many small events (CR)", strings.Repeat("data: "+strings.Repeat("x", 40)+"\r\r", 50), 50, false},
		{"one event of many CRLF lines", strings.Repeat("data: xxxxxxxxxx\r\n", 10) + "\r\n", 0, true},
		{"one long line", "data: " + strings.Repeat("x", 200), 0, true},
		{"a large event after small ones", "data: a\n\ndata: b\n\ndata: " + strings.Repeat("y", 120) + "\n\n", 2, true},
	} {
		got, tripped := events(t, 100, c.body)
		if tripped != c.want || len(got) != c.n {
			t.Errorf("%s: %d events, tripped %v; want %d, %v", c.name, len(got), tripped, c.n, c.want)
		}
	}
}

// Events are parsed as the SSE specification says: multi-line data joined
// with LF, comments and other fields skipped, ids kept, a type other than
// message not a message.
func TestEventParsing(t *testing.T) {
	body := ": comment\nid: 7\nevent: message\ndata: {\"a\":\ndata: 1}\n\n" +
		"id: 8\ndata:\n\n" + // a priming event: an id, empty data
		"event: endpoint\ndata: /messages?s=1\n\n" +
		"data:{\"b\":2}\r\n\r\n" +
		"data: last without its blank line"
	er := newEventReader(strings.NewReader(body), 1<<20)
	var got []event
	for {
		ev, err := er.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, ev)
	}
	if len(got) != 5 {
		t.Fatalf("%d events: %+v", len(got), got)
	}
	if string(got[0].data) != "{\"a\":\n1}" || got[0].id != "7" || !got[0].isMessage() {
		t.Errorf("event 0: %+v", got[0])
	}
	if got[1].id != "8" || got[1].isMessage() {
		t.Errorf("event 1: %+v", got[1])
	}
	if got[2].name != "endpoint" || string(got[2].data) != "/messages?s=1" || got[2].isMessage() {
		t.Errorf("event 2: %+v", got[2])
	}
	if string(got[3].data) != `{"b":2}` || string(got[4].data) != "last without its blank line" {
		t.Errorf("events 3, 4: %+v %+v", got[3], got[4])
	}
}

// An event reaches the reader as soon as it is whole, before the stream
// goes on.
func TestEventStreamsWholeEvents(t *testing.T) {
	pr, pw := io.Pipe()
	er := newEventReader(pr, 100)
	go func() { _, _ = io.WriteString(pw, "data: first\r\n\r\n") }()
	ev, err := er.next()
	if err != nil || string(ev.data) != "first" {
		t.Fatalf("first event: %q, %v", ev.data, err)
	}
	go func() {
		_, _ = io.WriteString(pw, "data: second\n\ndata: ")
		_, _ = io.WriteString(pw, strings.Repeat("x", 200))
	}()
	if ev, err := er.next(); err != nil || string(ev.data) != "second" {
		t.Fatalf("second event: %q, %v", ev.data, err)
	}
	if _, err := er.next(); !errors.Is(err, errTooLarge) {
		t.Fatalf("then %v", err)
	}
}

// A body is bounded as a whole; one that announces a length over the limit
// is refused unread.
func TestReadBody(t *testing.T) {
	if b, err := readBody(strings.NewReader(strings.Repeat("x", 100)), -1, 100); err != nil || len(b) != 100 {
		t.Fatalf("at the limit: %d, %v", len(b), err)
	}
	if _, err := readBody(strings.NewReader(strings.Repeat("x", 101)), -1, 100); !errors.Is(err, errTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	unread := &countingReader{r: strings.NewReader("{}")}
	if _, err := readBody(unread, 101, 100); !errors.Is(err, errTooLarge) || unread.n != 0 {
		t.Fatalf("announced length: %v after %d bytes", err, unread.n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestPeek: the plugin learns what the HTTP wire needs of a message (is it
// a request, its id, its method, is it an answer) from its first keys.
func TestPeek(t *testing.T) {
	for _, c := range []struct {
		msg               string
		id, method        string
		request, response bool
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`, "3", "tools/call", true, false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "notifications/initialized", false, false},
		{`{"result":{"content":[{"text":"a \"}\" b"}]},"jsonrpc":"2.0","id":"s-1"}`, `"s-1"`, "", false, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`, "", "", false, true},
		{` { "id" : 1 , "method" : "ping" } `, "1", "ping", true, false},
		{`[1,2]`, "", "", false, false},
		{`{"id":`, "", "", false, false},
	} {
		p := peek([]byte(c.msg))
		if string(p.id) != c.id || p.method != c.method || p.request != c.request || p.response != c.response {
			t.Errorf("%s: %+v", c.msg, p)
		}
	}
	// The params of a request the host wrote are never scanned.
	huge := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":"`), bytes.Repeat([]byte("x"), 1<<20)...)
	if p := peek(huge); !p.request || string(p.id) != "1" {
		t.Errorf("truncated large request: %+v", p)
	}
}

// TestRefusalAnswer: a JSON-RPC error in the body of a refused request
// becomes the request's answer, with the request's id when the server gave
// null; anything else is no answer.
func TestRefusalAnswer(t *testing.T) {
	nullID := `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`
	got := refusalAnswer([]byte(nullID), []byte("7"))
	if p := peek(got); !p.response || string(p.id) != "7" || !bytes.Contains(got, []byte(`"message":"Bad Request: Server not initialized"`)) {
		t.Fatalf("null id: %s", got)
	}
	own := `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Unsupported protocol version"}}`
	if got := refusalAnswer([]byte(own), []byte("7")); string(got) != own {
		t.Fatalf("own id: %s", got)
	}
	for _, body := range []string{`{"detail":"bad header"}`, `{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"x"}}`, `not json`, `{"jsonrpc":"2.0","id":7,"result":{}}`} {
		if got := refusalAnswer([]byte(body), []byte("7")); got != nil {
			t.Errorf("%s: %s", body, got)
		}
	}
}
