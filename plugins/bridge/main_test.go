package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/send"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/store"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/tools"
)

// The fixture's telegram conversation.
const (
	tgKey   = "agent:main:telegram:dm:123456"
	tgToken = "123:test-token"
)

var ctx = context.Background()

// handle serves the plugin in process over go-plugin's RPC, as the host
// sees it; the servers it opens are shut down with the test.
func handle(t *testing.T) *pluginhost.Bridge {
	t.Helper()
	return sdktest.BridgeInProcess(t, description(), opener(nil))
}

// openBridge opens the plugin over cfg through the RPC handle.
func openBridge(t *testing.T, cfg bridge.Config) *pluginhost.BridgeClient {
	t.Helper()
	c, err := handle(t).Open(ctx, cfg, pluginhost.BridgeOptions{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return c
}

// call runs a tool and decodes its text; wantErr says whether the result
// must be a tool error.
func call(t *testing.T, c *pluginhost.BridgeClient, name, args string, wantErr bool) map[string]any {
	t.Helper()
	res, err := c.Call(ctx, name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	if res.IsError != wantErr {
		t.Fatalf("%s %s: IsError %v, want %v: %s", name, args, res.IsError, wantErr, res.Text)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		t.Fatalf("%s %s: text is not a JSON object: %v\n%s", name, args, err, res.Text)
	}
	if !wantErr {
		var structured map[string]any
		if err := json.Unmarshal(res.Structured, &structured); err != nil {
			t.Fatalf("%s %s: structured content %s: %v", name, args, res.Structured, err)
		}
	}
	return out
}

// fakeTelegram is a loopback Bot API that accepts every sendMessage.
type fakeTelegram struct {
	srv  *httptest.Server
	mu   sync.Mutex
	sent []map[string]any
}

func newFakeTelegram(t *testing.T) *fakeTelegram {
	t.Helper()
	f := &fakeTelegram{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/bot"+tgToken+"/sendMessage" {
			http.Error(w, `{"ok":false,"error_code":404,"description":"Not Found"}`, http.StatusNotFound)
			return
		}
		var body map[string]any
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &body); err != nil {
			http.Error(w, `{"ok":false,"error_code":400,"description":"bad json"}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.sent = append(f.sent, body)
		id := 500 + len(f.sent)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true,"result":{"message_id":`+strconv.Itoa(id)+`}}`)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeTelegram) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

// config is the bridge's config over home, sending to f.
func config(home string, f *fakeTelegram) bridge.Config {
	cfg := bridge.Config{Home: home, Env: map[string]string{send.TelegramTokenVar: tgToken}}
	if f != nil {
		cfg.Settings = map[string]any{TelegramBaseURLKey: f.srv.URL}
	}
	return cfg
}

// The description offers the ten tools with their schemas, in the tools
// package's order, read-only but for the two that change something, and
// asks for the three bot tokens; the host's checks accept it.
func TestDescription(t *testing.T) {
	d, err := handle(t).Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != tools.ServerName || d.Instructions != tools.Instructions {
		t.Errorf("name %q instructions %q", d.Name, d.Instructions)
	}
	if want := []string{"TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN", "SLACK_BOT_TOKEN"}; !slices.Equal(d.Env, want) {
		t.Errorf("env %q, want %q", d.Env, want)
	}
	var names []string
	for _, tl := range d.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || len(tl.InputSchema) == 0 || len(tl.OutputSchema) == 0 {
			t.Errorf("tool %s lacks a description or a schema", tl.Name)
		}
		wantRO := tl.Name != "messages_send" && tl.Name != "permissions_respond"
		if tl.ReadOnly != wantRO || tl.Destructive {
			t.Errorf("tool %s: read-only %v destructive %v, want %v false", tl.Name, tl.ReadOnly, tl.Destructive, wantRO)
		}
	}
	if !slices.Equal(names, tools.Names()) || len(names) != 10 {
		t.Errorf("tools %q, want the ten %q", names, tools.Names())
	}
}

// Every one of the ten tools answers over a fixture HERMES_HOME (state.db
// Python wrote, sessions.json, the channel directory), through the RPC the
// host uses; a decision and a sent message become events.
func TestEveryTool(t *testing.T) {
	home := fixture.Home(t, "current", true, true)
	tg := newFakeTelegram(t)
	c := openBridge(t, config(home, tg))

	convs := call(t, c, "conversations_list", `{}`, false)
	if convs["count"] != 2.0 {
		t.Errorf("conversations_list: %v", convs)
	}
	conv := call(t, c, "conversation_get", `{"session_key": "`+tgKey+`"}`, false)
	if conv["session_id"] != "tg1" || conv["chat_id"] != "123456" {
		t.Errorf("conversation_get: %v", conv)
	}
	read := call(t, c, "messages_read", `{"session_key": "`+tgKey+`"}`, false)
	msgs := read["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages_read: %v", read)
	}
	withChart := msgs[1].(map[string]any)["id"].(string)
	att := call(t, c, "attachments_fetch", `{"session_key": "`+tgKey+`", "message_id": "`+withChart+`"}`, false)
	if att["count"] != 3.0 {
		t.Errorf("attachments_fetch: %v", att)
	}
	chans := call(t, c, "channels_list", `{"platform": "discord"}`, false)
	if chans["count"] != 2.0 {
		t.Errorf("channels_list: %v", chans)
	}
	if ev := call(t, c, "events_poll", `{}`, false); len(ev["events"].([]any)) != 0 || ev["next_cursor"] != 0.0 {
		t.Errorf("events_poll at start (no history): %v", ev)
	}
	if ev := call(t, c, "events_wait", `{"timeout_ms": 0}`, false); ev["event"] != nil || ev["reason"] != "timeout" {
		t.Errorf("events_wait at start: %v", ev)
	}

	// The agent asks for an approval; the bridge lists it and decides.
	agent, err := store.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if _, err := agent.CreateApproval(ctx, store.Approval{ID: "ap1", Kind: store.KindExec, Description: "rm -rf build", SessionKey: tgKey}); err != nil {
		t.Fatal(err)
	}
	open := call(t, c, "permissions_list_open", `{}`, false)
	if open["count"] != 1.0 {
		t.Fatalf("permissions_list_open: %v", open)
	}
	requested := call(t, c, "events_wait", `{"timeout_ms": 300000}`, false)["event"].(map[string]any)
	if requested["type"] != "approval_requested" || requested["approval_id"] != "ap1" || requested["session_key"] != tgKey {
		t.Errorf("first event: %v", requested)
	}
	if r := call(t, c, "permissions_respond", `{"id": "ap1", "decision": "deny"}`, false); r["resolved"] != true {
		t.Errorf("permissions_respond: %v", r)
	}
	call(t, c, "permissions_respond", `{"id": "ap1", "decision": "deny"}`, true)
	cursor := strconv.FormatFloat(requested["cursor"].(float64), 'f', -1, 64)
	resolved := call(t, c, "events_wait", `{"after_cursor": `+cursor+`, "timeout_ms": 300000}`, false)["event"].(map[string]any)
	if resolved["type"] != "approval_resolved" || resolved["decision"] != "deny" {
		t.Errorf("second event: %v", resolved)
	}

	// A message sent by name through the channel directory goes to the
	// fake Bot API, is recorded, read back and reported as an event.
	cursor = strconv.FormatFloat(resolved["cursor"].(float64), 'f', -1, 64)
	res := call(t, c, "messages_send", `{"target": "telegram:Alice", "message": "the build is green"}`, false)
	if res["success"] != true || res["chat_id"] != "123456" || res["message_id"] != "501" {
		t.Fatalf("messages_send: %v", res)
	}
	if reqs := tg.requests(); len(reqs) != 1 || reqs[0]["text"] != "the build is green" || reqs[0]["chat_id"] != 123456.0 {
		t.Errorf("the fake Bot API got %v", reqs)
	}
	read = call(t, c, "messages_read", `{"session_key": "`+tgKey+`"}`, false)
	msgs = read["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if len(msgs) != 4 || last["role"] != "assistant" || last["content"] != "the build is green" {
		t.Errorf("messages_read after the send: %v", read)
	}
	ev := call(t, c, "events_wait", `{"after_cursor": `+cursor+`, "session_key": "`+tgKey+`", "timeout_ms": 300000}`, false)["event"].(map[string]any)
	if ev["type"] != "message" || ev["role"] != "assistant" || ev["content"] != "the build is green" || ev["message_id"] != last["id"] {
		t.Errorf("event of the sent message: %v", ev)
	}
	poll := call(t, c, "events_poll", `{"session_key": "`+tgKey+`"}`, false)
	if n := len(poll["events"].([]any)); n != 3 || poll["next_cursor"] != ev["cursor"] {
		t.Errorf("events_poll: %v", poll)
	}
	// A chat without a conversation: sent all the same, nothing recorded.
	if res := call(t, c, "messages_send", `{"target": "telegram:-100777", "message": "hi"}`, false); res["success"] != true {
		t.Errorf("messages_send to a chat without a conversation: %v", res)
	}
}

// Without HERMES_HOME every tool answers as the original does with no
// data, a message is still sent, and once the folder and its state.db
// appear the next call finds them.
func TestMissingHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "hermes")
	tg := newFakeTelegram(t)
	c := openBridge(t, config(home, tg))
	noData(t, c)
	if res := call(t, c, "messages_send", `{"target": "telegram:123456", "message": "sent without a home"}`, false); res["success"] != true {
		t.Errorf("messages_send: %v", res)
	}
	if res := call(t, c, "messages_send", `{"target": "telegram:Alice", "message": "x"}`, true); !strings.Contains(res["error"].(string), "Send failed") {
		t.Errorf("messages_send by name without a directory: %v", res)
	}
	if _, err := os.Stat(home); err == nil {
		t.Fatal("the bridge created HERMES_HOME")
	}

	src := fixture.Home(t, "current", true, false)
	if err := os.Rename(src, home); err != nil {
		t.Fatal(err)
	}
	if convs := call(t, c, "conversations_list", `{}`, false); convs["count"] != 2.0 {
		t.Errorf("conversations_list once HERMES_HOME exists: %v", convs)
	}
	if read := call(t, c, "messages_read", `{"session_key": "`+tgKey+`"}`, false); read["count"] != 3.0 {
		t.Errorf("messages_read once HERMES_HOME exists: %v", read)
	}
}

