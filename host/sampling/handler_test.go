package sampling_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// newHost returns a Host asking the scripted model srv, keeping metrics in
// a temporary home.
func newHost(t *testing.T, srv *testmodel.Server) (*sampling.Host, string) {
	t.Helper()
	home := t.TempDir()
	s, err := model.Parse(map[string]any{"base_url": srv.URL, "default": "default-model", "max_retries": 0})
	if err != nil {
		t.Fatal(err)
	}
	s.APIKey = "sk-test"
	c := modelClient(t, s)
	return sampling.New(sampling.Options{Home: home, Model: func() (sampling.Chatter, error) { return c, nil }}), home
}

// modelClient returns a client of s whose model plugin is the one the
// tests built, started through a supervisor of the test's own.
func modelClient(t *testing.T, s *model.Settings) *model.Client { return testmodel.Client(t, s) }

func handler(t *testing.T, h *sampling.Host, name string, block map[string]any) *sampling.Handler {
	t.Helper()
	hd := h.Handler(&config.Server{Name: name, Sampling: block})
	if hd == nil {
		t.Fatal("no handler")
	}
	return hd
}

func ask(text string, maxTokens int) mcpvalue.SamplingRequest {
	return mcpvalue.SamplingRequest{
		Messages:  []mcpvalue.SamplingMessage{{Role: "user", Content: []mcpvalue.SamplingContent{textBlock(text)}}},
		MaxTokens: maxTokens,
	}
}

