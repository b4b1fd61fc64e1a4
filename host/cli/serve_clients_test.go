package cli_test

// Tests of `hermes mcp serve` with real external MCP clients: the official
// MCP Inspector's CLI over stdio and over streamable HTTP calls every one
// of the ten tools of the messaging bridge against a HERMES_HOME whose
// state.db Python's sqlite3 wrote, and plain net/http requests prove what
// the HTTP endpoint refuses. The Inspector lists the tools before each call,
// so its SDK client also checks every result's structuredContent against
// the tool's outputSchema; a mismatch fails the call.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testinspector"
	"github.com/hermes-agent/hermes/internal/testproc"
	"github.com/hermes-agent/hermes/internal/testwait"
)

// The ten tools of REFERENCE §10.4.
var serveToolNames = []string{
	"conversations_list", "conversation_get", "messages_read", "attachments_fetch", "events_poll",
	"events_wait", "messages_send", "channels_list", "permissions_list_open", "permissions_respond",
}

// What the fixture (make_state_db.py current) holds.
const (
	serveTGKey     = "agent:main:telegram:dm:123456"
	serveDCKey     = "agent:main:discord:group:789:456"
	serveTGSession = "tg1"
	// serveT0 is the fixture's time origin, float seconds since the epoch.
	serveT0 = 1774785600.0
)

// bridgeFixture is the Python script that writes the bridge's state.db
// fixtures, and the folder of its JSON files.
func bridgeFixture(name string) string {
	return filepath.Join(testbin.Root(), "plugins", "bridge", "internal", "store", "testdata", name)
}

// servePython returns the python3 executable, skipping the test without one
// (failing it under CI=true, which must have it).
func servePython(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 not found; CI=true requires it to write the state.db fixture: install python3")
		}
		t.Skipf("python3 not found; install python3 to run the hermes mcp serve client tests")
	}
	return py
}

// serveRunPython runs python3 with args, failing the test on an error.
func serveRunPython(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(servePython(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3 %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// fakeTelegram is a local Telegram Bot API answering sendMessage.
type fakeTelegram struct {
	srv   *httptest.Server
	token string
	mu    sync.Mutex
	sent  []fakeTelegramMessage
}

type fakeTelegramMessage struct {
	ChatID json.Number `json:"chat_id"`
	Text   string      `json:"text"`
	ID     int
}

func newFakeTelegram(t *testing.T) *fakeTelegram {
	f := &fakeTelegram{token: "123456:fake-bot-token"}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/bot"+f.token+"/sendMessage" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":404,"description":"Not Found"}`)
			return
		}
		var m fakeTelegramMessage
		d := json.NewDecoder(r.Body)
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":400,"description":"Bad Request: not JSON"}`)
			return
		}
		f.mu.Lock()
		m.ID = 100 + len(f.sent)
		f.sent = append(f.sent, m)
		f.mu.Unlock()
		fmt.Fprintf(w, `{"ok":true,"result":{"message_id":%d}}`, m.ID)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeTelegram) messages() []fakeTelegramMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

// serveFixture is a HERMES_HOME for `hermes mcp serve`: the current
// state.db, sessions.json, channel_directory.json, a .env with the bearer
// token of --http and a Telegram bot token, and config.yaml pointing the
// bridge at the fake Telegram.
type serveFixture struct {
	home, token string
	telegram    *fakeTelegram
}

func newServeFixture(t *testing.T) *serveFixture {
	t.Helper()
	// The bridge plugin is what serves the tools; without it the test
	// would fail later with a less clear message.
	testbin.Path(t, "hermes-bridge-messaging")
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(home, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	serveRunPython(t, bridgeFixture("make_state_db.py"), "current", filepath.Join(home, "state.db"))
	serveCopyFile(t, bridgeFixture("sessions.json"), filepath.Join(home, "sessions", "sessions.json"))
	serveCopyFile(t, bridgeFixture("channel_directory.json"), filepath.Join(home, "channel_directory.json"))
	fx := &serveFixture{home: home, token: "serve-test-token-0123456789abcdef", telegram: newFakeTelegram(t)}
	env := "HERMES_MCP_SERVE_TOKEN=" + fx.token + "\nTELEGRAM_BOT_TOKEN=" + fx.telegram.token + "\n"
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, "mcp_serve:\n  messaging:\n    telegram_base_url: "+fx.telegram.srv.URL+"\n")
	return fx
}

