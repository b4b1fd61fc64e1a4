package store

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/statedb"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
)

func ptr(s string) *string { return &s }

func TestSessionsCurrentSchema(t *testing.T) {
	s := open(t, home(t, "current", true))
	entries, src, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if src != SourceDB {
		t.Fatalf("source = %q, want state.db (its gateway rows win over sessions.json)", src)
	}
	for i := range entries {
		entries[i].LastActive = Timestamp{} // compared through UpdatedAt
	}
	want := []Entry{
		{
			SessionKey: "agent:main:discord:group:789:456", SessionID: "dc1", Platform: "discord",
			ChatType: "group", DisplayName: "#general",
			Origin:    Origin{Platform: "discord", ChatID: "789", ChatType: "group", UserID: "456", ThreadID: ptr("t9")},
			CreatedAt: "2026-03-29T12:01:00", UpdatedAt: "2026-03-29T12:30:00",
			InputTokens: 10, OutputTokens: 5, TotalTokens: 15,
		},
		{
			SessionKey: "agent:main:telegram:dm:123456", SessionID: "tg1", Platform: "telegram",
			ChatType: "dm", DisplayName: "Alice",
			Origin: Origin{Platform: "telegram", ChatID: "123456", ChatName: "Alice", ChatType: "dm",
				UserID: "123456", UserName: "Alice"},
			CreatedAt: "2026-03-29T12:00:00", UpdatedAt: "2026-03-29T12:00:07.250000",
			InputTokens: 50000, OutputTokens: 2000, TotalTokens: 52000,
		},
	}
	if !reflect.DeepEqual(entries, want) {
		t.Fatalf("sessions:\n got %+v\nwant %+v", entries, want)
	}
	e, found, err := s.Session(ctx, "agent:main:slack:group:C1234:U5678")
	if err != nil || found {
		t.Fatalf("ended session: found=%v %+v err=%v, want not listed", found, e, err)
	}
}

func TestMessagesCurrentSchema(t *testing.T) {
	s := open(t, home(t, "current", false))
	msgs, err := s.Messages(ctx, "tg1")
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
		if m.Text == "this was rewound" {
			t.Errorf("inactive message %d returned", m.ID)
		}
	}
	if want := []string{"system", "user", "assistant", "tool", "assistant", "user"}; !reflect.DeepEqual(roles, want) {
		t.Fatalf("roles = %v, want %v", roles, want)
	}
	var seen []string
	var multipart Message
	for _, m := range msgs {
		if m.Conversational() {
			seen = append(seen, m.Text)
		}
		if len(m.Parts) > 0 {
			multipart = m
		}
	}
	if want := []string{"hello", "here is the chart\nMEDIA: files/report.pdf", "thanks"}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("conversational texts = %q, want %q", seen, want)
	}
	att, _ := json.Marshal(Attachments(multipart))
	if want := `[{"type":"image","url":"https://example.com/chart.png"},{"type":"file","data":{"type":"file","file":{"name":"a.csv"}}},{"type":"media","path":"files/report.pdf"}]`; string(att) != want {
		t.Fatalf("attachments = %s\nwant %s", att, want)
	}
	ts, _ := json.Marshal(msgs[len(msgs)-1].Timestamp)
	if string(ts) != "1774785607.25" {
		t.Errorf("float timestamp JSON = %s, want 1774785607.25", ts)
	}
	got, found, err := s.Message(ctx, "tg1", multipart.ID)
	if err != nil || !found || got.Text != multipart.Text {
		t.Fatalf("Message(%d) = %+v %v %v", multipart.ID, got, found, err)
	}
	if _, found, err := s.Message(ctx, "dc1", multipart.ID); err != nil || found {
		t.Fatalf("message of another session found=%v err=%v, want not found", found, err)
	}

	dc, err := s.Messages(ctx, "dc1")
	if err != nil {
		t.Fatal(err)
	}
	if len(dc) != 2 || dc[1].Timestamp.Raw != "2026-03-29T12:30:00" || dc[1].Timestamp.Unix() != 1774785600+1800 {
		t.Fatalf("ISO timestamp message = %+v", dc)
	}
	if ts, _ := json.Marshal(dc[1].Timestamp); string(ts) != `"2026-03-29T12:30:00"` {
		t.Errorf("ISO timestamp JSON = %s, want the stored text", ts)
	}
	if none, err := s.Messages(ctx, "no-such-session"); err != nil || len(none) != 0 {
		t.Fatalf("unknown session: %v %v", none, err)
	}
}

