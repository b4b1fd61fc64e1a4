package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/send"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/store"
)

const (
	tgKey = "agent:main:telegram:dm:123456"
	dcKey = "agent:main:discord:group:789:456"
)

// golden checks a result's exact text.
func golden(t *testing.T, res *Result, wantErr bool, want string) {
	t.Helper()
	if res.IsError != wantErr {
		t.Errorf("IsError = %v, want %v (%s)", res.IsError, wantErr, res.Text)
	}
	if res.Text != want {
		t.Errorf("text:\n%s\nwant:\n%s", res.Text, want)
	}
}

const convDiscord = `    {
      "session_key": "agent:main:discord:group:789:456",
      "session_id": "dc1",
      "platform": "discord",
      "chat_type": "group",
      "display_name": "#general",
      "chat_name": "",
      "user_name": "",
      "updated_at": "2026-03-29T12:30:00"
    }`

const convTelegram = `    {
      "session_key": "agent:main:telegram:dm:123456",
      "session_id": "tg1",
      "platform": "telegram",
      "chat_type": "dm",
      "display_name": "Alice",
      "chat_name": "Alice",
      "user_name": "Alice",
      "updated_at": "2026-03-29T12:00:07.250000"
    }`

func TestConversationsList(t *testing.T) {
	t.Parallel()
	tl := &Tools{Store: openStore(t, home(t, "current", false, false))}
	both := "{\n  \"count\": 2,\n  \"conversations\": [\n" + convDiscord + ",\n" + convTelegram + "\n  ]\n}"
	onlyTG := "{\n  \"count\": 1,\n  \"conversations\": [\n" + convTelegram + "\n  ]\n}"
	onlyDC := "{\n  \"count\": 1,\n  \"conversations\": [\n" + convDiscord + "\n  ]\n}"
	none := "{\n  \"count\": 0,\n  \"conversations\": []\n}"
	for _, c := range []struct{ args, want string }{
		{"", both},
		{`{}`, both},
		{`{"limit": 0}`, onlyDC},   // clamped to 1
		{`{"limit": -5}`, onlyDC},  // clamped to 1
		{`{"limit": 999}`, both},   // clamped to 200
		{`{"limit": "abc"}`, both}, // invalid: the default, 50
		{`{"limit": "1"}`, onlyDC}, // int("1")
		{`{"limit": 1.9}`, onlyDC}, // int(1.9) == 1
		{`{"limit": null}`, both},  // default
		{`{"platform": "TELEGRAM"}`, onlyTG},
		{`{"platform": "slack"}`, none},                   // ended: not listed
		{`{"platform": null, "search": "alice"}`, onlyTG}, // display name
		{`{"search": "GENERAL"}`, onlyDC},                 // display name, case-insensitive
		{`{"search": "group:789"}`, onlyDC},               // session key
		{`{"search": "nobody"}`, none},
		{`{"search": ""}`, both},
	} {
		golden(t, call(t, tl, ConversationsList, c.args), false, c.want)
	}
}

func TestConversationsListFromSessionsJSON(t *testing.T) {
	t.Parallel()
	// The March 2026 schema has no gateway rows: the index is sessions.json.
	tl := &Tools{Store: openStore(t, home(t, "march", true, false))}
	res := call(t, tl, ConversationsList, `{"search": "general"}`)
	golden(t, res, false, `{
  "count": 1,
  "conversations": [
    {
      "session_key": "agent:main:discord:group:789:456",
      "session_id": "20260329_090000_def456",
      "platform": "discord",
      "chat_type": "group",
      "display_name": "",
      "chat_name": "#general",
      "user_name": "Bob",
      "updated_at": "2026-03-29T15:00:00"
    }
  ]
}`)
	res = call(t, tl, ConversationsList, "")
	var got struct {
		Count         int
		Conversations []struct {
			SessionKey string `json:"session_key"`
		}
	}
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for _, c := range got.Conversations {
		keys = append(keys, c.SessionKey)
	}
	// updated_at descending; "_README" and non-object entries are dropped.
	want := []string{dcKey, tgKey, "agent:main:slack:group:C1234:U5678"}
	if strings.Join(keys, " ") != strings.Join(want, " ") || got.Count != 3 {
		t.Errorf("keys %v (count %d), want %v", keys, got.Count, want)
	}
}

