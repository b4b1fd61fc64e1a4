package send

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tokens of the fakes. Each test checks that none shows in an error.
const (
	tgToken      = "123456:AAtelegram-secret_token"
	discordToken = "discord.secret.token"
	slackToken   = "xoxb-slack-secret-token"
)

var testEnv = map[string]string{
	TelegramTokenVar: tgToken,
	DiscordTokenVar:  discordToken,
	SlackTokenVar:    slackToken,
}

// request is what a fake saw.
type request struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
}

// fake is a platform API on loopback: it records each request and answers
// with the next reply of its script (the last one repeats).
type fake struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	seen   []request
	script []func(w http.ResponseWriter, r request)
	hook   func(n int) // called with the count after each request, if set
}

func newFake(t *testing.T, script ...func(w http.ResponseWriter, r request)) *fake {
	t.Helper()
	f := &fake{t: t, script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, hr *http.Request) {
	b, err := io.ReadAll(hr.Body)
	if err != nil {
		f.t.Errorf("fake: reading body: %v", err)
	}
	r := request{Method: hr.Method, Path: hr.URL.Path, Header: hr.Header.Clone()}
	if err := json.Unmarshal(b, &r.Body); err != nil {
		f.t.Errorf("fake: body %q is not a JSON object: %v", b, err)
	}
	f.mu.Lock()
	f.seen = append(f.seen, r)
	n := len(f.seen)
	reply := f.script[min(n, len(f.script))-1]
	hook := f.hook
	f.mu.Unlock()
	reply(w, r)
	if hook != nil {
		hook(n)
	}
}

func (f *fake) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.seen...)
}

// reply answers with a status, headers (pairs) and a JSON body.
func reply(status int, body string, headers ...string) func(http.ResponseWriter, request) {
	return func(w http.ResponseWriter, _ request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// sender returns a Sender whose three platforms are f.
func sender(f *fake) *Sender {
	return &Sender{
		Env:             testEnv,
		TelegramBaseURL: f.srv.URL,
		DiscordBaseURL:  f.srv.URL,
		SlackBaseURL:    f.srv.URL + "/",
		Client:          f.srv.Client(),
	}
}

// noToken fails the test if err's text holds a token.
func noToken(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, tok := range []string{tgToken, discordToken, slackToken, "AAtelegram-secret_token"} {
		if strings.Contains(err.Error(), tok) {
			t.Fatalf("error holds a token: %q", err)
		}
	}
}

func checkRequest(t *testing.T, got request, path string, header map[string]string, body map[string]any) {
	t.Helper()
	if got.Method != http.MethodPost {
		t.Errorf("method %s, want POST", got.Method)
	}
	if got.Path != path {
		t.Errorf("path %q, want %q", got.Path, path)
	}
	if ct := got.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	for k, v := range header {
		if got.Header.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, got.Header.Get(k), v)
		}
	}
	if len(got.Body) != len(body) {
		t.Errorf("body %v, want %v", got.Body, body)
	}
	for k, v := range body {
		if got.Body[k] != v {
			t.Errorf("body[%s] = %#v, want %#v", k, got.Body[k], v)
		}
	}
}