// env is the environment of serve and of the Inspector on the fixture:
// hermes's test environment without the caller's own tokens, which would
// win over .env.
func (fx *serveFixture) env(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range hermesTestEnv(t, fx.home) {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HERMES_MCP_SERVE_TOKEN" || k == "TELEGRAM_BOT_TOKEN" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func serveCopyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// appendMessages appends n user messages ("append 0", ...) to the
// session with id session, one commit each, the way the agent writes.
func (fx *serveFixture) appendMessages(t *testing.T, session string, n int) {
	t.Helper()
	serveRunPython(t, bridgeFixture("make_state_db.py"), "append", filepath.Join(fx.home, "state.db"), session, strconv.Itoa(n))
}

// addApproval inserts an undecided approval into mcp_approvals, creating
// the table as the bridge's store does when it is missing.
func (fx *serveFixture) addApproval(t *testing.T, id, kind, description, sessionKey string, createdAt float64) {
	t.Helper()
	const script = `import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
db.executescript("""CREATE TABLE IF NOT EXISTS mcp_approvals (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',
  session_key TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL, decision TEXT, decided_at REAL);
CREATE INDEX IF NOT EXISTS idx_mcp_approvals_open ON mcp_approvals (decision, created_at);""")
db.execute("INSERT INTO mcp_approvals (id, kind, description, session_key, created_at) VALUES (?,?,?,?,?)",
           (sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6])))
db.commit()
db.close()
`
	serveRunPython(t, "-c", script, filepath.Join(fx.home, "state.db"), id, kind, description, sessionKey, strconv.FormatFloat(createdAt, 'f', -1, 64))
}

// serveStderrLog collects a process's stderr while it runs.
type serveStderrLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *serveStderrLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *serveStderrLog) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServeHTTP starts `hermes mcp serve --http 127.0.0.1:0` on home and
// returns the endpoint URL it reports on stderr, and that stderr; the server is stopped when
// the test ends.
func startServeHTTP(t *testing.T, fx *serveFixture, extra ...string) (string, *serveStderrLog) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t, "hermes"), append([]string{"mcp", "serve", "--http", "127.0.0.1:0"}, extra...)...)
	cmd.Env = fx.env(t)
	pr, pw := io.Pipe()
	logs := &serveStderrLog{}
	cmd.Stdout = io.Discard
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = pw.Close()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("hermes mcp serve --http did not stop within 20s of SIGTERM; stderr:\n%s", logs.String())
		}
	})
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logs, line)
			if _, u, ok := strings.Cut(line, "Serving MCP on "); ok {
				select {
				case urlc <- strings.TrimSpace(u):
				default:
				}
			}
		}
		_, _ = io.Copy(logs, pr)
	}()
	select {
	case u := <-urlc:
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/mcp") {
			t.Fatalf("hermes mcp serve announced %q, want http://127.0.0.1:<port>/mcp", u)
		}
		return u, logs
	case <-done:
		t.Fatalf("hermes mcp serve --http exited before listening; stderr:\n%s", logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("hermes mcp serve --http did not announce its URL within 60s; stderr:\n%s", logs.String())
	}
	return "", nil
}