func TestMessagesAfterAndChanges(t *testing.T) {
	dir := home(t, "current", false)
	s := open(t, dir)
	all, err := s.MessagesAfter(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 9 { // 10 rows, one inactive
		t.Fatalf("MessagesAfter(0) = %d messages, want 9", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID <= all[i-1].ID {
			t.Fatalf("not in id order: %d after %d", all[i].ID, all[i-1].ID)
		}
	}
	last := all[len(all)-1].ID
	if more, err := s.MessagesAfter(ctx, last, 0); err != nil || len(more) != 0 {
		t.Fatalf("MessagesAfter(last) = %v %v, want none", more, err)
	}
	if two, err := s.MessagesAfter(ctx, 0, 2); err != nil || len(two) != 2 {
		t.Fatalf("limit 2: %d %v", len(two), err)
	}
	m1, err := s.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m1.MaxMessageID != last {
		t.Fatalf("MaxMessageID = %d, want %d", m1.MaxMessageID, last)
	}
	if m2, err := s.Changes(ctx); err != nil || m2 != m1 {
		t.Fatalf("no write: mark %+v -> %+v (%v), want unchanged", m1, m2, err)
	}
	fixture.MakeStateDB(t, "append", filepath.Join(dir, DBFile), "tg1", "2")
	m3, err := s.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m3.DataVersion == m1.DataVersion || m3.MaxMessageID != last+2 {
		t.Fatalf("after 2 appends: mark %+v -> %+v, want a new data version and max id %d", m1, m3, last+2)
	}
	// The store's own approval writes move the mark too.
	if _, err := s.CreateApproval(ctx, Approval{Kind: KindExec}); err != nil {
		t.Fatal(err)
	}
	if m4, err := s.Changes(ctx); err != nil || m4.DataVersion == m3.DataVersion {
		t.Fatalf("after an approval: mark %+v -> %+v (%v), want a new data version", m3, m4, err)
	}
}

func TestMarchSchema(t *testing.T) {
	s := open(t, home(t, "march", true))
	entries, src, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if src != SourceJSON || len(entries) != 3 {
		t.Fatalf("source %q, %d entries; want the 3 of sessions.json (no session_key column)", src, len(entries))
	}
	msgs, err := s.Messages(ctx, "20260329_120000_abc123")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[1].Text != "a\nb" || msgs[0].Timestamp.Unix() != 1774785601 {
		t.Fatalf("March messages = %+v", msgs)
	}
}

func TestMinimalTestDB(t *testing.T) {
	s := open(t, home(t, "minimal", true))
	msgs, err := s.Messages(ctx, "20260329_120000_abc123")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3", len(msgs))
	}
	if msgs[0].Timestamp.Raw != "2026-03-29T12:00:00" || msgs[0].Timestamp.Unix() != 1774785600 {
		t.Errorf("ISO timestamp = %+v", msgs[0].Timestamp)
	}
	if msgs[1].Timestamp.Unix() != 1774785605.5 {
		t.Errorf("ISO timestamp with fraction = %v", msgs[1].Timestamp.Unix())
	}
	if msgs[1].Text != "Hi Alice" {
		t.Errorf("bare JSON multipart text = %q", msgs[1].Text)
	}
	att, _ := json.Marshal(Attachments(msgs[1]))
	if string(att) != `[{"type":"image","url":"https://example.com/a.png"}]` {
		t.Errorf("attachments = %s", att)
	}
	if _, src, err := s.Sessions(ctx); err != nil || src != SourceJSON {
		t.Fatalf("sessions source %q %v, want sessions.json", src, err)
	}
}

func TestSessionsJSON(t *testing.T) {
	s := open(t, home(t, "", true))
	entries, src, err := s.Sessions(ctx)
	if err != nil || src != SourceJSON {
		t.Fatalf("%q %v", src, err)
	}
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.SessionKey)
	}
	want := []string{"agent:main:discord:group:789:456", "agent:main:telegram:dm:123456", "agent:main:slack:group:C1234:U5678"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys = %q, want %q (by updated_at, no _README, no non-object)", keys, want)
	}
	d := entries[0]
	if d.InputTokens != 12 || d.OutputTokens != 3 || d.Origin.ChatID != "789" || *d.Origin.ThreadID != "t1" || d.Origin.UserName != "Bob" {
		t.Errorf("lenient fields: %+v", d)
	}
	if sl := entries[2]; sl.Platform != "" || sl.Origin != (Origin{}) || sl.SessionID != "20260328_080000_ghi789" {
		t.Errorf("wrong-typed fields: %+v", sl)
	}
	tg := entries[1]
	if tg.TotalTokens != 52000 || tg.Origin.ThreadID != nil || tg.DisplayName != "Alice" {
		t.Errorf("telegram entry: %+v", tg)
	}
}

