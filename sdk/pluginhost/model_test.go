package pluginhost_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/model"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// scripted is a Model whose answer is the last user message's text:
// "fail" is an endpoint error, "block" waits for its context, "flood"
// streams n bytes of text, "echo-config" answers with the config it was
// opened with, anything else is streamed in deltas of one word.
type scripted struct {
	cfg     model.Config
	blocked chan struct{}
	once    sync.Once
}

func (s *scripted) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if ctx.Err() != nil {
		return model.Response{}, ctx.Err()
	}
	if len(req.Messages) == 0 {
		return model.Response{}, errors.New("no messages")
	}
	text := req.Messages[len(req.Messages)-1].Text
	switch text {
	case "fail":
		return model.Response{}, &model.Error{Kind: model.KindRateLimited, Status: 429, Attempts: 3, BaseURL: s.cfg.BaseURL, Detail: "slow down"}
	case "block":
		s.once.Do(func() { close(s.blocked) })
		<-ctx.Done()
		return model.Response{}, ctx.Err()
	case "flood":
		for range 64 {
			if ctx.Err() != nil {
				return model.Response{}, ctx.Err()
			}
			req.OnText(strings.Repeat("x", 1024))
		}
		return model.Response{Text: "flooded"}, nil
	case "echo-config":
		return model.Response{Text: s.cfg.APIKey + "|" + s.cfg.Default + "|" + s.cfg.Timeout.String()}, nil
	}
	var out strings.Builder
	for i, w := range strings.Fields(text) {
		if i > 0 {
			w = " " + w
		}
		out.WriteString(w)
		if req.OnText != nil {
			req.OnText(w)
		}
	}
	res := model.Response{Model: req.Model, Text: out.String(), FinishReason: "stop", Choices: 1, Usage: model.Usage{Prompt: 3, Completion: 4, Total: 7}}
	if len(req.Tools) > 0 {
		res.ToolCalls = []model.ToolCall{{ID: "c1", Name: req.Tools[0].Name, Arguments: `{"a":1}`}}
		res.FinishReason = "tool_calls"
	}
	return res, nil
}