// sameJSONValue reports whether two decoded JSON values are equal, numbers
// compared by value: 1.0 and 1 are one number (a JavaScript client prints
// the first as the second).
func sameJSONValue(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, okx := new(big.Rat).SetString(a.String())
		y, oky := new(big.Rat).SetString(bn.String())
		return okx && oky && x.Cmp(y) == 0
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			w, ok := bm[k]
			if !ok || !sameJSONValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !sameJSONValue(a[i], bl[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// decodeJSONExact decodes a JSON document keeping numbers exact.
func decodeJSONExact(t *testing.T, what string, data []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, data)
	}
	return v
}

// inspectorCaller calls tools through the Inspector on one target.
type inspectorCaller struct {
	in     *testinspector.Inspector
	target []string
	// variants adds the calls that vary arguments (filters, limits) and
	// those that must fail to the main call of each tool. Over stdio,
	// where each call starts a server, only the HTTP test makes them.
	variants bool
}

// ok calls a tool that must succeed: one text item holding a JSON object
// and structuredContent equal to it. It returns the object.
func (c inspectorCaller) ok(t *testing.T, name string, kv ...string) map[string]any {
	t.Helper()
	res := c.in.CallTool(t, c.target, name, kv...)
	return checkToolSuccess(t, name, res)
}

func checkToolSuccess(t *testing.T, name string, res *testinspector.CallResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s failed: %+v", name, res.Content)
	}
	text := res.Text(t)
	fromText := decodeJSONExact(t, name+" text content", []byte(text))
	if len(res.StructuredContent) == 0 {
		t.Fatalf("%s returned no structuredContent; text:\n%s", name, text)
	}
	structured := decodeJSONExact(t, name+" structuredContent", res.StructuredContent)
	if !sameJSONValue(fromText, structured) {
		t.Fatalf("%s: structuredContent differs from the JSON of the text content\nstructured: %s\ntext: %s", name, res.StructuredContent, text)
	}
	obj, isObj := structured.(map[string]any)
	if !isObj {
		t.Fatalf("%s returned %s, want a JSON object", name, res.StructuredContent)
	}
	return obj
}

// fails calls a tool that must fail and returns its error message: the
// result has isError and its text is {"error": message}.
func (c inspectorCaller) fails(t *testing.T, name string, kv ...string) string {
	t.Helper()
	res := c.in.CallTool(t, c.target, name, kv...)
	if !res.IsError {
		t.Fatalf("%s %v succeeded, want an error: %+v", name, kv, res.Content)
	}
	var e struct {
		Error string `json:"error"`
	}
	text := res.Text(t)
	if err := json.Unmarshal([]byte(text), &e); err != nil || e.Error == "" {
		t.Fatalf(`%s error text %q is not {"error": ...}`, name, text)
	}
	return e.Error
}

// resultField returns obj[key], failing when absent.
func resultField(t *testing.T, obj map[string]any, key string) any {
	t.Helper()
	v, ok := obj[key]
	if !ok {
		t.Fatalf("no %q in %v", key, obj)
	}
	return v
}

func resultList(t *testing.T, obj map[string]any, key string) []map[string]any {
	t.Helper()
	raw, ok := resultField(t, obj, key).([]any)
	if !ok {
		t.Fatalf("%q is not a list in %v", key, obj)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%q[%d] is not an object: %v", key, i, v)
		}
		out[i] = m
	}
	return out
}

func resultNumber(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// wantFields fails unless obj has each key of fields with that value (numbers
// compared as numbers).
func wantFields(t *testing.T, what string, obj map[string]any, fields map[string]any) {
	t.Helper()
	for k, w := range fields {
		got, ok := obj[k]
		if !ok {
			t.Errorf("%s: no %q in %v", what, k, obj)
			continue
		}
		if wn, isNum := w.(float64); isNum {
			w = json.Number(strconv.FormatFloat(wn, 'f', -1, 64))
		}
		if !sameJSONValue(got, w) {
			t.Errorf("%s: %s = %#v, want %#v", what, k, got, w)
		}
	}
}

func findBy(items []map[string]any, key, value string) map[string]any {
	for _, it := range items {
		if it[key] == value {
			return it
		}
	}
	return nil
}

// checkToolList proves tools/list shows exactly the ten tools, each with
// a description, an input schema and an output schema.
func checkToolList(t *testing.T, in *testinspector.Inspector, target []string) {
	t.Helper()
	tools := in.ListTools(t, target)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		var in, out struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(tool.InputSchema, &in); err != nil || in.Type != "object" {
			t.Errorf("tool %s inputSchema %s: want a JSON Schema of type object", tool.Name, tool.InputSchema)
		}
		if err := json.Unmarshal(tool.OutputSchema, &out); err != nil || out.Type != "object" {
			t.Errorf("tool %s outputSchema %s: want a JSON Schema of type object", tool.Name, tool.OutputSchema)
		}
	}
	sort.Strings(names)
	wantNames := slices.Clone(serveToolNames)
	sort.Strings(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Fatalf("tools/list names %v, want exactly %v", names, wantNames)
	}
}

