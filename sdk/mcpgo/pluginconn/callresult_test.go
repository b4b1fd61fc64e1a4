package pluginconn_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"
	"github.com/mark3labs/mcp-go/mcp"
)

// A tools/call sent with a ResultSink has its result decoded by the
// adapter, exactly as mcp-go would decode it, and mcp-go gets an empty
// result in its place (so it makes none of its copies); without a sink, or
// for a result asking for more input, mcp-go gets the result as it came.
func TestResultSink(t *testing.T) {
	tr, _ := dial(t)
	text := strings.Repeat("x", 4<<20) + "\n\"é\""
	full := map[string]any{
		"_meta":             map[string]any{"k": "v"},
		"content":           []any{map[string]any{"type": "text", "text": text}, map[string]any{"type": "image", "data": "aGk=", "mimeType": "image/png"}},
		"structuredContent": map[string]any{"n": 1.0},
		"isError":           true,
	}
	b, _ := json.Marshal(full)
	want, err := mcp.ParseCallToolResult((*json.RawMessage)(&b))
	if err != nil {
		t.Fatal(err)
	}

	var sink pluginconn.ResultSink
	resp, err := tr.SendRequest(pluginconn.WithResultSink(context.Background(), &sink), req(1, "tools/call", full))
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Result) != `{"content":[]}` {
		t.Errorf("mcp-go got %.80s..., want the empty result", resp.Result)
	}
	got := sink.Take()
	if got == nil {
		t.Fatal("the sink holds no result")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the sink's result differs from mcp-go's:\n got %+v\nwant %+v", got.Meta, want.Meta)
	}

	// Without a sink: untouched.
	resp, err = tr.SendRequest(context.Background(), req(2, "tools/call", full))
	if err != nil || len(resp.Result) < 4<<20 {
		t.Fatalf("without a sink: %d bytes, %v", len(resp.Result), err)
	}
	// A result asking for more input is mcp-go's to handle.
	input := map[string]any{"resultType": "input_required", "requestState": "s", "inputRequests": map[string]any{}}
	resp, err = tr.SendRequest(pluginconn.WithResultSink(context.Background(), &sink), req(3, "tools/call", input))
	if err != nil || !strings.Contains(string(resp.Result), "input_required") || sink.Take() != nil {
		t.Fatalf("an input_required result: %s, %v", resp.Result, err)
	}
}
