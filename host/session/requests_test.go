package session

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/mark3labs/mcp-go/mcp"
)

// wireParams decodes params as mcp-go's client does a server's request:
// JSON into the params, then each message's content read as MCP content.
func wireParams(t *testing.T, raw string) mcp.CreateMessageParams {
	t.Helper()
	var p mcp.CreateMessageParams
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	for i := range p.Messages {
		c, err := mcp.ParseSamplingContent(p.Messages[i].Content)
		if err != nil {
			t.Fatal(err)
		}
		p.Messages[i].Content = c
	}
	return p
}

// recordingSampler keeps the request it was given and answers with res or
// err.
type recordingSampler struct {
	got mcpvalue.SamplingRequest
	res mcpvalue.SamplingResult
	err error
}

func (r *recordingSampler) Sample(_ context.Context, req mcpvalue.SamplingRequest) (mcpvalue.SamplingResult, error) {
	r.got = req
	return r.res, r.err
}

// TestSamplingRequestValue: every part of a sampling request a server
// writes reaches hermes's value once: the messages' blocks of every kind
// (one block or a list), the model hints, the tools with their schemas as
// written, the tool choice and the metadata.
func TestSamplingRequestValue(t *testing.T) {
	p := wireParams(t, `{
		"messages": [
			{"role": "user", "content": {"type": "text", "text": "look"}},
			{"role": "user", "content": [
				{"type": "image", "data": "AAAA", "mimeType": "image/png"},
				{"type": "audio", "data": "BB", "mimeType": "audio/wav"},
				{"type": "resource_link", "uri": "file:///x", "name": "x"}]},
			{"role": "assistant", "content": {"type": "tool_use", "id": "c0", "name": "weather", "input": {"city": "Bergen"}}},
			{"role": "user", "content": {"type": "tool_result", "toolUseId": "c0", "isError": true,
				"content": [{"type": "text", "text": "rain"}], "structuredContent": {"mm": 3}}}
		],
		"modelPreferences": {"hints": [{"name": "small"}, {}], "costPriority": 0.5},
		"systemPrompt": "be brief", "includeContext": "thisServer", "temperature": 0.2,
		"maxTokens": 99, "stopSequences": ["END"], "metadata": {"k": "v"},
		"tools": [{"name": "weather", "description": "the weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
		"toolChoice": {"mode": "required"}
	}`)
	s := &recordingSampler{res: mcpvalue.SamplingResult{Role: "assistant", Content: []mcpvalue.SamplingContent{{Type: mcpvalue.TypeText, Text: "ok"}}}}
	if _, err := (samplingAdapter{s}).CreateMessage(context.Background(), mcp.CreateMessageRequest{CreateMessageParams: p}); err != nil {
		t.Fatal(err)
	}
	got := s.got
	if got.SystemPrompt != "be brief" || got.IncludeContext != "thisServer" || got.Temperature != 0.2 || got.MaxTokens != 99 ||
		!reflect.DeepEqual(got.StopSequences, []string{"END"}) || string(got.Metadata) != `{"k":"v"}` || got.ToolChoice != mcpvalue.ToolChoiceRequired {
		t.Errorf("request %+v", got)
	}
	if !reflect.DeepEqual(got.ModelPreferences, mcpvalue.ModelPreferences{Hints: []string{"small", ""}, CostPriority: 0.5}) {
		t.Errorf("model preferences %+v", got.ModelPreferences)
	}
	if len(got.Tools) != 1 || got.Tools[0].Name != "weather" || got.Tools[0].Description != "the weather" ||
		!strings.Contains(string(got.Tools[0].InputSchema), `"city":{"type":"string"}`) {
		t.Errorf("tools %+v", got.Tools)
	}
	if len(got.Messages) != 4 {
		t.Fatalf("%d messages, want 4", len(got.Messages))
	}
	want := []mcpvalue.SamplingMessage{
		{Role: "user", Content: []mcpvalue.SamplingContent{{Type: mcpvalue.TypeText, Text: "look"}}},
		{Role: "user", Content: []mcpvalue.SamplingContent{
			{Type: mcpvalue.TypeImage, Data: "AAAA", MIMEType: "image/png"},
			{Type: mcpvalue.TypeAudio, Data: "BB", MIMEType: "audio/wav"},
			{Type: mcpvalue.TypeResourceLink}}},
		{Role: "assistant", Content: []mcpvalue.SamplingContent{{Type: mcpvalue.TypeToolUse, ID: "c0", Name: "weather", Input: json.RawMessage(`{"city":"Bergen"}`)}}},
	}
	if !reflect.DeepEqual(got.Messages[:3], want) {
		t.Errorf("messages\n got %+v\nwant %+v", got.Messages[:3], want)
	}
	res := got.Messages[3]
	if res.Role != "user" || len(res.Content) != 1 {
		t.Fatalf("tool result message %+v", res)
	}
	if c := res.Content[0]; c.Type != mcpvalue.TypeToolResult || c.ToolUseID != "c0" || !c.IsError || string(c.Structured) != `{"mm":3}` ||
		len(c.Content) != 1 || c.Content[0].Type != mcpvalue.TypeText || c.Content[0].Text != "rain" {
		t.Errorf("tool result %+v", c)
	}

	// No toolChoice stays unsaid; an empty one is auto; a block the engine
	// cannot read is kept as one of no kind.
	v := SamplingRequestValue(mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: map[string]any{"type": "hologram"}}}})
	if v.ToolChoice != "" || len(v.Messages) != 1 || len(v.Messages[0].Content) != 1 || v.Messages[0].Content[0].Type != "" {
		t.Errorf("value %+v", v)
	}
	if v := SamplingRequestValue(mcp.CreateMessageParams{ToolChoice: &mcp.ToolChoice{}}); v.ToolChoice != mcpvalue.ToolChoiceAuto {
		t.Errorf("an empty toolChoice reads %q", v.ToolChoice)
	}
}