// checkReadTools calls the tools that only read the fixture and checks what
// they return.
func checkReadTools(t *testing.T, c inspectorCaller) {
	t.Helper()
	// conversations_list: the two open sessions of state.db with a key,
	// newest activity first (the ended slack one and the keyless cli one
	// are not listed).
	got := c.ok(t, "conversations_list")
	convs := resultList(t, got, "conversations")
	wantFields(t, "conversations_list", got, map[string]any{"count": float64(len(convs))})
	var keys []string
	for i, cv := range convs {
		keys = append(keys, fmt.Sprint(cv["session_key"]))
		if i > 0 && fmt.Sprint(convs[i-1]["updated_at"]) < fmt.Sprint(cv["updated_at"]) {
			t.Errorf("conversations_list not sorted by updated_at, newest first: %v", convs)
		}
	}
	sort.Strings(keys)
	if !slices.Equal(keys, []string{serveDCKey, serveTGKey}) {
		t.Fatalf("conversations_list keys %v, want %s and %s", keys, serveDCKey, serveTGKey)
	}
	wantFields(t, "conversations_list telegram entry", findBy(convs, "session_key", serveTGKey), map[string]any{
		"session_id": serveTGSession, "platform": "telegram", "chat_type": "dm",
		"display_name": "Alice", "chat_name": "Alice", "user_name": "Alice",
	})
	wantFields(t, "conversations_list discord entry", findBy(convs, "session_key", serveDCKey), map[string]any{
		"session_id": "dc1", "platform": "discord", "chat_type": "group", "display_name": "#general",
	})
	// The platform filter ignores case; search matches the display name.
	if c.variants {
		got = c.ok(t, "conversations_list", "platform=TELEGRAM")
		if convs := resultList(t, got, "conversations"); len(convs) != 1 || convs[0]["session_key"] != serveTGKey {
			t.Errorf("conversations_list platform=TELEGRAM: %v, want the telegram session only", convs)
		}
		got = c.ok(t, "conversations_list", "search=general", "limit=5")
		if convs := resultList(t, got, "conversations"); len(convs) != 1 || convs[0]["session_key"] != serveDCKey {
			t.Errorf("conversations_list search=general: %v, want the discord session only", convs)
		}
	}

	// conversation_get of a known key, and of an unknown one.
	got = c.ok(t, "conversation_get", "session_key="+serveTGKey)
	wantFields(t, "conversation_get", got, map[string]any{
		"session_key": serveTGKey, "session_id": serveTGSession, "platform": "telegram", "chat_type": "dm",
		"display_name": "Alice", "user_name": "Alice", "chat_name": "Alice", "chat_id": "123456",
		"input_tokens": float64(50000), "output_tokens": float64(2000), "total_tokens": float64(52000),
	})
	if c.variants {
		if msg := c.fails(t, "conversation_get", "session_key=agent:main:telegram:dm:999"); msg != "Conversation not found: agent:main:telegram:dm:999" {
			t.Errorf("conversation_get of an unknown key: %q", msg)
		}
	}

	// messages_read: the user and assistant messages with text, in order;
	// the system and tool messages, the rewound one and the empty one are
	// skipped, and a multipart message keeps its text parts.
	got = c.ok(t, "messages_read", "session_key="+serveTGKey)
	wantFields(t, "messages_read", got, map[string]any{"session_key": serveTGKey, "count": float64(3), "total_in_session": float64(3)})
	msgs := resultList(t, got, "messages")
	wantMsgs := [][3]string{
		{"2", "user", "hello"},
		{"3", "assistant", "here is the chart\nMEDIA: files/report.pdf"},
		{"7", "user", "thanks"},
	}
	if len(msgs) != len(wantMsgs) {
		t.Fatalf("messages_read returned %d messages, want %d: %v", len(msgs), len(wantMsgs), msgs)
	}
	for i, w := range wantMsgs {
		wantFields(t, "messages_read message "+w[0], msgs[i], map[string]any{"id": w[0], "role": w[1], "content": w[2]})
	}
	if c.variants {
		got = c.ok(t, "messages_read", "session_key="+serveTGKey, "limit=1")
		wantFields(t, "messages_read limit=1", got, map[string]any{"count": float64(1), "total_in_session": float64(3)})
		if m := resultList(t, got, "messages"); len(m) != 1 || m[0]["content"] != "thanks" {
			t.Errorf("messages_read limit=1: %v, want the last message", m)
		}
		if msg := c.fails(t, "messages_read", "session_key=agent:main:nope:dm:1"); msg != "Conversation not found: agent:main:nope:dm:1" {
			t.Errorf("messages_read of an unknown key: %q", msg)
		}
	}

	// attachments_fetch of the multipart message: its image, its file
	// part and the MEDIA: path in its text.
	got = c.ok(t, "attachments_fetch", "session_key="+serveTGKey, `message_id="3"`)
	wantFields(t, "attachments_fetch", got, map[string]any{"message_id": "3", "count": float64(3)})
	atts := resultList(t, got, "attachments")
	wantFields(t, "attachments_fetch image", findBy(atts, "type", "image"), map[string]any{"url": "https://example.com/chart.png"})
	wantFields(t, "attachments_fetch media", findBy(atts, "type", "media"), map[string]any{"path": "files/report.pdf"})
	file := findBy(atts, "type", "file")
	if file == nil || !sameJSONValue(file["data"], map[string]any{"type": "file", "file": map[string]any{"name": "a.csv"}}) {
		t.Errorf("attachments_fetch: no file part with its data in %v", atts)
	}
	if c.variants {
		if msg := c.fails(t, "attachments_fetch", "session_key="+serveTGKey, `message_id="99"`); msg != "Message not found: 99" {
			t.Errorf("attachments_fetch of an unknown message: %q", msg)
		}
	}

	// channels_list: the channel directory, and its platform filter.
	got = c.ok(t, "channels_list")
	chans := resultList(t, got, "channels")
	wantFields(t, "channels_list", got, map[string]any{"count": float64(len(chans))})
	wantFields(t, "channels_list telegram", findBy(chans, "target", "telegram:123456"), map[string]any{"platform": "telegram", "name": "Alice", "chat_type": "dm"})
	wantFields(t, "channels_list discord", findBy(chans, "target", "discord:789"), map[string]any{"platform": "discord", "name": "#general", "chat_type": "group"})
	if c.variants {
		got = c.ok(t, "channels_list", "platform=discord")
		chans = resultList(t, got, "channels")
		for _, ch := range chans {
			if ch["platform"] != "discord" {
				t.Errorf("channels_list platform=discord lists %v", ch)
			}
		}
		if findBy(chans, "target", "discord:789") == nil || findBy(chans, "target", "discord:1234567890123") == nil {
			t.Errorf("channels_list platform=discord: %v, want #general and #random", chans)
		}
	}
}