func TestSendTelegram(t *testing.T) {
	f := newFake(t, reply(200, `{"ok":true,"result":{"message_id":42,"chat":{"id":-1001234567890}}}`))
	s := sender(f)
	res, err := s.Send(context.Background(), "telegram:-1001234567890:17", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Platform != Telegram || res.ChatID != "-1001234567890" || res.ThreadID != "17" || res.MessageID() != "42" {
		t.Errorf("result %+v", res)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	checkRequest(t, reqs[0], "/bot"+tgToken+"/sendMessage", nil,
		map[string]any{"chat_id": float64(-1001234567890), "text": "hello", "message_thread_id": float64(17)})

	// The General topic of a forum is addressed without message_thread_id.
	if _, err := s.Send(context.Background(), "telegram:-100:1", "hi"); err != nil {
		t.Fatal(err)
	}
	checkRequest(t, f.requests()[1], "/bot"+tgToken+"/sendMessage", nil, map[string]any{"chat_id": float64(-100), "text": "hi"})
}

func TestSendTelegramThreadNotFound(t *testing.T) {
	f := newFake(t,
		reply(400, `{"ok":false,"error_code":400,"description":"Bad Request: message thread not found"}`),
		reply(200, `{"ok":true,"result":{"message_id":7}}`))
	res, err := sender(f).Send(context.Background(), "telegram:5:9", "x")
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 2 || res.MessageID() != "7" {
		t.Fatalf("%d requests, result %+v", len(reqs), res)
	}
	if _, ok := reqs[1].Body["message_thread_id"]; ok {
		t.Errorf("retry still names the topic: %v", reqs[1].Body)
	}
}

func TestSendDiscord(t *testing.T) {
	f := newFake(t, reply(200, `{"id":"1100","channel_id":"987654321","content":"hello"}`))
	s := sender(f)
	res, err := s.Send(context.Background(), "discord:987654321", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Platform != Discord || res.ChatID != "987654321" || res.MessageID() != "1100" {
		t.Errorf("result %+v", res)
	}
	checkRequest(t, f.requests()[0], "/api/v10/channels/987654321/messages",
		map[string]string{"Authorization": "Bot " + discordToken, "User-Agent": discordUserAgent},
		map[string]any{"content": "hello"})

	// A thread is a channel of its own.
	if _, err := s.Send(context.Background(), "discord:987654321:555", "in thread"); err != nil {
		t.Fatal(err)
	}
	checkRequest(t, f.requests()[1], "/api/v10/channels/555/messages", nil, map[string]any{"content": "in thread"})
}

func TestSendSlack(t *testing.T) {
	f := newFake(t, reply(200, `{"ok":true,"channel":"C1234","ts":"1712345678.000200"}`))
	s := sender(f)
	res, err := s.Send(context.Background(), "slack:C1234:1712345678.000100", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Platform != Slack || res.ChatID != "C1234" || res.MessageID() != "1712345678.000200" {
		t.Errorf("result %+v", res)
	}
	checkRequest(t, f.requests()[0], "/api/chat.postMessage",
		map[string]string{"Authorization": "Bearer " + slackToken},
		map[string]any{"channel": "C1234", "text": "hello", "thread_ts": "1712345678.000100"})
}

func TestResultJSON(t *testing.T) {
	b, err := json.Marshal(&Result{Platform: Slack, ChatID: "C1", MessageIDs: []string{"1.2"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"platform":"slack","chat_id":"C1","message_ids":["1.2"]}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	if (*Result)(nil).MessageID() != "" {
		t.Error("nil result has a message id")
	}
}

func TestTokenRefused(t *testing.T) {
	cases := []struct {
		target, tokenVar string
		answer           func(http.ResponseWriter, request)
	}{
		{"telegram:1", TelegramTokenVar, reply(401, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)},
		{"discord:1", DiscordTokenVar, reply(401, `{"message":"401: Unauthorized","code":0}`)},
		{"slack:C1", SlackTokenVar, reply(200, `{"ok":false,"error":"invalid_auth"}`)},
	}
	for _, c := range cases {
		f := newFake(t, c.answer)
		_, err := sender(f).Send(context.Background(), c.target, "x")
		noToken(t, err)
		if !errors.Is(err, ErrTokenRefused) || !strings.Contains(err.Error(), c.tokenVar) {
			t.Errorf("%s: %v, want ErrTokenRefused naming %s", c.target, err, c.tokenVar)
		}
		if !strings.Contains(err.Error(), c.target) {
			t.Errorf("%s: error %q does not name the target", c.target, err)
		}
		if n := len(f.requests()); n != 1 {
			t.Errorf("%s: %d requests, want 1", c.target, n)
		}
	}
}

func TestForbidden(t *testing.T) {
	f := newFake(t, reply(403, `{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`))
	_, err := sender(f).Send(context.Background(), "telegram:1", "x")
	noToken(t, err)
	if !errors.Is(err, ErrForbidden) || errors.Is(err, ErrTokenRefused) || !strings.Contains(err.Error(), "blocked by the user") {
		t.Errorf("%v, want ErrForbidden quoting the platform", err)
	}
}

func TestRateLimitedThenSent(t *testing.T) {
	cases := []struct {
		target  string
		limited func(http.ResponseWriter, request)
		ok      func(http.ResponseWriter, request)
	}{
		{"telegram:1",
			reply(429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 0","parameters":{"retry_after":0}}`),
			reply(200, `{"ok":true,"result":{"message_id":2}}`)},
		{"discord:1",
			reply(429, `{"message":"You are being rate limited.","retry_after":0.001,"global":false}`, "Retry-After", "0"),
			reply(200, `{"id":"2"}`)},
		{"slack:C1",
			reply(429, `{"ok":false,"error":"ratelimited"}`, "Retry-After", "0"),
			reply(200, `{"ok":true,"ts":"2"}`)},
	}
	for _, c := range cases {
		f := newFake(t, c.limited, c.ok)
		res, err := sender(f).Send(context.Background(), c.target, "x")
		if err != nil {
			t.Errorf("%s: %v", c.target, err)
			continue
		}
		if n := len(f.requests()); n != 2 || res.MessageID() != "2" {
			t.Errorf("%s: %d requests, result %+v; want 2 requests and message 2", c.target, n, res)
		}
	}
}

func TestRateLimitedBeyondBound(t *testing.T) {
	// Always 429: the first try and DefaultMaxRetries retries, then the error.
	f := newFake(t, reply(429, `{"ok":false,"error_code":429,"description":"Too Many Requests","parameters":{"retry_after":0}}`))
	_, err := sender(f).Send(context.Background(), "telegram:1", "x")
	noToken(t, err)
	if !errors.Is(err, ErrRateLimited) || !strings.Contains(err.Error(), "gave up after 3 retries") {
		t.Errorf("%v, want ErrRateLimited after 3 retries", err)
	}
	if n := len(f.requests()); n != 1+DefaultMaxRetries {
		t.Errorf("%d requests, want %d", n, 1+DefaultMaxRetries)
	}

	// A retry-after past the wait bound is not waited for.
	f = newFake(t, reply(429, `{"ok":false,"error":"ratelimited"}`, "Retry-After", "3600"))
	_, err = sender(f).Send(context.Background(), "slack:C1", "x")
	if !errors.Is(err, ErrRateLimited) || !strings.Contains(err.Error(), "bound") {
		t.Errorf("%v, want ErrRateLimited past the bound", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}

	// No retries at all.
	f = newFake(t, reply(429, `{"retry_after":0}`))
	s := sender(f)
	s.MaxRetries = -1
	if _, err := s.Send(context.Background(), "discord:1", "x"); !errors.Is(err, ErrRateLimited) {
		t.Errorf("%v, want ErrRateLimited", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	// The fake asks for an hour's wait, within a bound of two; the test ends
	// the context once the fake has answered. Send must return then, with
	// the context's error (if it waited the hour, the test would time out).
	f := newFake(t, reply(429, `{"message":"slow down","retry_after":3600}`))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.hook = func(int) { cancel() }
	s := sender(f)
	s.MaxRetryWait = 2 * time.Hour
	_, err := s.Send(ctx, "discord:1", "x")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestSlackNotOK(t *testing.T) {
	f := newFake(t, reply(200, `{"ok":false,"error":"channel_not_found"}`))
	_, err := sender(f).Send(context.Background(), "slack:C404", "x")
	noToken(t, err)
	if !errors.Is(err, ErrPlatform) || !strings.Contains(err.Error(), "channel_not_found") || !strings.Contains(err.Error(), "slack:C404") {
		t.Errorf("%v, want ErrPlatform naming channel_not_found and the target", err)
	}
	f = newFake(t, reply(200, `{"ok":false,"error":"not_in_channel"}`))
	if _, err := sender(f).Send(context.Background(), "slack:C1", "x"); !errors.Is(err, ErrForbidden) {
		t.Errorf("%v, want ErrForbidden", err)
	}
}

func TestLongMessageSplitInOrder(t *testing.T) {
	lines := []string{strings.Repeat("a", 1500), strings.Repeat("b", 1500), strings.Repeat("c", 1500)}
	var mu sync.Mutex
	next := 0
	f := newFake(t, func(w http.ResponseWriter, _ request) {
		mu.Lock()
		next++
		id := next
		mu.Unlock()
		reply(200, `{"id":"`+string(rune('0'+id))+`"}`)(w, request{})
	})
	res, err := sender(f).Send(context.Background(), "discord:1", strings.Join(lines, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.Body["content"] != lines[i] {
			t.Errorf("message %d starts %.10q, want line %d", i, r.Body["content"], i)
		}
	}
	if got := strings.Join(res.MessageIDs, ","); got != "1,2,3" {
		t.Errorf("message ids %s, want 1,2,3", got)
	}
}

func TestSplitPartialFailure(t *testing.T) {
	f := newFake(t,
		reply(200, `{"ok":true,"result":{"message_id":1}}`),
		reply(400, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`))
	text := strings.Repeat("x", TelegramMaxLength) + "\n" + "tail"
	res, err := sender(f).Send(context.Background(), "telegram:1", text)
	if !errors.Is(err, ErrPlatform) || !strings.Contains(err.Error(), "part 2 of 2") || !strings.Contains(err.Error(), "chat not found") {
		t.Errorf("%v, want ErrPlatform for part 2 of 2", err)
	}
	if res == nil || len(res.MessageIDs) != 1 || res.MessageIDs[0] != "1" {
		t.Errorf("result %+v, want the first part's id", res)
	}
}

func TestMissingCredentials(t *testing.T) {
	f := newFake(t, reply(200, `{}`))
	for _, c := range []struct{ target, tokenVar string }{
		{"telegram:1", TelegramTokenVar}, {"discord:1", DiscordTokenVar}, {"slack:C1", SlackTokenVar},
	} {
		s := sender(f)
		s.Env = map[string]string{c.tokenVar: "  "}
		_, err := s.Send(context.Background(), c.target, "x")
		if !errors.Is(err, ErrNoCredentials) || !strings.Contains(err.Error(), c.tokenVar) || !strings.Contains(err.Error(), ".env") {
			t.Errorf("%s: %v, want ErrNoCredentials naming %s and .env", c.target, err, c.tokenVar)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestChannelNameResolution(t *testing.T) {
	f := newFake(t, reply(200, `{"id":"9"}`))
	s := sender(f)
	s.Directory = dirMap{"discord/general": "987654321:555"}
	res, err := s.Send(context.Background(), "discord:#general", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.ChatID != "987654321" || res.ThreadID != "555" {
		t.Errorf("result %+v", res)
	}
	checkRequest(t, f.requests()[0], "/api/v10/channels/555/messages", nil, map[string]any{"content": "hello"})

	_, err = s.Send(context.Background(), "discord:#nowhere", "hello")
	if !errors.Is(err, ErrUnresolved) || !strings.Contains(err.Error(), "#nowhere") {
		t.Errorf("%v, want ErrUnresolved naming #nowhere", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestEmptyMessageAndBadBase(t *testing.T) {
	f := newFake(t, reply(200, `{}`))
	s := sender(f)
	if _, err := s.Send(context.Background(), "discord:1", " \n "); !errors.Is(err, ErrEmptyMessage) {
		t.Errorf("%v, want ErrEmptyMessage", err)
	}
	s.TelegramBaseURL = "ftp://example"
	_, err := s.Send(context.Background(), "telegram:1", "x")
	noToken(t, err)
	if err == nil || !strings.Contains(err.Error(), "base URL") {
		t.Errorf("%v, want a base URL error", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
	if _, err := s.SendTo(context.Background(), Target{Platform: "irc", ChatID: "1"}, "x"); !errors.Is(err, ErrUnknownPlatform) {
		t.Errorf("%v, want ErrUnknownPlatform", err)
	}
}

func TestTokenNeverInErrors(t *testing.T) {
	// A platform that echoes the token in its answer.
	f := newFake(t, reply(400, `{"ok":false,"error_code":400,"description":"Bad Request: bot `+tgToken+` is confused"}`))
	_, err := sender(f).Send(context.Background(), "telegram:1", "x")
	noToken(t, err)
	if !errors.Is(err, ErrPlatform) || !strings.Contains(err.Error(), "<redacted>") {
		t.Errorf("%v, want ErrPlatform with the token redacted", err)
	}

	// A transport error on a URL that holds the token.
	dead := httptest.NewServer(http.NotFoundHandler())
	base := dead.URL
	dead.Close()
	s := &Sender{Env: testEnv, TelegramBaseURL: base, DiscordBaseURL: base, SlackBaseURL: base}
	for _, target := range []string{"telegram:1", "discord:1", "slack:C1"} {
		_, err := s.Send(context.Background(), target, "x")
		if err == nil {
			t.Fatalf("%s: sent to a closed server", target)
		}
		noToken(t, err)
		if !strings.Contains(err.Error(), target) {
			t.Errorf("%s: error %q does not name the target", target, err)
		}
	}

	// A redirect is not followed (it would carry the token elsewhere).
	f = newFake(t, reply(307, `{}`, "Location", "http://127.0.0.1:1/bot"+tgToken+"/sendMessage"))
	_, err = sender(f).Send(context.Background(), "telegram:1", "x")
	noToken(t, err)
	if !errors.Is(err, ErrPlatform) || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("%v, want a refused redirect", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestNonJSONAnswerBounded(t *testing.T) {
	page := "<html>" + strings.Repeat("Bad Gateway ", 10000) + "</html>"
	f := newFake(t, func(w http.ResponseWriter, _ request) {
		w.WriteHeader(502)
		io.WriteString(w, page)
	})
	for _, target := range []string{"telegram:1", "discord:1", "slack:C1"} {
		_, err := sender(f).Send(context.Background(), target, "x")
		noToken(t, err)
		if !errors.Is(err, ErrPlatform) || !strings.Contains(err.Error(), "HTTP 502") {
			t.Errorf("%s: %v, want ErrPlatform with HTTP 502", target, err)
		}
		if len(err.Error()) > 600 {
			t.Errorf("%s: error of %d bytes, want it bounded", target, len(err.Error()))
		}
	}
}

func TestDiscordRateLimitHeaderOnly(t *testing.T) {
	f := newFake(t, reply(429, `not json`, "Retry-After", "0"), reply(200, `{"id":"5"}`))
	res, err := sender(f).Send(context.Background(), "discord:1", "x")
	if err != nil || res.MessageID() != "5" || len(f.requests()) != 2 {
		t.Errorf("%v, %+v, %d requests", err, res, len(f.requests()))
	}
}

func TestHeaderRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"2": 2 * time.Second, "0.5": 500 * time.Millisecond, "-3": 0, "NaN": 0, "1e12": 24 * time.Hour,
	} {
		got, ok := headerRetryAfter(http.Header{"Retry-After": {v}})
		if !ok || got != want {
			t.Errorf("Retry-After %q = %v, %v; want %v", v, got, ok, want)
		}
	}
	if _, ok := headerRetryAfter(http.Header{"Retry-After": {"soon"}}); ok {
		t.Error("Retry-After soon accepted")
	}
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	if got, ok := headerRetryAfter(http.Header{"Retry-After": {past}}); !ok || got != 0 {
		t.Errorf("Retry-After in the past = %v, %v", got, ok)
	}
}

func TestTooLong(t *testing.T) {
	f := newFake(t, reply(200, `{"id":"1"}`))
	_, err := sender(f).Send(context.Background(), "discord:1", strings.Repeat("x", DiscordMaxLength*MaxParts+1))
	if !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "discord:1") {
		t.Errorf("%v, want ErrTooLong", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestSlackUserDM(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r request) {
		if r.Path == "/api/conversations.open" {
			reply(200, `{"ok":true,"channel":{"id":"D0DM12345"}}`)(w, r)
			return
		}
		reply(200, `{"ok":true,"channel":"D0DM12345","ts":"1.5"}`)(w, r)
	})
	res, err := sender(f).Send(context.Background(), "slack:U0AB12CD3", "hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.ChatID != "D0DM12345" || res.MessageID() != "1.5" {
		t.Errorf("result %+v", res)
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	checkRequest(t, reqs[0], "/api/conversations.open", map[string]string{"Authorization": "Bearer " + slackToken}, map[string]any{"users": "U0AB12CD3"})
	checkRequest(t, reqs[1], "/api/chat.postMessage", nil, map[string]any{"channel": "D0DM12345", "text": "hi"})

	f = newFake(t, reply(200, `{"ok":false,"error":"user_not_found"}`))
	_, err = sender(f).Send(context.Background(), "slack:U0NOPE", "hi")
	noToken(t, err)
	if !errors.Is(err, ErrPlatform) || !strings.Contains(err.Error(), "user_not_found") || !strings.Contains(err.Error(), "direct message") {
		t.Errorf("%v, want ErrPlatform naming user_not_found", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