// TestSamplingResultOnTheWire: the host's answer reaches the server as
// before: a text answer as one content object, tool uses as a list with
// their input as the model wrote it; a handler's error goes out as it is,
// so that its JSON-RPC code is kept.
func TestSamplingResultOnTheWire(t *testing.T) {
	ctx := context.Background()
	s := &recordingSampler{res: mcpvalue.SamplingResult{Role: "assistant", Model: "m", StopReason: "endTurn",
		Content: []mcpvalue.SamplingContent{{Type: mcpvalue.TypeText, Text: "hello"}}}}
	res, err := (samplingAdapter{s}).CreateMessage(ctx, mcp.CreateMessageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); string(b) != `{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m","stopReason":"endTurn"}` {
		t.Errorf("text answer %s", b)
	}
	s.res = mcpvalue.SamplingResult{Role: "assistant", Model: "m", StopReason: "toolUse", Content: []mcpvalue.SamplingContent{
		{Type: mcpvalue.TypeToolUse, ID: "c1", Name: "weather", Input: json.RawMessage(`{"city":"Oslo"}`)}}}
	if res, err = (samplingAdapter{s}).CreateMessage(ctx, mcp.CreateMessageRequest{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); string(b) != `{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"weather","input":{"city":"Oslo"}}],"model":"m","stopReason":"toolUse"}` {
		t.Errorf("tool use answer %s", b)
	}
	coded := &codedErr{}
	s.err = coded
	if _, err := (samplingAdapter{s}).CreateMessage(ctx, mcp.CreateMessageRequest{}); err != coded {
		t.Errorf("error %v, want the handler's own", err)
	}
}

type codedErr struct{}

func (*codedErr) Error() string    { return "refused" }
func (*codedErr) JSONRPCCode() int { return -1 }

// recordingElicitor keeps the request it was given and answers res.
type recordingElicitor struct {
	got   mcpvalue.ElicitationRequest
	res   mcpvalue.ElicitationResult
	modes *mcpvalue.ElicitationCapability
}

func (r *recordingElicitor) Elicit(_ context.Context, req mcpvalue.ElicitationRequest) (mcpvalue.ElicitationResult, error) {
	r.got = req
	return r.res, nil
}

type modalElicitor struct{ recordingElicitor }

func (m *modalElicitor) Capability() mcpvalue.ElicitationCapability { return *m.modes }

// TestElicitationAdapter: a form's schema reaches the handler as the JSON
// the server wrote, a URL request its URL and id; an answer without
// content sends none, an accepted empty form sends {}; the modes a handler
// offers are declared, and a handler that names none is declared as
// mcp-go would.
func TestElicitationAdapter(t *testing.T) {
	ctx := context.Background()
	e := &recordingElicitor{res: mcpvalue.ElicitationResult{Action: mcpvalue.ElicitationDecline}}
	var schema any
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`), &schema)
	res, err := (elicitationAdapter{e}).Elicit(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: "m", RequestedSchema: schema}})
	if err != nil {
		t.Fatal(err)
	}
	if e.got.Message != "m" || e.got.Mode != "" || string(e.got.RequestedSchema) != `{"properties":{"a":{"type":"string"}},"type":"object"}` {
		t.Errorf("request %+v (schema %s)", e.got, e.got.RequestedSchema)
	}
	if b, _ := json.Marshal(res); string(b) != `{"action":"decline"}` {
		t.Errorf("decline %s", b)
	}
	e.res = mcpvalue.ElicitationResult{Action: mcpvalue.ElicitationAccept, Content: map[string]any{}}
	res, err = (elicitationAdapter{e}).Elicit(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{Mode: "url", Message: "m", URL: "https://x.test/", ElicitationID: "e1"}})
	if err != nil {
		t.Fatal(err)
	}
	if e.got.Mode != mcpvalue.ElicitationModeURL || e.got.URL != "https://x.test/" || e.got.ElicitationID != "e1" || e.got.RequestedSchema != nil {
		t.Errorf("URL request %+v", e.got)
	}
	if b, _ := json.Marshal(res); string(b) != `{"action":"accept","content":{}}` {
		t.Errorf("accept %s", b)
	}
	e.res = mcpvalue.ElicitationResult{}
	if _, err := (elicitationAdapter{e}).Elicit(ctx, mcp.ElicitationRequest{}); !errors.Is(err, errNoResult) {
		t.Errorf("an answer without an action: %v", err)
	}

	if c := elicitationCapability(e); !reflect.DeepEqual(c, &mcp.ElicitationCapability{}) {
		t.Errorf("a handler naming no mode is declared %+v", c)
	}
	m := &modalElicitor{recordingElicitor{modes: &mcpvalue.ElicitationCapability{Form: true, URL: true}}}
	if b, _ := json.Marshal(elicitationCapability(m)); string(b) != `{"form":{},"url":{}}` {
		t.Errorf("form and URL mode are declared %s", b)
	}
}

type fixedRoots []mcpvalue.Root

func (r fixedRoots) ListRoots(context.Context) ([]mcpvalue.Root, error) { return r, nil }

// TestRootsAdapter: the roots reach the server with their names, and no
// roots as an empty list.
func TestRootsAdapter(t *testing.T) {
	for _, tc := range []struct {
		roots fixedRoots
		want  string
	}{
		{nil, `{"roots":[]}`},
		{fixedRoots{{URI: "file:///p", Name: "p"}, {URI: "file:///q"}}, `{"roots":[{"uri":"file:///p","name":"p"},{"uri":"file:///q"}]}`},
	} {
		res, err := (rootsAdapter{tc.roots}).ListRoots(context.Background(), mcp.ListRootsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res); string(b) != tc.want {
			t.Errorf("roots %s, want %s", b, tc.want)
		}
	}
}