// checkPermissionTools creates an approval the way the agent does and decides
// it through permissions_respond, once.
func checkPermissionTools(t *testing.T, c inspectorCaller, fx *serveFixture) {
	t.Helper()
	const id = "approval-1"
	fx.addApproval(t, id, "exec", "rm -rf build/", serveTGKey, serveT0+2000)
	got := c.ok(t, "permissions_list_open")
	wantFields(t, "permissions_list_open", got, map[string]any{"count": float64(1)})
	wantFields(t, "permissions_list_open approval", findBy(resultList(t, got, "approvals"), "id", id), map[string]any{
		"kind": "exec", "description": "rm -rf build/", "session_key": serveTGKey, "created_at": serveT0 + 2000,
	})
	if c.variants {
		if msg := c.fails(t, "permissions_respond", "id="+id, "decision=maybe"); msg != "Invalid decision: maybe. Must be allow-once, allow-always, or deny" {
			t.Errorf("permissions_respond decision=maybe: %q", msg)
		}
	}
	got = c.ok(t, "permissions_respond", "id="+id, "decision=allow-once")
	wantFields(t, "permissions_respond", got, map[string]any{"resolved": true, "approval_id": id, "decision": "allow-once"})
	if msg := c.fails(t, "permissions_respond", "id="+id, "decision=deny"); msg != "Approval "+id+" was already decided (allow-once); only open approvals can be answered: list them with permissions_list_open" {
		t.Errorf("second permissions_respond: %q, want already decided", msg)
	}
	got = c.ok(t, "permissions_list_open")
	wantFields(t, "permissions_list_open after the decision", got, map[string]any{"count": float64(0)})
}

