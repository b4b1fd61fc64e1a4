package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
)

// Each type's fields come in the original's order, all of them, even when
// empty; text is escaped as JSON, not as HTML.
func TestEventJSON(t *testing.T) {
	cases := []struct {
		e    Event
		want string
	}{
		{Event{Cursor: 7, Type: TypeMessage, SessionKey: "k", Role: "user", Content: `a "<b>" & é`, Timestamp: "1774785602.5", MessageID: "12"},
			`{"cursor":7,"type":"message","session_key":"k","role":"user","content":"a \"<b>\" & é","timestamp":"1774785602.5","message_id":"12"}`},
		{Event{Cursor: 1, Type: TypeMessage, SessionKey: "k", Role: "assistant", Content: "x"},
			`{"cursor":1,"type":"message","session_key":"k","role":"assistant","content":"x","timestamp":"","message_id":""}`},
		{Event{Cursor: 2, Type: TypeApprovalRequested, SessionKey: "", ApprovalID: "a1", Kind: "exec"},
			`{"cursor":2,"type":"approval_requested","session_key":"","approval_id":"a1","kind":"exec","description":""}`},
		{Event{Cursor: 3, Type: TypeApprovalResolved, SessionKey: "k", ApprovalID: "a1", Decision: "deny", Kind: "ignored"},
			`{"cursor":3,"type":"approval_resolved","session_key":"k","approval_id":"a1","decision":"deny"}`},
		{Event{Cursor: 4, Type: "other", SessionKey: "k", Content: "c", Decision: "d"},
			`{"cursor":4,"type":"other","session_key":"k","content":"c","decision":"d"}`},
		{Event{Cursor: 5, Type: TypeMessage, SessionKey: "k", Content: "bad \xff utf-8\n"},
			`{"cursor":5,"type":"message","session_key":"k","role":"","content":"bad \ufffd utf-8\n","timestamp":"","message_id":""}`},
	}
	for _, c := range cases {
		if got := string(c.e.JSON()); got != c.want {
			t.Errorf("JSON of %+v =\n%s\nwant\n%s", c.e, got, c.want)
		}
		// json.Marshal goes through MarshalJSON (and escapes HTML).
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c.e); err != nil || strings.TrimSuffix(b.String(), "\n") != c.want {
			t.Errorf("Encode(%+v) = %s, %v; want %s", c.e, b.String(), err, c.want)
		}
	}
}

// A Feed hands the watcher's events to the tools as JSON: Poll with its
// filters and next cursor, Wait for the next one, a timeout as nil, a
// cancelled context as its error, a closed watcher as ErrClosed.
func TestFeed(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	s := openStore(t, dir)
	w, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f := Feed{W: w}
	if evs, next := f.Poll(0, "", 20); len(evs) != 0 || next != 0 {
		t.Fatalf("Poll at start = %s, %d", evs, next)
	}
	if ev, err := f.Wait(context.Background(), 0, "", 0); ev != nil || err != nil {
		t.Fatalf("Wait with timeout 0 = %s, %v; want nil, nil", ev, err)
	}
	finish(t, appendMessages(t, dir, 3, "feed"))
	first := next(t, w, 2, tgKey) // the third message is written last
	if first.Cursor != 3 {
		t.Fatalf("third event has cursor %d", first.Cursor)
	}
	evs, nx := f.Poll(0, tgKey, 2)
	if len(evs) != 2 || nx != 2 {
		t.Fatalf("Poll(0, tg, 2) = %s, %d", evs, nx)
	}
	for i, raw := range evs {
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got["cursor"] != float64(i+1) || got["content"] != "feed "+strconv.Itoa(i) || got["role"] != "user" {
			t.Errorf("event %d = %s", i, raw)
		}
		e, _ := w.Poll(int64(i), "", 1)
		if string(raw) != string(e[0].JSON()) {
			t.Errorf("Feed event %s, watcher event %s", raw, e[0].JSON())
		}
	}
	if evs, nx := f.Poll(0, "agent:main:other", 20); len(evs) != 0 || nx != 0 {
		t.Errorf("Poll of another session = %s, %d", evs, nx)
	}
	ev, err := f.Wait(context.Background(), 2, "", long)
	if err != nil || string(ev) != string(first.JSON()) {
		t.Errorf("Wait(2) = %s, %v; want %s", ev, err, first.JSON())
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ev, err := f.Wait(cctx, 3, "", long); ev != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled context = %s, %v", ev, err)
	}
	w.Close()
	if ev, err := f.Wait(context.Background(), 3, "", long); ev != nil || !errors.Is(err, ErrClosed) {
		t.Errorf("Wait after Close = %s, %v", ev, err)
	}
	var none Feed
	if evs, nx := none.Poll(5, "", 20); len(evs) != 0 || nx != 5 {
		t.Errorf("nil watcher Poll = %s, %d", evs, nx)
	}
	if ev, err := none.Wait(context.Background(), 0, "", long); ev != nil || err != nil {
		t.Errorf("nil watcher Wait = %s, %v", ev, err)
	}
}
