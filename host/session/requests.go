package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/mark3labs/mcp-go/mcp"
)

// This file answers what a server asks of the host (sampling, elicitation,
// roots) through the host's own handlers: each adapter turns mcp-go's
// request into hermes's value once, and the handler's answer back once.
// A sampling or elicitation request tied to a call with a relay goes to
// the relay instead, as the server wrote it (relay.go). A
// handler's error goes to mcp-go as it is, so that a coded one
// (pluginconn.CodedError) keeps its JSON-RPC code.

// Sampler answers one server's sampling/createMessage: host/sampling's
// handler.
type Sampler interface {
	Sample(ctx context.Context, req mcpvalue.SamplingRequest) (mcpvalue.SamplingResult, error)
}

// Elicitor answers one server's elicitation/create: host/elicit's handler.
type Elicitor interface {
	Elicit(ctx context.Context, req mcpvalue.ElicitationRequest) (mcpvalue.ElicitationResult, error)
}

// ElicitationModes is an Elicitor that says which modes it offers; an
// Elicitor without it is declared with no mode named (form mode, as the
// protocol reads it).
type ElicitationModes interface {
	Capability() mcpvalue.ElicitationCapability
}

// RootsLister answers roots/list with the roots the host offers:
// host/roots's Set.
type RootsLister interface {
	ListRoots(ctx context.Context) ([]mcpvalue.Root, error)
}

// errNoResult is a handler's answer of neither a result nor an error.
var errNoResult = errors.New("the host's handler gave no answer")

// samplingAdapter is mcp-go's client.SamplingHandler over a Sampler.
type samplingAdapter struct{ s Sampler }

func (a samplingAdapter) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	if r, err := route(ctx, MethodSampling); err != nil {
		return nil, err
	} else if r != nil {
		return relaySampling(ctx, r, req)
	}
	res, err := a.s.Sample(ctx, SamplingRequestValue(req.CreateMessageParams))
	if err != nil {
		return nil, err
	}
	return samplingResult(res), nil
}

// SamplingRequestValue is a sampling/createMessage's params as hermes
// keeps them. Content mcp-go left decoded as plain JSON (a map, a list of
// maps) is read as MCP content; a block that cannot be read is kept as
// one of no kind.
func SamplingRequestValue(p mcp.CreateMessageParams) mcpvalue.SamplingRequest {
	v := mcpvalue.SamplingRequest{
		SystemPrompt: p.SystemPrompt, IncludeContext: p.IncludeContext,
		Temperature: p.Temperature, MaxTokens: p.MaxTokens, StopSequences: p.StopSequences,
	}
	if mp := p.ModelPreferences; mp != nil {
		v.ModelPreferences = mcpvalue.ModelPreferences{
			CostPriority: mp.CostPriority, SpeedPriority: mp.SpeedPriority, IntelligencePriority: mp.IntelligencePriority,
		}
		for _, h := range mp.Hints {
			v.ModelPreferences.Hints = append(v.ModelPreferences.Hints, h.Name)
		}
	}
	if p.Metadata != nil {
		v.Metadata = encodeValue(p.Metadata)
	}
	if len(p.Tools) > 0 {
		v.Tools = ToolValues(p.Tools)
	}
	if p.ToolChoice != nil {
		v.ToolChoice = string(p.ToolChoice.Mode)
		if v.ToolChoice == "" {
			v.ToolChoice = mcpvalue.ToolChoiceAuto
		}
	}
	if p.Messages != nil {
		v.Messages = make([]mcpvalue.SamplingMessage, 0, len(p.Messages))
	}
	for _, m := range p.Messages {
		msg := mcpvalue.SamplingMessage{Role: string(m.Role)}
		for _, b := range samplingBlocks(m.Content) {
			msg.Content = append(msg.Content, samplingContentValue(b))
		}
		v.Messages = append(v.Messages, msg)
	}
	return v
}

// samplingBlocks returns a message's content (one block or a list of
// them) as a list.
func samplingBlocks(c any) []any {
	switch x := c.(type) {
	case []mcp.Content:
		out := make([]any, len(x))
		for i := range x {
			out[i] = x[i]
		}
		return out
	case []any:
		return x
	case nil:
		return nil
	default:
		return []any{x}
	}
}