// checkSendTool sends a message to the fake Telegram and reads it back.
func checkSendTool(t *testing.T, c inspectorCaller, fx *serveFixture, text string) {
	t.Helper()
	before := len(fx.telegram.messages())
	got := c.ok(t, "messages_send", "target=telegram:123456", "message="+text)
	sent := fx.telegram.messages()
	if len(sent) != before+1 {
		t.Fatalf("the fake Telegram got %d messages, want %d: %+v", len(sent), before+1, sent)
	}
	last := sent[len(sent)-1]
	if last.Text != text || last.ChatID.String() != "123456" {
		t.Errorf("the fake Telegram got %+v, want %q to chat 123456", last, text)
	}
	wantFields(t, "messages_send", got, map[string]any{"success": true, "platform": "telegram", "chat_id": "123456", "message_id": strconv.Itoa(last.ID)})
	if c.variants {
		if msg := c.fails(t, "messages_send", "target=telegram:123456"); msg != "Both target and message are required" {
			t.Errorf("messages_send without a message: %q", msg)
		}
	}
	// The bridge records what it sent, so the conversation shows it.
	read := c.ok(t, "messages_read", "session_key="+serveTGKey)
	if findBy(resultList(t, read, "messages"), "content", text) == nil {
		t.Errorf("messages_read after messages_send does not show %q: %v", text, read["messages"])
	}
}

// checkAppendEvent checks an event object is the message "append 0" of the
// telegram session, and returns its cursor.
func checkAppendEvent(t *testing.T, what string, ev any) float64 {
	t.Helper()
	obj, ok := ev.(map[string]any)
	if !ok {
		t.Fatalf("%s: event %v is not an object", what, ev)
	}
	wantFields(t, what, obj, map[string]any{"type": "message", "session_key": serveTGKey, "role": "user", "content": "append 0"})
	if _, ok := obj["message_id"].(string); !ok {
		t.Errorf("%s: message_id %v is not a string", what, obj["message_id"])
	}
	return resultNumber(t, resultField(t, obj, "cursor"))
}

func newInspector(t *testing.T, env []string) *testinspector.Inspector {
	t.Helper()
	in := testinspector.New(t)
	in.Env = env
	return in
}

// TestServeInspectorStdio runs the MCP Inspector's CLI with `hermes mcp
// serve` as its stdio server, a fresh server for each request as the CLI
// does: tools/list and every tool against the fixture (the variations of
// arguments and the errors are left to the HTTP test).
func TestServeInspectorStdio(t *testing.T) {
	t.Parallel()
	fx := newServeFixture(t)
	in := newInspector(t, fx.env(t))
	c := inspectorCaller{in: in, target: testinspector.Stdio(testbin.Path(t, "hermes"), "mcp", "serve")}

	checkToolList(t, in, c.target)
	checkReadTools(t, c)

	// events: the first serve takes its baseline; messages committed
	// while no server runs become events of the next one.
	got := c.ok(t, "events_poll")
	resultList(t, got, "events")
	resultNumber(t, resultField(t, got, "next_cursor"))
	fx.appendMessages(t, serveTGSession, 2)
	got = c.ok(t, "events_wait", "session_key="+serveTGKey, "timeout_ms=60000")
	checkAppendEvent(t, "events_wait", resultField(t, got, "event"))
	got = c.ok(t, "events_wait", "session_key=agent:main:nobody:dm:0", "timeout_ms=0")
	wantFields(t, "events_wait with nothing to wait for", got, map[string]any{"event": nil, "reason": "timeout"})

	checkPermissionTools(t, c, fx)
	checkSendTool(t, c, fx, "Hello over stdio from the MCP Inspector")

	// Each server the Inspector started ended with its client, and took
	// its bridge plugin with it: no process is left holding the home.
	if runtime.GOOS == "linux" {
		testwait.For(t, 30*time.Second, "every hermes mcp serve and bridge plugin of the fixture to exit", func() bool {
			return len(processesOfHome(fx.home)) == 0
		})
	}
}

// processesOfHome lists the live processes of home (Linux /proc): those
// whose environment sets HERMES_HOME to it (serve), and those holding a
// file in it open (the bridge plugin, whose environment the host filters,
// keeps state.db open).
func processesOfHome(home string) []int {
	var pids []int
	env := []byte("\x00HERMES_HOME=" + home + "\x00")
	for _, st := range testproc.All() {
		if st.State == 'Z' || st.PID == os.Getpid() {
			continue
		}
		proc := "/proc/" + strconv.Itoa(st.PID)
		if b, err := os.ReadFile(proc + "/environ"); err == nil && bytes.Contains(append([]byte{0}, b...), env) {
			pids = append(pids, st.PID)
			continue
		}
		fds, _ := os.ReadDir(proc + "/fd")
		for _, fd := range fds {
			if target, err := os.Readlink(proc + "/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, home+"/") {
				pids = append(pids, st.PID)
				break
			}
		}
	}
	return pids
}