func textBlock(text string) mcpvalue.SamplingContent {
	return mcpvalue.SamplingContent{Type: mcpvalue.TypeText, Text: text}
}

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	var se *sampling.Error
	if !errors.As(err, &se) || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func TestSamplingAnswersWithPolicyApplied(t *testing.T) {
	srv := testmodel.New(t)
	srv.Script(testmodel.Reply{Text: "sampled text", PromptTokens: 3, CompletionTokens: 4})
	h, home := newHost(t, srv)
	hd := handler(t, h, "srv", map[string]any{"max_tokens_cap": 50})
	req := ask("hello", 1000)
	req.SystemPrompt = "You are a test."
	req.Temperature = 0.7
	req.ModelPreferences = mcpvalue.ModelPreferences{Hints: []string{"hinted-model"}}
	res, err := hd.Sample(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// The hint is not in allowed_models: the person's model.default is
	// asked.
	if len(res.Content) != 1 || res.Content[0].Type != mcpvalue.TypeText || res.Content[0].Text != "sampled text" || res.Role != "assistant" || res.StopReason != "endTurn" || res.Model != "default-model" {
		t.Fatalf("result %+v", res)
	}
	got := srv.Last(t)
	if got.MaxTokens() != 50 || got.Model() != "default-model" || got.Body["temperature"] != 0.7 {
		t.Errorf("request %s", got.Raw)
	}
	if msgs := got.Messages(); len(msgs) != 2 || msgs[0]["role"] != "system" || msgs[0]["content"] != "You are a test." {
		t.Errorf("messages %v", msgs)
	}
	// The config's model is used when no hint is allowed.
	hd = handler(t, h, "other", map[string]any{"model": "forced", "allowed_models": []any{"other-model"}})
	if _, err := hd.Sample(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if m := srv.Last(t).Model(); m != "forced" {
		t.Errorf("model %q, want forced", m)
	}
	if m := h.Metrics("srv"); m.Requests != 1 || m.Errors != 0 || m.TokensUsed != 7 {
		t.Errorf("metrics %+v", m)
	}
	if m := sampling.LoadMetrics(home)["srv"]; m.Requests != 1 || m.TokensUsed != 7 {
		t.Errorf("saved metrics %+v", m)
	}
}

func TestSamplingConvertsToolsBothWays(t *testing.T) {
	srv := testmodel.New(t)
	srv.Script(testmodel.Reply{ToolCalls: []testmodel.ToolCall{
		{ID: "c1", Name: "weather", Arguments: `{"city":"Oslo"}`},
		{ID: "c2", Name: "weather", Arguments: `not json`},
	}})
	h, _ := newHost(t, srv)
	hd := handler(t, h, "srv", nil)
	req := mcpvalue.SamplingRequest{
		Messages: []mcpvalue.SamplingMessage{
			{Role: "user", Content: []mcpvalue.SamplingContent{textBlock("look"), {Type: mcpvalue.TypeImage, Data: "AAAA", MIMEType: "image/png"}}},
			{Role: "assistant", Content: []mcpvalue.SamplingContent{{Type: mcpvalue.TypeToolUse, ID: "c0", Name: "weather", Input: json.RawMessage(`{"city":"Bergen"}`)}}},
			{Role: "user", Content: []mcpvalue.SamplingContent{{Type: mcpvalue.TypeToolResult, ToolUseID: "c0", Content: []mcpvalue.Content{{Type: mcpvalue.TypeText, Text: "rain"}}}}},
		},
		MaxTokens: 10,
		Tools: []mcpvalue.Tool{{Name: "weather", Description: "the weather",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
	}
	res, err := hd.Sample(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	calls := res.Content
	if len(calls) != 2 || res.StopReason != "toolUse" || calls[0].Type != mcpvalue.TypeToolUse || calls[1].Type != mcpvalue.TypeToolUse {
		t.Fatalf("result %#v", res)
	}
	if u := calls[0]; u.ID != "c1" || u.Name != "weather" || string(u.Input) != `{"city":"Oslo"}` {
		t.Errorf("first call %+v", u)
	}
	if u := calls[1]; string(u.Input) != `{"_raw":"not json"}` {
		t.Errorf("unparseable arguments %+v", u)
	}
	got := srv.Last(t)
	for _, want := range []string{`"url":"data:image/png;base64,AAAA"`, `"tool_call_id":"c0"`, `"content":"rain"`,
		`"arguments":"{\"city\":\"Bergen\"}"`, `"name":"weather"`, `"description":"the weather"`} {
		if !got.Contains(want) {
			t.Errorf("request lacks %s: %s", want, got.Raw)
		}
	}
	if m := h.Metrics("srv"); m.ToolUseCount != 1 {
		t.Errorf("metrics %+v", m)
	}
	if got.Contains(`"tool_choice"`) {
		t.Errorf("no toolChoice was asked, yet one was sent: %s", got.Raw)
	}

	// A server that requires a tool call gets tool_choice "required"; one
	// that forbids tools gets none offered.
	srv.Script(testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "c3", Name: "weather", Arguments: `{}`}}}, testmodel.Reply{Text: "no tools"})
	req.ToolChoice = mcpvalue.ToolChoiceRequired
	if _, err := hd.Sample(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := srv.Last(t); !got.Contains(`"tool_choice":"required"`) {
		t.Errorf("toolChoice required was not forwarded: %s", got.Raw)
	}
	req.ToolChoice = mcpvalue.ToolChoiceNone
	if _, err := hd.Sample(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := srv.Last(t); got.Contains(`"tools"`) || got.Contains(`"tool_choice"`) {
		t.Errorf("toolChoice none still offered tools: %s", got.Raw)
	}
}

func TestSamplingErrors(t *testing.T) {
	srv := testmodel.New(t)
	h, home := newHost(t, srv)
	ctx := context.Background()

	t.Run("rate limit", func(t *testing.T) {
		hd := handler(t, h, "rpm", map[string]any{"max_rpm": "2"})
		for range 2 {
			if _, err := hd.Sample(ctx, ask("hi", 5)); err != nil {
				t.Fatal(err)
			}
		}
		_, err := hd.Sample(ctx, ask("hi", 5))
		wantErr(t, err, "Sampling rate limit exceeded for server 'rpm' (2 requests/minute); raise sampling.max_rpm in the server's sampling: block")
		// The window is the server's, not the connection's.
		_, err = handler(t, h, "rpm", map[string]any{"max_rpm": 2}).Sample(ctx, ask("hi", 5))
		wantErr(t, err, "Sampling rate limit exceeded for server 'rpm' (2 requests/minute); raise sampling.max_rpm in the server's sampling: block")
		if m := sampling.LoadMetrics(home)["rpm"]; m.Requests != 4 || m.Errors != 2 {
			t.Errorf("saved metrics %+v", m)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		srv.Script(testmodel.Reply{Hang: true})
		_, err := handler(t, h, "slow", map[string]any{"timeout": 1}).Sample(ctx, ask("hi", 5))
		wantErr(t, err, "Sampling LLM call timed out after 1s for server 'slow'")
	})
	t.Run("call failed", func(t *testing.T) {
		srv.Script(testmodel.Reply{Status: 400})
		_, err := handler(t, h, "bad", nil).Sample(ctx, ask("hi", 5))
		if err == nil || !strings.HasPrefix(err.Error(), "Sampling LLM call failed: ") || !strings.Contains(err.Error(), "HTTP 400") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("no choices", func(t *testing.T) {
		srv.Script(testmodel.Reply{NoChoices: true})
		_, err := handler(t, h, "empty", nil).Sample(ctx, ask("hi", 5))
		wantErr(t, err, "LLM returned empty response (no choices) for server 'empty'")
	})
	tool := testmodel.Reply{ToolCalls: []testmodel.ToolCall{{ID: "c", Name: "t", Arguments: "{}"}}}
	t.Run("tool loops disabled", func(t *testing.T) {
		srv.Script(tool)
		_, err := handler(t, h, "noloop", map[string]any{"max_tool_rounds": 0}).Sample(ctx, ask("hi", 5))
		wantErr(t, err, "Tool loops disabled for server 'noloop' (max_tool_rounds=0)")
	})
	t.Run("tool loop limit", func(t *testing.T) {
		hd := handler(t, h, "loop", map[string]any{"max_tool_rounds": 2})
		// A text answer resets the count.
		srv.Script(tool, testmodel.Reply{Text: "done"}, tool, tool, tool)
		for i := range 4 {
			if _, err := hd.Sample(ctx, ask("hi", 5)); err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
		}
		_, err := hd.Sample(ctx, ask("hi", 5))
		wantErr(t, err, "Tool loop limit exceeded for server 'loop' (max 2 rounds)")
	})
	t.Run("bounds", func(t *testing.T) {
		hd := handler(t, h, "big", map[string]any{"max_messages": 2, "max_text_kb": 1, "max_image_kb": 1})
		req := ask("hi", 5)
		req.Messages = append(req.Messages, req.Messages[0], req.Messages[0])
		_, err := hd.Sample(ctx, req)
		wantErr(t, err, "Sampling request from server 'big' has 3 messages, more than sampling.max_messages (2); raise it in the server's sampling: block")
		_, err = hd.Sample(ctx, ask(strings.Repeat("x", 2048), 5))
		wantErr(t, err, "Sampling request from server 'big' has 2 KiB of text, more than sampling.max_text_kb (1); raise it in the server's sampling: block")
		req = ask("hi", 5)
		req.Messages[0].Content = []mcpvalue.SamplingContent{{Type: mcpvalue.TypeImage, Data: strings.Repeat("A", 4096), MIMEType: "image/png"}}
		_, err = hd.Sample(ctx, req)
		wantErr(t, err, "Sampling request from server 'big' has an image of 4 KiB, more than sampling.max_image_kb (1); raise it in the server's sampling: block")
	})
	t.Run("disabled", func(t *testing.T) {
		if hd := h.Handler(&config.Server{Name: "off", Sampling: map[string]any{"enabled": false}}); hd != nil {
			t.Fatal("a disabled server got a handler")
		}
	})
}
