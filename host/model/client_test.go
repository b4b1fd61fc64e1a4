package model_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

func settings(t *testing.T, url string) *model.Settings {
	t.Helper()
	s, err := model.Parse(map[string]any{"base_url": url, "default": "test-model", "max_retry_delay": 2})
	if err != nil {
		t.Fatal(err)
	}
	s.APIKey = "sk-test-key"
	return s
}

// client returns a client of s through the tests' model plugin.
func client(t testing.TB, s *model.Settings) *model.Client { return testmodel.Client(t, s) }

func chat(t *testing.T, s *model.Settings, req model.Request) (*model.Response, error) {
	t.Helper()
	return client(t, s).Chat(context.Background(), req)
}

func kindOf(t *testing.T, err error) *model.Error {
	t.Helper()
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T) is no *model.Error", err, err)
	}
	if strings.Contains(me.Error(), "\n") {
		t.Errorf("error is not one line: %q", me.Error())
	}
	return me
}

func TestChatStreamsTextAndSendsWhatWasAsked(t *testing.T) {
	srv := testmodel.New(t)
	srv.Key = "sk-test-key"
	srv.Script(testmodel.Reply{Text: "hello from the model", PromptTokens: 7, CompletionTokens: 5})
	var streamed strings.Builder
	temp := 0.5
	res, err := chat(t, settings(t, srv.URL), model.Request{
		Messages:    []model.Message{{Role: "system", Text: "be brief"}, {Role: "user", Text: "hi", Images: []model.Image{{MIME: "image/png", Data: "AAAA"}}}},
		MaxTokens:   42,
		Temperature: &temp,
		Tools:       []model.Tool{{Name: "echo", Description: "echoes", Parameters: map[string]any{"type": "object"}}},
		OnText:      func(d string) { streamed.WriteString(d) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello from the model" || streamed.String() != res.Text || res.FinishReason != "stop" {
		t.Fatalf("response %+v, streamed %q", res, streamed.String())
	}
	if res.Usage.Total != 12 {
		t.Errorf("usage %+v, want total 12", res.Usage)
	}
	req := srv.Last(t)
	if req.Model() != "test-model" || req.MaxTokens() != 42 || req.Body["stream"] != true || req.Body["temperature"] != 0.5 {
		t.Errorf("request body %s", req.Raw)
	}
	if !req.Contains(`"url":"data:image/png;base64,AAAA"`) || !req.Contains(`"name":"echo"`) {
		t.Errorf("image or tool missing from %s", req.Raw)
	}
	if req.Authorization != "Bearer sk-test-key" {
		t.Errorf("Authorization %q", req.Authorization)
	}
}

func TestChatParallelToolCalls(t *testing.T) {
	srv := testmodel.New(t)
	srv.Script(testmodel.Reply{ToolCalls: []testmodel.ToolCall{
		{ID: "call_1", Name: "a__echo", Arguments: `{"message":"one"}`},
		{ID: "call_2", Name: "b__add", Arguments: `{"a":1,"b":2}`},
	}})
	res, err := chat(t, settings(t, srv.URL), model.Request{Messages: []model.Message{{Role: "user", Text: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != "tool_calls" || len(res.ToolCalls) != 2 {
		t.Fatalf("response %+v", res)
	}
	if res.ToolCalls[0] != (model.ToolCall{ID: "call_1", Name: "a__echo", Arguments: `{"message":"one"}`}) ||
		res.ToolCalls[1] != (model.ToolCall{ID: "call_2", Name: "b__add", Arguments: `{"a":1,"b":2}`}) {
		t.Fatalf("tool calls %+v", res.ToolCalls)
	}
	// The calls go back to the model as the assistant's, with their results.
	_, err = chat(t, settings(t, srv.URL), model.Request{Messages: []model.Message{
		{Role: "user", Text: "go"},
		{Role: "assistant", ToolCalls: res.ToolCalls},
		{Role: "tool", ToolCallID: "call_1", Text: "one"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r := srv.Last(t); !r.Contains(`"tool_call_id":"call_1"`) || !r.Contains(`"arguments":"{\"a\":1,\"b\":2}"`) {
		t.Errorf("second request %s", r.Raw)
	}
}

func TestChatRetriesAfter429(t *testing.T) {
	srv := testmodel.New(t)
	srv.Script(testmodel.Reply{Status: 429, RetryAfter: "1"}, testmodel.Reply{Text: "after the wait"})
	res, err := chat(t, settings(t, srv.URL), model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "after the wait" || len(srv.Requests()) != 2 {
		t.Fatalf("response %+v after %d requests", res, len(srv.Requests()))
	}
}

func TestChatRetriesExhaustedSaySo(t *testing.T) {
	srv := testmodel.New(t)
	srv.SetDefault(testmodel.Reply{Status: 503})
	s := settings(t, srv.URL)
	s.MaxRetries = 1
	_, err := chat(t, s, model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	me := kindOf(t, err)
	if me.Kind != model.KindServer || me.Attempts != 2 || len(srv.Requests()) != 2 {
		t.Fatalf("kind %s attempts %d requests %d", me.Kind, me.Attempts, len(srv.Requests()))
	}
	if !strings.Contains(err.Error(), "after 2 attempt(s)") || !strings.Contains(err.Error(), "model.max_retries") {
		t.Errorf("error %q", err)
	}
	// A 429 whose Retry-After is past model.max_retry_delay is not waited for.
	srv2 := testmodel.New(t)
	srv2.SetDefault(testmodel.Reply{Status: 429, RetryAfter: "3600"})
	_, err = chat(t, settings(t, srv2.URL), model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindRateLimited || len(srv2.Requests()) != 1 {
		t.Fatalf("kind %s after %d requests: %v", me.Kind, len(srv2.Requests()), err)
	}
}

func TestChatErrorsSayWhatToDo(t *testing.T) {
	srv := testmodel.New(t)
	srv.Key = "sk-right"
	srv.Models = []string{"test-model"}
	s := settings(t, srv.URL)
	_, err := chat(t, s, model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindAuth || !strings.Contains(err.Error(), "$OPENAI_API_KEY") || strings.Contains(err.Error(), "sk-test-key") {
		t.Errorf("wrong key: %v", err)
	}
	s.APIKey = "sk-right"
	_, err = chat(t, s, model.Request{Model: "nope", Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindUnknownModel || !strings.Contains(err.Error(), "'nope'") {
		t.Errorf("unknown model: %v", err)
	}

	html := testmodel.New(t)
	html.SetDefault(testmodel.Reply{Body: testmodel.HTML})
	_, err = chat(t, settings(t, html.URL), model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindNotCompatible || !strings.Contains(err.Error(), "model.base_url") {
		t.Errorf("HTML page: %v", err)
	}
	html.SetDefault(testmodel.Reply{Body: testmodel.HTML, Status: 404})
	_, err = chat(t, settings(t, html.URL), model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindNotCompatible {
		t.Errorf("HTML 404: %v", err)
	}

	bad := testmodel.New(t)
	bad.SetDefault(testmodel.Reply{Text: "partial", Raw: []string{`{"choices": [ {"index": "zero"`}})
	_, err = chat(t, settings(t, bad.URL), model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindNotCompatible {
		t.Errorf("malformed chunk: %v", err)
	}

	// Nothing listens: a port that was free a moment ago.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s = settings(t, "http://"+addr+"/v1")
	s.MaxRetries = 0
	_, err = chat(t, s, model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindUnreachable {
		t.Errorf("unreachable: %v", err)
	}

	s.Default = ""
	_, err = chat(t, s, model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindNoModel {
		t.Errorf("no model: %v", err)
	}
}

func TestChatLongStreamIsBounded(t *testing.T) {
	srv := testmodel.New(t)
	line := strings.Repeat("x", 1000)
	srv.SetDefault(testmodel.Reply{Text: line, ChunkSize: 500, Repeat: 2000}) // about 2 MB of text
	s := settings(t, srv.URL)
	res, err := chat(t, s, model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Text) != 2000*1000 {
		t.Fatalf("text of %d bytes", len(res.Text))
	}
	s.MaxResponseBytes = 256 << 10
	_, err = chat(t, s, model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindTooLarge || !strings.Contains(err.Error(), "model.max_response_kb (256 KiB)") {
		t.Errorf("too large: %v", err)
	}
}

func TestChatTimeout(t *testing.T) {
	srv := testmodel.New(t)
	srv.SetDefault(testmodel.Reply{Status: 503})
	s := settings(t, srv.URL)
	s.MaxRetries = 10
	s.MaxRetryDelay = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := client(t, s).Chat(ctx, model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	if me := kindOf(t, err); me.Kind != model.KindTimeout && me.Kind != model.KindServer {
		t.Errorf("timeout: %v", err)
	}
}

// The text reaches OnText as it streams, before the answer ends: the
// model holds its answer after the text until the caller gives up.
func TestChatTextArrivesBeforeTheEnd(t *testing.T) {
	srv := testmodel.New(t)
	srv.Key = "sk-test-key"
	srv.Script(testmodel.Reply{Text: "early words", ChunkSize: 5, HangAfterText: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got strings.Builder
	seen := make(chan struct{})
	done := make(chan error, 1)
	c := client(t, settings(t, srv.URL))
	go func() {
		_, err := c.Chat(ctx, model.Request{
			Messages: []model.Message{{Role: "user", Text: "hi"}},
			OnText: func(d string) {
				mu.Lock()
				defer mu.Unlock()
				got.WriteString(d)
				if got.String() == "early words" {
					close(seen)
				}
			},
		})
		done <- err
	}()
	select {
	case <-seen:
	case err := <-done:
		t.Fatalf("the call ended (%v) before its text was handed on: %q", err, got.String())
	}
	select {
	case err := <-done:
		t.Fatalf("the call ended before it was cancelled: %v", err)
	default:
	}
	cancel()
	if err := <-done; kindOf(t, err).Kind != model.KindTimeout {
		t.Errorf("a cancelled call: %v", err)
	}
}