// TestServeInspectorHTTP runs the MCP Inspector's CLI against `hermes mcp
// serve --http` with the bearer token of .env: tools/list and every tool,
// and an events_wait pending while a message is appended.
func TestServeInspectorHTTP(t *testing.T) {
	t.Parallel()
	fx := newServeFixture(t)
	url, logs := startServeHTTP(t, fx)
	in := newInspector(t, fx.env(t))
	c := inspectorCaller{in: in, target: testinspector.HTTP(url, "Authorization: Bearer "+fx.token), variants: true}
	defer func() {
		if t.Failed() {
			t.Logf("hermes mcp serve stderr:\n%s", logs.String())
		}
	}()

	checkToolList(t, in, c.target)
	checkReadTools(t, c)

	// events: a wait after the current cursor returns the message
	// appended meanwhile; a poll from the same cursor lists it.
	got := c.ok(t, "events_poll")
	start := resultNumber(t, resultField(t, got, "next_cursor"))
	after := strconv.FormatFloat(start, 'f', -1, 64)
	type waited struct {
		res *testinspector.CallResult
		err error
	}
	waitc := make(chan waited, 1)
	go func() {
		r, err := in.Exec(context.Background(), c.target, testinspector.CallArgs("events_wait",
			"after_cursor="+after, "session_key="+serveTGKey, "timeout_ms=120000")...)
		if err == nil {
			var res *testinspector.CallResult
			res, err = r.Call()
			waitc <- waited{res, err}
			return
		}
		waitc <- waited{nil, err}
	}()
	fx.appendMessages(t, serveTGSession, 1)
	w := <-waitc
	if w.err != nil {
		t.Fatalf("events_wait: %v", w.err)
	}
	got = checkToolSuccess(t, "events_wait", w.res)
	ev := resultField(t, got, "event")
	cursor := checkAppendEvent(t, "events_wait", ev)
	if cursor <= start {
		t.Errorf("events_wait returned cursor %v, not after %v", cursor, start)
	}
	got = c.ok(t, "events_poll", "after_cursor="+after, "session_key="+serveTGKey)
	evs := resultList(t, got, "events")
	if len(evs) != 1 || !sameJSONValue(any(evs[0]), ev) {
		t.Errorf("events_poll after %s: %v, want just the event events_wait returned: %v", after, evs, ev)
	}
	wantFields(t, "events_poll", got, map[string]any{"next_cursor": cursor})
	got = c.ok(t, "events_wait", "after_cursor="+strconv.FormatFloat(cursor, 'f', -1, 64), "session_key="+serveTGKey, "timeout_ms=0")
	wantFields(t, "events_wait with nothing new", got, map[string]any{"event": nil, "reason": "timeout"})

	checkPermissionTools(t, c, fx)
	checkSendTool(t, c, fx, "Hello over HTTP from the MCP Inspector")
}

// serveRPC is a minimal streamable HTTP client made of plain net/http
// requests.
type serveRPC struct {
	url, session, version string
}

// post sends one JSON-RPC message with the given Authorization (none
// when empty) and extra headers, and returns the status and the JSON-RPC
// response (nil for 202 or an error status).
func (r *serveRPC) post(t *testing.T, auth string, header map[string]string, msg string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
	}
	if r.version != "" {
		req.Header.Set("MCP-Protocol-Version", r.version)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("POST %s: %v", r.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("reading the answer to POST %s: %v", r.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		r.session = s
	}
	data := body
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data = nil
		for _, line := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:"); ok && strings.Contains(d, `"id"`) {
				data = []byte(strings.TrimSpace(d))
			}
		}
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("answer to POST %s is not a JSON-RPC response: %v\n%s", r.url, err, body)
	}
	return resp.StatusCode, out
}

const serveInitializeRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hermes-serve-test","version":"1"}}}`