// noData checks the answers of the tools over no data at all.
func noData(t *testing.T, c *pluginhost.BridgeClient) {
	t.Helper()
	if r := call(t, c, "conversations_list", `{}`, false); r["count"] != 0.0 {
		t.Errorf("conversations_list: %v", r)
	}
	if r := call(t, c, "conversation_get", `{"session_key": "`+tgKey+`"}`, true); r["error"] != "Conversation not found: "+tgKey {
		t.Errorf("conversation_get: %v", r)
	}
	call(t, c, "messages_read", `{"session_key": "`+tgKey+`"}`, true)
	call(t, c, "attachments_fetch", `{"session_key": "`+tgKey+`", "message_id": "1"}`, true)
	if r := call(t, c, "events_poll", `{"after_cursor": 4}`, false); len(r["events"].([]any)) != 0 || r["next_cursor"] != 4.0 {
		t.Errorf("events_poll: %v", r)
	}
	if r := call(t, c, "events_wait", `{"timeout_ms": 0}`, false); r["reason"] != "timeout" {
		t.Errorf("events_wait: %v", r)
	}
	if r := call(t, c, "channels_list", `{}`, false); r["count"] != 0.0 {
		t.Errorf("channels_list: %v", r)
	}
	if r := call(t, c, "permissions_list_open", `{}`, false); r["count"] != 0.0 {
		t.Errorf("permissions_list_open: %v", r)
	}
	if r := call(t, c, "permissions_respond", `{"id": "x", "decision": "deny"}`, true); r["error"] != "Approval not found: x" {
		t.Errorf("permissions_respond: %v", r)
	}
	call(t, c, "messages_send", `{"target": "", "message": "x"}`, true)
}