func TestMissingHomeAndDB(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := Open(missing); !errors.Is(err, ErrNoHome) || !strings.Contains(err.Error(), "HERMES_HOME") {
		t.Fatalf("Open(missing) = %v, want ErrNoHome naming HERMES_HOME", err)
	}
	dir := t.TempDir()
	s := open(t, dir)
	if entries, src, err := s.Sessions(ctx); err != nil || len(entries) != 0 || src != SourceNone {
		t.Fatalf("empty home: %v %q %v", entries, src, err)
	}
	_, err := s.Messages(ctx, "x")
	if !errors.Is(err, ErrNoDatabase) || !strings.Contains(err.Error(), s.DBPath()) {
		t.Fatalf("Messages without state.db = %v, want ErrNoDatabase naming the path", err)
	}
	if _, err := s.Respond(ctx, "x", DecisionDeny); !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("Respond without state.db = %v", err)
	}
	if _, err := os.Stat(s.DBPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("state.db was created: %v", err)
	}
	// With the index only, the fallback still works.
	fixture.CopyFile(t, filepath.Join("testdata", "sessions.json"), filepath.Join(dir, filepath.FromSlash(IndexFile)))
	if entries, src, err := s.Sessions(ctx); err != nil || len(entries) != 3 || src != SourceJSON {
		t.Fatalf("index only: %d %q %v", len(entries), src, err)
	}
}