// initialize opens an MCP session with the right token.
func (r *serveRPC) initialize(t *testing.T, token string) {
	t.Helper()
	code, res := r.post(t, "Bearer "+token, nil, serveInitializeRequest)
	if code != http.StatusOK {
		t.Fatalf("initialize with the right token: HTTP %d", code)
	}
	result, _ := res["result"].(map[string]any)
	v, _ := result["protocolVersion"].(string)
	if v == "" {
		t.Fatalf("initialize answered %v", res)
	}
	r.version = v
	if code, _ := r.post(t, "Bearer "+token, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted && code != http.StatusOK {
		t.Fatalf("notifications/initialized: HTTP %d", code)
	}
}

// TestServeHTTPRefusesWrongToken proves a request without the bearer
// token of .env, or with another, is refused with 401 and its tool call
// never runs, while the same call with the token does.
func TestServeHTTPRefusesWrongToken(t *testing.T) {
	t.Parallel()
	fx := newServeFixture(t)
	url, _ := startServeHTTP(t, fx)
	r := &serveRPC{url: url}
	for _, auth := range []string{"", "Bearer wrong-token", "Bearer " + fx.token + "x", "Basic " + fx.token} {
		if code, _ := r.post(t, auth, nil, serveInitializeRequest); code != http.StatusUnauthorized {
			t.Errorf("initialize with Authorization %q: HTTP %d, want 401", auth, code)
		}
	}
	r.initialize(t, fx.token)
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"messages_send","arguments":{"target":"telegram:123456","message":"must not be sent"}}}`
	for _, auth := range []string{"", "Bearer wrong-token"} {
		if code, _ := r.post(t, auth, nil, call); code != http.StatusUnauthorized {
			t.Errorf("tools/call with Authorization %q: HTTP %d, want 401", auth, code)
		}
	}
	if sent := fx.telegram.messages(); len(sent) != 0 {
		t.Fatalf("a refused tools/call reached the platform: %+v", sent)
	}
	// The same call with the token runs: the refusal was the token's.
	code, res := r.post(t, "Bearer "+fx.token, nil, call)
	if code != http.StatusOK || res["result"] == nil {
		t.Fatalf("tools/call with the token: HTTP %d, %v", code, res)
	}
	if sent := fx.telegram.messages(); len(sent) != 1 || sent[0].Text != "must not be sent" {
		t.Fatalf("the fake Telegram got %+v after the authorized call", sent)
	}
}

// TestServeHTTPRefusesForeignOrigin proves a request from a web page of
// another origin, or naming another host, is refused with 403 even with
// the token, while a loopback origin is served.
func TestServeHTTPRefusesForeignOrigin(t *testing.T) {
	t.Parallel()
	fx := newServeFixture(t)
	url, _ := startServeHTTP(t, fx)
	hostPort := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	r := &serveRPC{url: url}
	auth := "Bearer " + fx.token
	for _, h := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Origin": "https://evil.example:" + strings.Split(hostPort, ":")[1]},
		{"Origin": "null"},
		{"Host": "evil.example"},
		{"Host": "evil.example:" + strings.Split(hostPort, ":")[1]},
	} {
		if code, _ := r.post(t, auth, h, serveInitializeRequest); code != http.StatusForbidden {
			t.Errorf("initialize with %v: HTTP %d, want 403", h, code)
		}
	}
	for _, h := range []map[string]string{
		{"Origin": "http://" + hostPort},
		{"Origin": "http://localhost:" + strings.Split(hostPort, ":")[1]},
		{"Host": "localhost:" + strings.Split(hostPort, ":")[1]},
	} {
		if code, _ := r.post(t, auth, h, serveInitializeRequest); code != http.StatusOK {
			t.Errorf("initialize with %v: HTTP %d, want 200", h, code)
		}
	}
}

// TestServeHTTPRefusesNonLoopbackWithoutAllowRemote proves serve does not
// listen beyond loopback unless told to.
func TestServeHTTPRefusesNonLoopbackWithoutAllowRemote(t *testing.T) {
	t.Parallel()
	r := runHermes(t, newHome(t), "mcp", "serve", "--http", "0.0.0.0:0")
	if r.code == 0 {
		t.Fatalf("hermes mcp serve --http 0.0.0.0:0 exited 0; stderr:\n%s", r.stderr)
	}
	r.oneLineErr(t, "0.0.0.0", "--allow-remote")
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing", r.stdout)
	}
}
