package pluginconn

import (
	"context"
	"encoding/json"
	"sync"

	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// A tools/call result is the one message a server may make as large as
// max_message_mb. mcp-go's client decodes it in several copies
// (mcp.ParseCallToolResult copies its content as raw JSON twice, then
// decodes the text), so a 60 MB result cost the host four times its size.
// A call whose context carries a ResultSink is decoded here instead, once,
// straight from the frame it arrived in: the text is the only copy, and the
// frame is let go before the caller renders it. mcp-go gets an empty
// result in its place, and the caller takes the real one from the sink.

// ResultSink receives the tools/call result the adapter decoded itself.
type ResultSink struct {
	mu  sync.Mutex
	res *mcp.CallToolResult
}

// Take returns the result decoded for the call, or nil when mcp-go's
// client decoded it (a result asking for more input, or one this decoder
// refused: mcp-go then reports why).
func (s *ResultSink) Take() *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.res
	s.res = nil
	return r
}

type sinkKey struct{}

// WithResultSink returns ctx carrying sink: a tools/call sent through this
// adapter with it has its result decoded into sink.
func WithResultSink(ctx context.Context, sink *ResultSink) context.Context {
	return context.WithValue(ctx, sinkKey{}, sink)
}

// emptyResult is what mcp-go decodes in place of a result held by a sink.
var emptyResult = json.RawMessage(`{"content":[]}`)

// callResult mirrors mcp.CallToolResult's own decoding, with the content
// items kept as spans of the frame rather than copies.
type callResult struct {
	Meta              *mcp.Meta         `json:"_meta,omitempty"`
	ResultType        mcp.ResultType    `json:"resultType,omitempty"`
	Content           []span            `json:"content"`
	StructuredContent span              `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
	InputRequests     mcp.InputRequests `json:"inputRequests,omitempty"`
	RequestState      string            `json:"requestState,omitempty"`
}

// sinkResult decodes resp's result into sink when it is a complete result
// and, if it did, puts emptyResult in its place, letting go of the frame.
func sinkResult(sink *ResultSink, resp *mcptransport.JSONRPCResponse) {
	if resp == nil || resp.Error != nil || len(resp.Result) == 0 {
		return
	}
	var raw callResult
	if json.Unmarshal(resp.Result, &raw) != nil || raw.Content == nil || raw.ResultType == mcp.ResultTypeInputRequired {
		return // mcp-go decodes it, and says what is wrong
	}
	res := &mcp.CallToolResult{Content: make([]mcp.Content, len(raw.Content)), IsError: raw.IsError}
	res.Meta = raw.Meta
	res.ResultType = raw.ResultType
	res.InputRequests = raw.InputRequests
	res.RequestState = raw.RequestState
	for i, item := range raw.Content {
		c, err := mcp.UnmarshalContent(item)
		if err != nil {
			return
		}
		res.Content[i] = c
		raw.Content[i] = nil
	}
	if len(raw.StructuredContent) > 0 {
		res.RawStructuredContent = append(json.RawMessage(nil), raw.StructuredContent...)
		if json.Unmarshal(raw.StructuredContent, &res.StructuredContent) != nil {
			return
		}
	}
	sink.mu.Lock()
	sink.res = res
	sink.mu.Unlock()
	resp.Result = emptyResult
}