func TestConversationGet(t *testing.T) {
	t.Parallel()
	tl := &Tools{Store: openStore(t, home(t, "current", false, false))}
	golden(t, call(t, tl, ConversationGet, `{"session_key": "`+dcKey+`"}`), false, `{
  "session_key": "agent:main:discord:group:789:456",
  "session_id": "dc1",
  "platform": "discord",
  "chat_type": "group",
  "display_name": "#general",
  "user_name": "",
  "chat_name": "",
  "chat_id": "789",
  "thread_id": "t9",
  "updated_at": "2026-03-29T12:30:00",
  "created_at": "2026-03-29T12:01:00",
  "input_tokens": 10,
  "output_tokens": 5,
  "total_tokens": 15
}`)
	golden(t, call(t, tl, ConversationGet, `{"session_key": "`+tgKey+`"}`), false, `{
  "session_key": "agent:main:telegram:dm:123456",
  "session_id": "tg1",
  "platform": "telegram",
  "chat_type": "dm",
  "display_name": "Alice",
  "user_name": "Alice",
  "chat_name": "Alice",
  "chat_id": "123456",
  "thread_id": null,
  "updated_at": "2026-03-29T12:00:07.250000",
  "created_at": "2026-03-29T12:00:00",
  "input_tokens": 50000,
  "output_tokens": 2000,
  "total_tokens": 52000
}`)
	golden(t, call(t, tl, ConversationGet, `{"session_key": "agent:main:nope"}`), true,
		`{"error": "Conversation not found: agent:main:nope"}`)
	golden(t, call(t, tl, ConversationGet, `{}`), true, `{"error": "Conversation not found: "}`)
}

func TestMessagesRead(t *testing.T) {
	t.Parallel()
	tl := &Tools{Store: openStore(t, home(t, "current", false, false))}
	m2 := `    {
      "id": "2",
      "role": "user",
      "content": "hello",
      "timestamp": 1774785602.0
    }`
	m3 := `    {
      "id": "3",
      "role": "assistant",
      "content": "here is the chart\nMEDIA: files/report.pdf",
      "timestamp": 1774785603.0
    }`
	m7 := `    {
      "id": "7",
      "role": "user",
      "content": "thanks",
      "timestamp": 1774785607.25
    }`
	head := func(n int) string {
		return "{\n  \"session_key\": \"" + tgKey + "\",\n  \"count\": " + string(rune('0'+n)) +
			",\n  \"total_in_session\": 3,\n  \"messages\": [\n"
	}
	all := head(3) + m2 + ",\n" + m3 + ",\n" + m7 + "\n  ]\n}"
	last := head(1) + m7 + "\n  ]\n}"
	last2 := head(2) + m3 + ",\n" + m7 + "\n  ]\n}"
	for _, c := range []struct{ args, want string }{
		{`{"session_key": "` + tgKey + `"}`, all},
		{`{"session_key": "` + tgKey + `", "limit": 0}`, last},
		{`{"session_key": "` + tgKey + `", "limit": 2}`, last2},
		{`{"session_key": "` + tgKey + `", "limit": " 2 "}`, last2},
		{`{"session_key": "` + tgKey + `", "limit": "2.0"}`, all}, // int("2.0") fails: default
		{`{"session_key": "` + tgKey + `", "limit": 999}`, all},
		{`{"session_key": "` + tgKey + `", "limit": "abc"}`, all},
		{`{"session_key": "` + tgKey + `", "limit": [1]}`, all},
	} {
		golden(t, call(t, tl, MessagesRead, c.args), false, c.want)
	}
	// An ISO text timestamp stays text.
	res := call(t, tl, MessagesRead, `{"session_key": "`+dcKey+`", "limit": 1}`)
	if !strings.Contains(res.Text, `"timestamp": "2026-03-29T12:30:00"`) {
		t.Errorf("ISO timestamp not returned as stored:\n%s", res.Text)
	}
	golden(t, call(t, tl, MessagesRead, `{"session_key": "x"}`), true, `{"error": "Conversation not found: x"}`)
}