// samplingContentValue is one block of a sampling message as hermes keeps
// it.
func samplingContentValue(b any) mcpvalue.SamplingContent {
	if c, err := mcp.ParseSamplingContent(b); err == nil && c != nil {
		b = c
	}
	switch c := b.(type) {
	case mcp.TextContent:
		return mcpvalue.SamplingContent{Type: mcpvalue.TypeText, Text: c.Text}
	case *mcp.TextContent:
		return mcpvalue.SamplingContent{Type: mcpvalue.TypeText, Text: c.Text}
	case mcp.ImageContent:
		return mcpvalue.SamplingContent{Type: mcpvalue.TypeImage, Data: c.Data, MIMEType: c.MIMEType}
	case *mcp.ImageContent:
		return mcpvalue.SamplingContent{Type: mcpvalue.TypeImage, Data: c.Data, MIMEType: c.MIMEType}
	case mcp.AudioContent:
		return mcpvalue.SamplingContent{Type: mcpvalue.TypeAudio, Data: c.Data, MIMEType: c.MIMEType}
	case *mcp.AudioContent:
		return mcpvalue.SamplingContent{Type: mcpvalue.TypeAudio, Data: c.Data, MIMEType: c.MIMEType}
	case mcp.ToolUseContent:
		return toolUseValue(&c)
	case *mcp.ToolUseContent:
		return toolUseValue(c)
	case mcp.ToolResultContent:
		return toolResultValue(&c)
	case *mcp.ToolResultContent:
		return toolResultValue(c)
	case mcp.Content:
		return mcpvalue.SamplingContent{Type: ContentValue(c).Type}
	}
	// Content mcp-go could not read: nothing of it is used.
	return mcpvalue.SamplingContent{}
}

func toolUseValue(c *mcp.ToolUseContent) mcpvalue.SamplingContent {
	input, _ := json.Marshal(c.Input)
	return mcpvalue.SamplingContent{Type: mcpvalue.TypeToolUse, ID: c.ID, Name: c.Name, Input: input}
}

func toolResultValue(c *mcp.ToolResultContent) mcpvalue.SamplingContent {
	v := mcpvalue.SamplingContent{Type: mcpvalue.TypeToolResult, ToolUseID: c.ToolUseID, IsError: c.IsError, Content: ContentValues(c.Content)}
	switch {
	case len(c.RawStructuredContent) > 0 && json.Valid(c.RawStructuredContent):
		v.Structured = c.RawStructuredContent
	case c.StructuredContent != nil:
		v.Structured = encodeValue(c.StructuredContent)
	}
	return v
}

// samplingResult is the host's answer as mcp-go sends it: a single text
// block as one content object, anything else as a list.
func samplingResult(r mcpvalue.SamplingResult) *mcp.CreateMessageResult {
	out := &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.Role(r.Role)},
		Model:           r.Model, StopReason: r.StopReason,
	}
	if out.Role == "" {
		out.Role = mcp.RoleAssistant
	}
	if len(r.Content) == 1 && r.Content[0].Type == mcpvalue.TypeText {
		out.Content = mcp.NewTextContent(r.Content[0].Text)
		return out
	}
	content := make([]mcp.Content, 0, len(r.Content))
	for _, c := range r.Content {
		switch c.Type {
		case mcpvalue.TypeText:
			content = append(content, mcp.NewTextContent(c.Text))
		case mcpvalue.TypeImage:
			content = append(content, mcp.NewImageContent(c.Data, c.MIMEType))
		case mcpvalue.TypeAudio:
			content = append(content, mcp.NewAudioContent(c.Data, c.MIMEType))
		case mcpvalue.TypeToolUse:
			input := c.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			content = append(content, mcp.NewToolUseContent(c.ID, c.Name, input))
		}
	}
	out.Content = content
	return out
}

// elicitationAdapter is mcp-go's client.ElicitationHandler over an
// Elicitor.
type elicitationAdapter struct{ e Elicitor }

func (a elicitationAdapter) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	if r, err := route(ctx, MethodElicitation); err != nil {
		return nil, err
	} else if r != nil {
		return relayElicitation(ctx, r, req)
	}
	res, err := a.e.Elicit(ctx, ElicitationRequestValue(req.Params))
	if err != nil {
		return nil, err
	}
	if res.Action == "" {
		return nil, errNoResult
	}
	out := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(res.Action)}}
	if res.Content != nil {
		out.Content = res.Content
	}
	return out, nil
}

// ElicitationRequestValue is an elicitation/create's params as hermes keeps
// them: the requested schema as JSON.
func ElicitationRequestValue(p mcp.ElicitationParams) mcpvalue.ElicitationRequest {
	v := mcpvalue.ElicitationRequest{Mode: p.Mode, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
	if p.RequestedSchema != nil {
		v.RequestedSchema = encodeValue(p.RequestedSchema)
	}
	return v
}

// elicitationCapability is what e offers, as mcp-go declares it.
func elicitationCapability(e Elicitor) *mcp.ElicitationCapability {
	c := &mcp.ElicitationCapability{}
	m, ok := e.(ElicitationModes)
	if !ok {
		return c
	}
	modes := m.Capability()
	if modes.Form {
		c.Form = &struct{}{}
	}
	if modes.URL {
		c.URL = &struct{}{}
	}
	return c
}

// rootsAdapter is mcp-go's client.RootsHandler over a RootsLister.
type rootsAdapter struct{ r RootsLister }

func (a rootsAdapter) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	list, err := a.r.ListRoots(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the host's roots: %w", err)
	}
	out := &mcp.ListRootsResult{Roots: make([]mcp.Root, 0, len(list))}
	for _, r := range list {
		out.Roots = append(out.Roots, mcp.Root{URI: r.URI, Name: r.Name})
	}
	return out, nil
}