func TestCorruptDB(t *testing.T) {
	dir := home(t, "", true)
	if err := os.WriteFile(filepath.Join(dir, DBFile), []byte(strings.Repeat("not a database ", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	entries, src, err := s.Sessions(ctx)
	if err != nil || src != SourceJSON || len(entries) != 3 {
		t.Fatalf("corrupt state.db: %d %q %v, want the sessions.json fallback", len(entries), src, err)
	}
	if _, err := s.Messages(ctx, "x"); err == nil {
		t.Fatal("Messages of a corrupt state.db: no error")
	}
	if _, err := s.Changes(ctx); err == nil {
		t.Fatal("Changes of a corrupt state.db: no error")
	}
	if _, err := s.Respond(ctx, "x", DecisionDeny); err == nil {
		t.Fatal("Respond on a corrupt state.db: no error")
	}
}

func TestChannels(t *testing.T) {
	dir := home(t, "current", false)
	s := open(t, dir)
	// No directory: from the session index.
	got, err := s.Channels(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Channel{
		{Target: "discord:789", Platform: "discord", Name: "#general", ChatType: "group"},
		{Target: "telegram:123456", Platform: "telegram", Name: "Alice", ChatType: "dm"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fallback channels:\n got %+v\nwant %+v", got, want)
	}
	fixture.CopyFile(t, filepath.Join("testdata", "channel_directory.json"), filepath.Join(dir, DirectoryFile))
	got, err = s.Channels(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want = []Channel{
		{Target: "telegram:123456", Platform: "telegram", Name: "Alice", ChatType: "dm"},
		{Target: "discord:789", Platform: "discord", Name: "#general", ChatType: "group"},
		{Target: "discord:1234567890123", Platform: "discord", Name: "#random", ChatType: "channel"},
		{Target: "slack", Platform: "slack", Name: "no id here", ChatType: "channel"},
		{Target: "slack", Platform: "slack"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("directory channels:\n got %+v\nwant %+v", got, want)
	}
	got, err = s.Channels(ctx, "DISCORD")
	if err != nil || len(got) != 2 {
		t.Fatalf("platform filter: %+v %v", got, err)
	}
}

func TestSizeLimits(t *testing.T) {
	big := make([]byte, MaxIndexFileSize+1)
	if _, err := ParseIndex(big); err == nil || !strings.Contains(err.Error(), "MaxIndexFileSize") {
		t.Fatalf("ParseIndex(too big) = %v, want an error naming MaxIndexFileSize", err)
	}
	if _, err := ParseDirectory(big); err == nil || !strings.Contains(err.Error(), "MaxDirectoryFileSize") {
		t.Fatalf("ParseDirectory(too big) = %v, want an error naming MaxDirectoryFileSize", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.FromSlash(IndexFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxIndexFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := open(t, dir)
	if _, _, err := s.Sessions(ctx); err == nil || !strings.Contains(err.Error(), "MaxIndexFileSize") {
		t.Fatalf("Sessions with a huge sessions.json = %v, want an error naming MaxIndexFileSize", err)
	}
	if _, err := ParseIndex([]byte(`[1,2]`)); err == nil {
		t.Fatal("ParseIndex of a list: no error")
	}
}

func TestTimestamps(t *testing.T) {
	for _, tc := range []struct {
		in   any
		unix float64
		json string
		iso  string
		str  string // Python's str() of the stored value, as events carry it
	}{
		{1774785600.5, 1774785600.5, "1774785600.5", "2026-03-29T12:00:00.500000", "1774785600.5"},
		{1774785600.0, 1774785600, "1774785600.0", "2026-03-29T12:00:00", "1774785600.0"},
		{int64(1774785600), 1774785600, "1774785600", "2026-03-29T12:00:00", "1774785600"},
		{"2026-03-29T12:00:00", 1774785600, `"2026-03-29T12:00:00"`, "2026-03-29T12:00:00", "2026-03-29T12:00:00"},
		{"2026-03-29 12:00:00+02:00", 1774785600 - 7200, `"2026-03-29 12:00:00+02:00"`, "2026-03-29T10:00:00", "2026-03-29 12:00:00+02:00"},
		{"1774785600.25", 1774785600.25, `"1774785600.25"`, "2026-03-29T12:00:00.250000", "1774785600.25"},
		{[]byte("2026-03-29"), 1774742400, `"2026-03-29"`, "2026-03-29T00:00:00", "2026-03-29"},
		{"garbage", 0, `"garbage"`, "", "garbage"},
		{nil, 0, `""`, "", ""},
		{1e300, 0, "1e+300", "", "1e+300"},
		{math.Inf(-1), 0, `""`, "", "-inf"},
	} {
		ts := NewTimestamp(tc.in)
		j, err := json.Marshal(ts)
		if err != nil || string(j) != tc.json || ts.Unix() != tc.unix || ts.ISO() != tc.iso || ts.String() != tc.str {
			t.Errorf("NewTimestamp(%v): json %s (%v) unix %v iso %q str %q; want %s %v %q %q", tc.in, j, err, ts.Unix(), ts.ISO(), ts.String(), tc.json, tc.unix, tc.iso, tc.str)
		}
	}
}

func TestDecodeContent(t *testing.T) {
	for _, tc := range []struct {
		in    any
		text  string
		parts int
	}{
		{"plain", "plain", 0},
		{nil, "", 0},
		{statedb.ContentJSONPrefix + `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "a\nb", 0},
		{statedb.ContentJSONPrefix + `"just text"`, "just text", 0},
		{statedb.ContentJSONPrefix + `{"type":"image","url":"u"}`, "", 1},
		{statedb.ContentJSONPrefix + `[1, "x", {"type":"audio"}]`, "", 1},
		{statedb.ContentJSONPrefix + `not json`, statedb.ContentJSONPrefix + "not json", 0},
		{`[1, 2]`, "[1, 2]", 0},                  // bare JSON that is not typed parts stays text
		{`[{"a":1}]`, `[{"a":1}]`, 0},            // no "type"
		{`[]`, `[]`, 0},                          // empty list
		{`[{"type":"text","text":"x"}]`, "x", 0}, // bare typed parts
		{[]byte("bytes"), "bytes", 0},
		{int64(42), "42", 0},
	} {
		text, parts := statedb.DecodeContent(tc.in)
		if text != tc.text || len(parts) != tc.parts {
			t.Errorf("decodeContent(%q) = %q, %d parts; want %q, %d", tc.in, text, len(parts), tc.text, tc.parts)
		}
	}
}

// TestOddHomePath opens a state.db whose path needs escaping in a file:
// URI.
func TestOddHomePath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a b?c#d%20é")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fixture.MakeStateDB(t, "current", filepath.Join(dir, DBFile))
	s := open(t, dir)
	msgs, err := s.Messages(ctx, "tg1")
	if err != nil || len(msgs) != 6 {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	if _, err := s.CreateApproval(ctx, Approval{Kind: KindExec}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil || len(entries) != 1 {
		t.Fatalf("files next to the home: %v %v, want the home only (no database opened elsewhere)", entries, err)
	}
}

// A message over MaxContentBytes is read cut to the bound, in every query
// that reads messages; the rows around it are read whole.
func TestContentBounded(t *testing.T) {
	dir := home(t, "current", false)
	fixture.MakeStateDB(t, "huge", filepath.Join(dir, DBFile), "tg1", strconv.Itoa(MaxContentBytes+1000))
	s := open(t, dir)
	msgs, err := s.Messages(ctx, "tg1")
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if len(last.Text) != MaxContentBytes || strings.Trim(last.Text, "x") != "" {
		t.Fatalf("the huge message read as %d bytes, want %d", len(last.Text), MaxContentBytes)
	}
	for _, m := range msgs[:len(msgs)-1] {
		if len(m.Text) >= MaxContentBytes {
			t.Fatalf("message %d cut too: %d bytes", m.ID, len(m.Text))
		}
	}
	after, err := s.MessagesAfter(ctx, last.ID-1, 10)
	if err != nil || len(after) != 1 || len(after[0].Text) != MaxContentBytes {
		t.Fatalf("MessagesAfter: %d messages, %v", len(after), err)
	}
	one, found, err := s.Message(ctx, "tg1", last.ID)
	if err != nil || !found || len(one.Text) != MaxContentBytes {
		t.Fatalf("Message: found %v, %d bytes, %v", found, len(one.Text), err)
	}
}