func TestMessagesReadMinimalSchema(t *testing.T) {
	t.Parallel()
	// The agent's minimal test database with sessions.json: multipart bare
	// JSON content, ISO timestamps, the system message skipped.
	tl := &Tools{Store: openStore(t, home(t, "minimal", true, false))}
	golden(t, call(t, tl, MessagesRead, `{"session_key": "`+tgKey+`"}`), false, `{
  "session_key": "agent:main:telegram:dm:123456",
  "count": 2,
  "total_in_session": 2,
  "messages": [
    {
      "id": "1",
      "role": "user",
      "content": "Hello from Alice",
      "timestamp": "2026-03-29T12:00:00"
    },
    {
      "id": "2",
      "role": "assistant",
      "content": "Hi Alice",
      "timestamp": "2026-03-29T12:00:05.500000"
    }
  ]
}`)
	golden(t, call(t, tl, AttachmentsFetch, `{"session_key": "`+tgKey+`", "message_id": "2"}`), false, `{
  "message_id": "2",
  "count": 1,
  "attachments": [
    {
      "type": "image",
      "url": "https://example.com/a.png"
    }
  ]
}`)
}

func TestMessagesReadTruncatesAndEscapes(t *testing.T) {
	t.Parallel()
	dir := home(t, "current", false, false)
	// A long message with non-ASCII text, appended the way the agent does.
	long := strings.Repeat("é", 1500) + strings.Repeat("😀", 1000)
	script := `import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('tg1', 'assistant', ?, 1774785700.5)", (sys.argv[2],))
db.commit()`
	cmd := execPython(t, script, filepath.Join(dir, store.DBFile), long)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("append: %v\n%s", err, out)
	}
	tl := &Tools{Store: openStore(t, dir)}
	res := call(t, tl, MessagesRead, `{"session_key": "`+tgKey+`", "limit": 1}`)
	want := `"content": "` + strings.Repeat(`\u00e9`, 1500) + strings.Repeat(`\ud83d\ude00`, 500) + `"`
	if !strings.Contains(res.Text, want) {
		t.Errorf("content not cut to 2000 characters and escaped as Python does:\n%.300s", res.Text)
	}
}

func TestMessagesReadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	index := `{"k:nosid": {"session_id": "", "platform": "telegram"},
	           "k:sid": {"session_id": "s1", "platform": "telegram"}}`
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(store.IndexFile)), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	tl := &Tools{Store: openStore(t, dir)}
	for _, name := range []string{MessagesRead, AttachmentsFetch} {
		golden(t, call(t, tl, name, `{"session_key": "k:nosid", "message_id": "1"}`), true,
			`{"error": "No session ID for this conversation"}`)
		// No state.db at all.
		golden(t, call(t, tl, name, `{"session_key": "k:sid", "message_id": "1"}`), true,
			`{"error": "Session database unavailable"}`)
	}
	// A state.db that is not a database.
	if err := os.WriteFile(filepath.Join(dir, store.DBFile), []byte(strings.Repeat("not sqlite ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	tl2 := &Tools{Store: openStore(t, dir)}
	res := call(t, tl2, MessagesRead, `{"session_key": "k:sid"}`)
	if !res.IsError || !strings.HasPrefix(res.Text, `{"error": "Failed to read messages: `) {
		t.Errorf("corrupt state.db: %s", res.Text)
	}
}

func TestAttachmentsFetch(t *testing.T) {
	t.Parallel()
	tl := &Tools{Store: openStore(t, home(t, "current", false, false))}
	golden(t, call(t, tl, AttachmentsFetch, `{"session_key": "`+tgKey+`", "message_id": "3"}`), false, `{
  "message_id": "3",
  "count": 3,
  "attachments": [
    {
      "type": "image",
      "url": "https://example.com/chart.png"
    },
    {
      "type": "file",
      "data": {
        "type": "file",
        "file": {
          "name": "a.csv"
        }
      }
    },
    {
      "type": "media",
      "path": "files/report.pdf"
    }
  ]
}`)
	golden(t, call(t, tl, AttachmentsFetch, `{"session_key": "`+tgKey+`", "message_id": "2"}`), false,
		"{\n  \"message_id\": \"2\",\n  \"count\": 0,\n  \"attachments\": []\n}")
	// A number where the schema says string is read as its text (the
	// value was dropped: "Message not found: ").
	golden(t, call(t, tl, AttachmentsFetch, `{"session_key": "`+tgKey+`", "message_id": 2}`), false,
		"{\n  \"message_id\": \"2\",\n  \"count\": 0,\n  \"attachments\": []\n}")
	// A tool message is still a message of the session.
	golden(t, call(t, tl, AttachmentsFetch, `{"session_key": "`+tgKey+`", "message_id": "4"}`), false,
		"{\n  \"message_id\": \"4\",\n  \"count\": 0,\n  \"attachments\": []\n}")
	for _, id := range []string{"999", "03", "", "5"} { // 5 is inactive (rewound)
		golden(t, call(t, tl, AttachmentsFetch, `{"session_key": "`+tgKey+`", "message_id": "`+id+`"}`), true,
			`{"error": "Message not found: `+id+`"}`)
	}
	golden(t, call(t, tl, AttachmentsFetch, `{"session_key": "zz", "message_id": "3"}`), true,
		`{"error": "Conversation not found: zz"}`)
}

func TestChannelsList(t *testing.T) {
	t.Parallel()
	tl := &Tools{Store: openStore(t, home(t, "current", false, true))}
	golden(t, call(t, tl, ChannelsList, `{"platform": "Discord"}`), false, `{
  "count": 2,
  "channels": [
    {
      "target": "discord:789",
      "platform": "discord",
      "name": "#general",
      "chat_type": "group"
    },
    {
      "target": "discord:1234567890123",
      "platform": "discord",
      "name": "#random",
      "chat_type": "channel"
    }
  ]
}`)
	golden(t, call(t, tl, ChannelsList, `{"platform": "slack"}`), false, `{
  "count": 2,
  "channels": [
    {
      "target": "slack",
      "platform": "slack",
      "name": "no id here",
      "chat_type": "channel"
    },
    {
      "target": "slack",
      "platform": "slack",
      "name": "",
      "chat_type": ""
    }
  ]
}`)
	res := call(t, tl, ChannelsList, "")
	if !strings.HasPrefix(res.Text, "{\n  \"count\": 5,") {
		t.Errorf("all channels:\n%s", res.Text)
	}
	// Without channel_directory.json: the session index's chats.
	fallback := &Tools{Store: openStore(t, home(t, "current", false, false))}
	golden(t, call(t, fallback, ChannelsList, ""), false, `{
  "count": 2,
  "channels": [
    {
      "target": "discord:789",
      "platform": "discord",
      "name": "#general",
      "chat_type": "group"
    },
    {
      "target": "telegram:123456",
      "platform": "telegram",
      "name": "Alice",
      "chat_type": "dm"
    }
  ]
}`)
	golden(t, call(t, &Tools{}, ChannelsList, ""), false, "{\n  \"count\": 0,\n  \"channels\": []\n}")
}

func TestPermissions(t *testing.T) {
	t.Parallel()
	st := openStore(t, home(t, "current", false, false))
	tl := &Tools{Store: st}
	golden(t, call(t, tl, PermissionsListOpen, ""), false, "{\n  \"count\": 0,\n  \"approvals\": []\n}")
	for _, a := range []store.Approval{
		{ID: "ap2", Kind: store.KindPlugin, Description: "install \"x\"", SessionKey: dcKey, CreatedAt: 1774785700.5},
		{ID: "ap1", Kind: store.KindExec, Description: "rm -rf build/", SessionKey: tgKey, CreatedAt: 1774785600},
	} {
		if _, err := st.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, call(t, tl, PermissionsListOpen, ""), false, `{
  "count": 2,
  "approvals": [
    {
      "id": "ap1",
      "kind": "exec",
      "description": "rm -rf build/",
      "session_key": "agent:main:telegram:dm:123456",
      "created_at": 1774785600.0
    },
    {
      "id": "ap2",
      "kind": "plugin",
      "description": "install \"x\"",
      "session_key": "agent:main:discord:group:789:456",
      "created_at": 1774785700.5
    }
  ]
}`)
	golden(t, call(t, tl, PermissionsRespond, `{"id": "ap1", "decision": "maybe"}`), true,
		`{"error": "Invalid decision: maybe. Must be allow-once, allow-always, or deny"}`)
	golden(t, call(t, tl, PermissionsRespond, `{"id": "ap1", "decision": "allow-once"}`), false,
		"{\n  \"resolved\": true,\n  \"approval_id\": \"ap1\",\n  \"decision\": \"allow-once\"\n}")
	// A second decision of the same approval fails saying which decision
	// stands (the original said "Approval not found"), an unknown id is not
	// found; the original dumps this error with indent=2.
	golden(t, call(t, tl, PermissionsRespond, `{"id": "ap1", "decision": "deny"}`), true,
		"{\n  \"error\": \"Approval ap1 was already decided (allow-once); only open approvals can be answered: list them with permissions_list_open\"\n}")
	golden(t, call(t, tl, PermissionsRespond, `{"id": "nope", "decision": "deny"}`), true,
		"{\n  \"error\": \"Approval not found: nope\"\n}")
	res := call(t, tl, PermissionsListOpen, "")
	if !strings.HasPrefix(res.Text, "{\n  \"count\": 1,") || strings.Contains(res.Text, `"ap1"`) {
		t.Errorf("after deciding ap1:\n%s", res.Text)
	}
}

// Without state.db there are no approvals: an id is not found, as in the
// original, rather than a failure to record.
func TestPermissionsRespondWithoutDB(t *testing.T) {
	t.Parallel()
	tl := &Tools{Store: openStore(t, home(t, "", false, false))}
	golden(t, call(t, tl, PermissionsRespond, `{"id": "ap1", "decision": "deny"}`), true,
		"{\n  \"error\": \"Approval not found: ap1\"\n}")
}

func TestPermissionsRespondConcurrent(t *testing.T) {
	t.Parallel()
	st := openStore(t, home(t, "current", false, false))
	if _, err := st.CreateApproval(ctx, store.Approval{ID: "race", Kind: store.KindExec}); err != nil {
		t.Fatal(err)
	}
	tl := &Tools{Store: st}
	var wg sync.WaitGroup
	results := make([]*Result, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := tl.Call(ctx, PermissionsRespond, json.RawMessage(`{"id": "race", "decision": "deny"}`))
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = res
		}()
	}
	wg.Wait()
	ok := 0
	for _, r := range results {
		if r != nil && !r.IsError {
			ok++
		}
	}
	if ok != 1 {
		t.Errorf("%d of %d concurrent decisions succeeded, want 1", ok, len(results))
	}
}

// fakeEvents is an in-memory Events.
type fakeEvents struct {
	events []json.RawMessage // cursor i+1
	keys   []string
	// waited records the arguments of Wait.
	mu       sync.Mutex
	waitArgs []string
}

func (f *fakeEvents) add(key, data string) {
	cursor := len(f.events) + 1
	ev := `{"cursor": ` + strconv.Itoa(cursor) + `, "type": "message", "session_key": "` + key + `"` + data + `}`
	f.events = append(f.events, json.RawMessage(ev))
	f.keys = append(f.keys, key)
}

func (f *fakeEvents) Poll(after int64, key string, limit int) ([]json.RawMessage, int64) {
	var out []json.RawMessage
	next := after
	for i, ev := range f.events {
		if int64(i+1) > after && (key == "" || f.keys[i] == key) && len(out) < limit {
			out = append(out, ev)
			next = int64(i + 1)
		}
	}
	return out, next
}

func (f *fakeEvents) Wait(ctx context.Context, after int64, key string, timeout time.Duration) (json.RawMessage, error) {
	f.mu.Lock()
	f.waitArgs = append(f.waitArgs, strconv.Itoa(int(after))+" "+key+" "+timeout.String())
	f.mu.Unlock()
	if evs, _ := f.Poll(after, key, 1); len(evs) > 0 {
		return evs[0], nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, nil
}

func TestEventsPoll(t *testing.T) {
	t.Parallel()
	f := &fakeEvents{}
	f.add(tgKey, `, "role": "user", "content": "h\u00e9llo <b>", "timestamp": "1774785602.0", "message_id": "2"`)
	f.add(dcKey, `, "role": "assistant", "content": "hi", "timestamp": "2026-03-29T12:30:00", "message_id": "8"`)
	f.add(tgKey, `, "role": "user", "content": "x", "timestamp": "1.5", "message_id": "9"`)
	tl := &Tools{Events: f}
	golden(t, call(t, tl, EventsPoll, `{"session_key": "`+tgKey+`"}`), false, `{
  "events": [
    {
      "cursor": 1,
      "type": "message",
      "session_key": "agent:main:telegram:dm:123456",
      "role": "user",
      "content": "h\u00e9llo <b>",
      "timestamp": "1774785602.0",
      "message_id": "2"
    },
    {
      "cursor": 3,
      "type": "message",
      "session_key": "agent:main:telegram:dm:123456",
      "role": "user",
      "content": "x",
      "timestamp": "1.5",
      "message_id": "9"
    }
  ],
  "next_cursor": 3
}`)
	res := call(t, tl, EventsPoll, `{"after_cursor": 1, "limit": 0}`) // limit clamped to 1
	if !strings.Contains(res.Text, `"cursor": 2,`) || strings.Contains(res.Text, `"cursor": 3`) || !strings.HasSuffix(res.Text, "\"next_cursor\": 2\n}") {
		t.Errorf("after 1, limit 1:\n%s", res.Text)
	}
	for _, args := range []string{`{"after_cursor": 3}`, `{"after_cursor": 1e30}`, `{"after_cursor": "99999999999999999999999"}`} {
		res := call(t, tl, EventsPoll, args)
		after := "3"
		if args != `{"after_cursor": 3}` {
			after = "1000000000000000000" // clamped to 10**18
		}
		golden(t, res, false, "{\n  \"events\": [],\n  \"next_cursor\": "+after+"\n}")
	}
	golden(t, call(t, tl, EventsPoll, `{"after_cursor": -7, "limit": "abc", "session_key": "`+dcKey+`"}`), false, `{
  "events": [
    {
      "cursor": 2,
      "type": "message",
      "session_key": "agent:main:discord:group:789:456",
      "role": "assistant",
      "content": "hi",
      "timestamp": "2026-03-29T12:30:00",
      "message_id": "8"
    }
  ],
  "next_cursor": 2
}`)
	golden(t, call(t, &Tools{}, EventsPoll, `{"after_cursor": 5}`), false, "{\n  \"events\": [],\n  \"next_cursor\": 5\n}")
}

func TestEventsWait(t *testing.T) {
	t.Parallel()
	f := &fakeEvents{}
	f.add(tgKey, `, "role": "user", "content": "hello", "timestamp": "1774785602.0", "message_id": "2"`)
	tl := &Tools{Events: f}
	golden(t, call(t, tl, EventsWait, ""), false, `{
  "event": {
    "cursor": 1,
    "type": "message",
    "session_key": "agent:main:telegram:dm:123456",
    "role": "user",
    "content": "hello",
    "timestamp": "1774785602.0",
    "message_id": "2"
  }
}`)
	timeout := "{\n  \"event\": null,\n  \"reason\": \"timeout\"\n}"
	golden(t, call(t, tl, EventsWait, `{"after_cursor": 1, "timeout_ms": 999999999}`), false, timeout)
	golden(t, call(t, tl, EventsWait, `{"after_cursor": "1", "timeout_ms": -1, "session_key": "x"}`), false, timeout)
	golden(t, call(t, tl, EventsWait, `{"after_cursor": 1, "timeout_ms": "soon"}`), false, timeout)
	want := []string{"0  30s", "1  5m0s", "1 x 0s", "1  30s"}
	if strings.Join(f.waitArgs, "|") != strings.Join(want, "|") {
		t.Errorf("Wait arguments %q, want %q", f.waitArgs, want)
	}
	golden(t, call(t, &Tools{}, EventsWait, ""), false, timeout)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tl.Call(cctx, EventsWait, json.RawMessage(`{"after_cursor": 1}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
}

// telegramFake is a loopback Bot API: sendMessage answers message_id 42
// for the token "good" and 401 for any other.
type telegramFake struct {
	mu   sync.Mutex
	sent []map[string]any
}

func (f *telegramFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/sendMessage") {
		http.NotFound(w, r)
		return
	}
	if r.URL.Path != "/botgood/sendMessage" {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.sent = append(f.sent, body)
	f.mu.Unlock()
	io.WriteString(w, `{"ok":true,"result":{"message_id":42}}`)
}

type recorded struct {
	target, text string
	res          *send.Result
}

type fakeRecorder struct {
	calls []recorded
	err   error
}

func (r *fakeRecorder) RecordSent(_ context.Context, target, text string, res *send.Result) error {
	r.calls = append(r.calls, recorded{target, text, res})
	return r.err
}

func TestMessagesSend(t *testing.T) {
	t.Parallel()
	fake := &telegramFake{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	rec := &fakeRecorder{}
	tl := &Tools{
		Sender:   &send.Sender{Env: map[string]string{send.TelegramTokenVar: "good"}, TelegramBaseURL: srv.URL},
		Recorder: rec,
	}
	golden(t, call(t, tl, MessagesSend, `{"target": "telegram:123456", "message": "héllo"}`), false,
		`{"success": true, "platform": "telegram", "chat_id": "123456", "message_id": "42"}`)
	if len(fake.sent) != 1 || fake.sent[0]["text"] != "héllo" || fake.sent[0]["chat_id"] != float64(123456) {
		t.Errorf("delivered %v", fake.sent)
	}
	if len(rec.calls) != 1 || rec.calls[0].target != "telegram:123456" || rec.calls[0].text != "héllo" || rec.calls[0].res.MessageID() != "42" {
		t.Errorf("recorded %+v", rec.calls)
	}
	// A failing recorder does not change the result: the message was sent.
	rec.err = errors.New("disk full")
	var logged []string
	tl.Logf = func(format string, args ...any) { logged = append(logged, format) }
	golden(t, call(t, tl, MessagesSend, `{"target": "telegram:1", "message": "x"}`), false,
		`{"success": true, "platform": "telegram", "chat_id": "1", "message_id": "42"}`)
	if len(logged) != 1 {
		t.Errorf("recorder error logged %d times", len(logged))
	}

	for _, args := range []string{`{"target": "telegram:1"}`, `{"message": "x"}`, `{"target": "", "message": "x"}`, `{}`, ``} {
		golden(t, call(t, tl, MessagesSend, args), true, `{"error": "Both target and message are required"}`)
	}
	golden(t, call(t, &Tools{}, MessagesSend, `{"target": "telegram:1", "message": "x"}`), true,
		`{"error": "Send message tool not available"}`)

	// Refused token, no credentials, unknown platform: "Send failed: <e>",
	// never the token.
	bad := &Tools{Sender: &send.Sender{Env: map[string]string{send.TelegramTokenVar: "sekrit-token"}, TelegramBaseURL: srv.URL}}
	for _, c := range []struct {
		tl     *Tools
		target string
		want   string
	}{
		{bad, "telegram:1", "401"},
		{bad, "discord:1", "DISCORD_BOT_TOKEN"},
		{bad, "fax:1", "unknown platform"},
	} {
		res := call(t, c.tl, MessagesSend, `{"target": "`+c.target+`", "message": "x"}`)
		if !res.IsError || !strings.HasPrefix(res.Text, `{"error": "Send failed: `) || !strings.Contains(res.Text, c.want) {
			t.Errorf("%s: %s", c.target, res.Text)
		}
		if strings.Contains(res.Text, "sekrit") {
			t.Errorf("%s: the token is in the error: %s", c.target, res.Text)
		}
	}
	if len(fake.sent) != 2 {
		t.Errorf("%d messages delivered, want 2", len(fake.sent))
	}
}

func TestCallErrors(t *testing.T) {
	t.Parallel()
	tl := &Tools{}
	if _, err := tl.Call(ctx, "nope", nil); !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown tool: %v", err)
	}
	for _, args := range []string{`[1]`, `"x"`, `{`} {
		if _, err := tl.Call(ctx, ConversationsList, json.RawMessage(args)); err == nil || !strings.Contains(err.Error(), ConversationsList) {
			t.Errorf("arguments %s: %v", args, err)
		}
	}
	// Without a store: nothing found, as the original with no index.
	golden(t, call(t, tl, ConversationsList, ""), false, "{\n  \"count\": 0,\n  \"conversations\": []\n}")
	golden(t, call(t, tl, MessagesRead, `{"session_key": "k"}`), true, `{"error": "Conversation not found: k"}`)
	golden(t, call(t, tl, PermissionsListOpen, ""), false, "{\n  \"count\": 0,\n  \"approvals\": []\n}")
	golden(t, call(t, tl, PermissionsRespond, `{"id": "a", "decision": "deny"}`), true, "{\n  \"error\": \"Approval not found: a\"\n}")
}
