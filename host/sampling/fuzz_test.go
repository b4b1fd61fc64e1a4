package sampling_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/host/session"
)

// echoModel answers with what it was asked, counting messages: the fuzz
// target is the conversion of what a server sends, not the model.
type echoModel struct{}

func (echoModel) Chat(_ context.Context, req model.Request) (*model.Response, error) {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Text)
	}
	return &model.Response{Model: "echo", Text: "x", FinishReason: "stop", Choices: 1, Usage: model.Usage{Total: int64(n)}}, nil
}

// FuzzCreateMessage feeds arbitrary sampling/createMessage params, as a
// server would send them, through the session's conversion into hermes's
// values and the handler's into the model's: it never panics, and a
// request over the bounds is refused, not converted.
func FuzzCreateMessage(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{"x":1}}]},{"role":"user","content":{"type":"tool_result","toolUseId":"a","content":[{"type":"text","text":"r"}]}}],"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"audio","data":"AA","mimeType":"audio/wav"}]}],"systemPrompt":"s","temperature":2}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":null}],"modelPreferences":{"hints":[{"name":""}]}}`))
	h := sampling.New(sampling.Options{Model: func() (sampling.Chatter, error) { return echoModel{}, nil }})
	hd := h.Handler(&config.Server{Name: "fuzz", Sampling: map[string]any{"max_rpm": 1 << 30, "max_messages": 50, "max_text_kb": 4, "max_image_kb": 4}})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var params mcp.CreateMessageParams
		if json.Unmarshal(raw, &params) != nil {
			return
		}
		for i := range params.Messages {
			if c, err := mcp.ParseSamplingContent(params.Messages[i].Content); err == nil {
				params.Messages[i].Content = c
			}
		}
		res, err := hd.Sample(context.Background(), session.SamplingRequestValue(params))
		if err == nil && len(res.Content) == 0 {
			t.Fatal("no answer and no error")
		}
		if len(params.Messages) > 50 && err == nil {
			t.Fatalf("%d messages were converted past max_messages", len(params.Messages))
		}
	})
}
