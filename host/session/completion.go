package session

import (
	"context"

	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/mark3labs/mcp-go/mcp"
)

// Complete asks the server to complete an argument (completion/complete):
// of a prompt or of a resource template, as req.Ref says.
func (s *Session) Complete(ctx context.Context, req mcpvalue.CompletionRequest) (mcpvalue.Completion, error) {
	var ref any
	switch req.Ref.Type {
	case mcpvalue.RefResource:
		ref = mcp.ResourceReference{Type: mcpvalue.RefResource, URI: req.Ref.URI}
	default:
		ref = mcp.PromptReference{Type: mcpvalue.RefPrompt, Name: req.Ref.Name}
	}
	res, err := s.Client.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{
		Ref:      ref,
		Argument: mcp.CompleteArgument{Name: req.Argument, Value: req.Value},
		Context:  mcp.CompleteContext{Arguments: req.Context},
	}})
	if err != nil {
		return mcpvalue.Completion{}, Classify(err)
	}
	return mcpvalue.Completion{Values: res.Completion.Values, Total: res.Completion.Total, HasMore: res.Completion.HasMore}, nil
}