// A HERMES_HOME without state.db answers with no data, and creates no
// state.db.
func TestMissingStateDB(t *testing.T) {
	home := t.TempDir()
	c := openBridge(t, config(home, nil))
	noData(t, c)
	if _, err := os.Stat(filepath.Join(home, store.DBFile)); err == nil {
		t.Fatal("the bridge created state.db")
	}
}

// A state.db of garbage bytes gives tool results and tool errors, never a
// failed open, a call error or a panic; sessions.json still names the
// conversations.
func TestCorruptStateDB(t *testing.T) {
	home := fixture.Home(t, "", true, false)
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(i*7 + i/251)
	}
	if err := os.WriteFile(filepath.Join(home, store.DBFile), garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	c := openBridge(t, config(home, newFakeTelegram(t)))
	if r := call(t, c, "conversations_list", `{}`, false); r["count"] != 3.0 {
		t.Errorf("conversations_list from sessions.json: %v", r)
	}
	call(t, c, "conversation_get", `{"session_key": "`+tgKey+`"}`, false)
	if r := call(t, c, "messages_read", `{"session_key": "`+tgKey+`"}`, true); !strings.HasPrefix(r["error"].(string), "Failed to read messages: ") {
		t.Errorf("messages_read: %v", r)
	}
	call(t, c, "attachments_fetch", `{"session_key": "`+tgKey+`", "message_id": "1"}`, true)
	call(t, c, "events_poll", `{}`, false)
	call(t, c, "events_wait", `{"timeout_ms": 0}`, false)
	call(t, c, "channels_list", `{}`, false)
	call(t, c, "permissions_list_open", `{}`, false)
	call(t, c, "permissions_respond", `{"id": "x", "decision": "deny"}`, true)
	// Delivered; recording it fails on the database, which only logs.
	if r := call(t, c, "messages_send", `{"target": "telegram:123456", "message": "hi"}`, false); r["success"] != true {
		t.Errorf("messages_send: %v", r)
	}
}