func openModel(t *testing.T, opts pluginhost.ModelOptions) (*pluginhost.ModelClient, *scripted) {
	t.Helper()
	s := &scripted{blocked: make(chan struct{})}
	h := sdktest.ModelInProcess(t, func(_ context.Context, cfg model.Config) (model.Model, error) {
		s.cfg = cfg
		return s, nil
	})
	c, err := h.Open(context.Background(), model.Config{BaseURL: "http://model.test/v1", Default: "m", APIKey: "sk-secret", Timeout: 7e9}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func user(text string) model.Request {
	return model.Request{Messages: []model.Message{{Role: "user", Text: text}}}
}

func TestModelCompleteStreamsInOrder(t *testing.T) {
	c, _ := openModel(t, pluginhost.ModelOptions{})
	ctx := context.Background()
	words := strings.Repeat("one two three four five six seven eight nine ten ", 50)
	req := user(words)
	var mu sync.Mutex
	var got strings.Builder
	req.OnText = func(d string) { mu.Lock(); got.WriteString(d); mu.Unlock() }
	temp := 0.25
	req.Temperature, req.Model = &temp, "named"
	req.Tools = []model.Tool{{Name: "echo", Parameters: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number"}}}}}
	res, err := c.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(strings.Fields(words), " ")
	mu.Lock()
	streamed := got.String()
	mu.Unlock()
	if res.Text != want || streamed != want {
		t.Fatalf("answer %q, streamed %q", res.Text, streamed)
	}
	if res.Model != "named" || res.Usage.Total != 7 || res.Choices != 1 || len(res.ToolCalls) != 1 || res.ToolCalls[0].Arguments != `{"a":1}` {
		t.Errorf("response %+v", res)
	}
	// Without OnText nothing is streamed, and the answer is the same.
	if res, err := c.Complete(ctx, user("a b")); err != nil || res.Text != "a b" {
		t.Errorf("without OnText: %+v %v", res, err)
	}
	// The config crossed once, at Open, the key with it.
	if res, err := c.Complete(ctx, user("echo-config")); err != nil || res.Text != "sk-secret|m|7s" {
		t.Errorf("config: %+v %v", res, err)
	}
}

func TestModelCompletesConcurrently(t *testing.T) {
	c, _ := openModel(t, pluginhost.ModelOptions{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := strings.Repeat(string(rune('a'+i))+" ", 100)
			var got strings.Builder
			req := user(text)
			req.OnText = func(d string) { got.WriteString(d) }
			res, err := c.Complete(context.Background(), req)
			if err != nil || got.String() != res.Text || res.Text != strings.TrimSpace(text) {
				t.Errorf("completion %d: %v, streamed %q", i, err, got.String())
			}
		}()
	}
	wg.Wait()
}

func TestModelEndpointErrorKeepsItsKind(t *testing.T) {
	c, _ := openModel(t, pluginhost.ModelOptions{})
	_, err := c.Complete(context.Background(), user("fail"))
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T) is no *model.Error", err, err)
	}
	if me.Kind != model.KindRateLimited || me.Status != 429 || me.Attempts != 3 || me.Detail != "slow down" || me.BaseURL != "http://model.test/v1" {
		t.Errorf("error %+v", me)
	}
}

func TestModelCancelEndsTheCallNotThePlugin(t *testing.T) {
	c, s := openModel(t, pluginhost.ModelOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Complete(ctx, user("block"))
		done <- err
	}()
	<-s.blocked
	cancel()
	if err := <-done; sdk.ErrorCode(err) != sdk.CodeCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled completion: %v (code %q)", err, sdk.ErrorCode(err))
	}
	// The plugin serves the next one.
	if res, err := c.Complete(context.Background(), user("still here")); err != nil || res.Text != "still here" {
		t.Fatalf("after a cancel: %+v %v", res, err)
	}
}

func TestModelTextIsBounded(t *testing.T) {
	c, _ := openModel(t, pluginhost.ModelOptions{MaxTextBytes: 8 << 10})
	req := user("flood")
	n := 0
	req.OnText = func(d string) { n += len(d) }
	_, err := c.Complete(context.Background(), req)
	if sdk.ErrorCode(err) != sdk.CodeTooLarge {
		t.Fatalf("64 KiB of text past a bound of 8 KiB: %v", err)
	}
	if n > 8<<10 {
		t.Errorf("%d bytes of text handed on past the bound", n)
	}
	// A small answer over the response bound is refused too.
	c2, _ := openModel(t, pluginhost.ModelOptions{MaxResponseBytes: 64})
	if _, err := c2.Complete(context.Background(), user(strings.Repeat("word ", 40))); sdk.ErrorCode(err) != sdk.CodeTooLarge {
		t.Errorf("an answer over MaxResponseBytes: %v", err)
	}
}

func TestModelContractVersion(t *testing.T) {
	if pluginhost.ContractVersion(sdk.KindModel) != model.ContractVersion || model.ContractVersion < 1 {
		t.Fatalf("model contract version %d / %d", pluginhost.ContractVersion(sdk.KindModel), model.ContractVersion)
	}
}

// CheckModel passes a plugin that keeps the contract.
func TestCheckModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	sdktest.CheckModel(t, func(_ context.Context, cfg model.Config) (model.Model, error) {
		return &reachable{cfg: cfg}, nil
	}, model.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-check"})
}

// reachable answers a greeting when its endpoint answers HTTP, and an
// unreachable error (without the key) when nothing listens.
type reachable struct{ cfg model.Config }

func (r *reachable) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.BaseURL, nil)
	if err != nil {
		return model.Response{}, err
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return model.Response{}, ctx.Err()
		}
		return model.Response{}, &model.Error{Kind: model.KindUnreachable, BaseURL: r.cfg.BaseURL, Detail: "nothing answered"}
	}
	resp.Body.Close()
	if req.OnText != nil {
		req.OnText("hello")
	}
	return model.Response{Text: "hello"}, nil
}