// Base URL settings must be http(s) URLs; the error names the key.
func TestSettings(t *testing.T) {
	home := t.TempDir()
	bad := []map[string]any{
		{TelegramBaseURLKey: "ftp://example.com"},
		{DiscordBaseURLKey: 42.0},
		{SlackBaseURLKey: "http://user:pw@127.0.0.1:1"},
		{SlackBaseURLKey: "://nope"},
		{TelegramBaseURLKey: "http:///path"},
		{DiscordBaseURLKey: "http://127.0.0.1:1/?q=1"},
	}
	for _, settings := range bad {
		var key string
		for k := range settings {
			key = k
		}
		_, err := handle(t).Open(ctx, bridge.Config{Home: home, Settings: settings}, pluginhost.BridgeOptions{})
		if sdk.ErrorCode(err) != sdk.CodeConfig || !strings.Contains(err.Error(), key) {
			t.Errorf("settings %v: %v, want a config error naming %s", settings, err, key)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("the error shows the URL's credentials: %v", err)
		}
	}
	good := map[string]any{TelegramBaseURLKey: "http://127.0.0.1:1", DiscordBaseURLKey: "https://discord.example/api/", SlackBaseURLKey: nil, "other": true}
	if _, err := handle(t).Open(ctx, bridge.Config{Home: home, Settings: good}, pluginhost.BridgeOptions{}); err != nil {
		t.Errorf("settings %v: %v", good, err)
	}
}

// Arguments that are not a JSON object are a call error that does not
// quote them (they may hold a message's text); an unknown tool is one too.
func TestCallErrors(t *testing.T) {
	c := openBridge(t, config(t.TempDir(), nil))
	for _, args := range []string{`["secret text"]`, `"secret text"`, `{"message": "secret text"`} {
		_, err := c.Call(ctx, "messages_send", json.RawMessage(args))
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("args %s: %v, want an error without the arguments", args, err)
		}
	}
	if _, err := c.Call(ctx, "nope", nil); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown tool: %v", err)
	}
	for _, args := range []string{``, `null`, ` {} `} {
		if _, err := c.Call(ctx, "conversations_list", json.RawMessage(args)); err != nil {
			t.Errorf("args %q: %v", args, err)
		}
	}
}

// A cancelled events_wait ends with the call, and Close ends the server:
// calls after it fail without touching the closed store.
func TestCancelAndClose(t *testing.T) {
	home := fixture.Home(t, "current", false, false)
	srv, err := open(ctx, config(home, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := srv.Call(cctx, "events_wait", json.RawMessage(`{"timeout_ms": 300000}`))
		done <- err
	}()
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled events_wait returned no error")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := srv.Call(ctx, "conversations_list", nil); err == nil {
		t.Error("a call after Close succeeded")
	}
}

// The plugin keeps the bridge contract as the sdk checks it.
func TestBridgeContract(t *testing.T) {
	sdktest.CheckBridge(t, description(), opener(nil), config(t.TempDir(), nil))
}
