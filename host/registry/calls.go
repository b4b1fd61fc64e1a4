package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/mark3labs/mcp-go/mcp"
)

// CallError is a tool call that did not produce a tool result. Its message
// is what the model is told (redacted); its Code says why (package
// failure): failure.CodeFiltered, CodeNoSuchTool, CodeUnknownServer,
// CodeBreaker, CodeDown, CodeTimeout, CodeCanceled (the caller gave up),
// CodeInvalid, or for a failed request the code of the error behind it
// (CodeClosed, CodeSessionExpired, CodeRefused...).
type CallError struct {
	Server, Tool string
	Code         failure.Code
	Msg          string
	// Err is the underlying error, if any.
	Err error
}

func (e *CallError) Error() string { return e.Msg }
func (e *CallError) Unwrap() error { return e.Err }

// FailureCode returns e.Code.
func (e *CallError) FailureCode() failure.Code { return e.Code }

// Call runs the tool the model knows as name with args and returns the
// JSON string handed back to the model: the rendered result
// (toolview.RenderCallResultMax with the server's max_result_kb, or a
// utility renderer), which for a tool's own isError result is an
// {"error": ...} object with err nil. When the call
// could not produce a result (unknown or filtered tool, open breaker,
// transport down, timeout, failure) err is a *CallError and the string is
// toolview.ErrorResult of its message, ready for the model as well.
func (m *Manager) Call(ctx context.Context, name string, args map[string]any) (string, error) {
	ref, utility, err := m.resolve(name)
	if err != nil {
		return failed(err)
	}
	s := m.server(ref.Server)
	if s == nil {
		return failed(&CallError{Server: ref.Server, Tool: name, Code: failure.CodeUnknownServer,
			Msg: fmt.Sprintf("tool %s is not available: MCP server '%s' is not configured", name, ref.Server)})
	}
	if utility != "" {
		return s.callUtility(ctx, utility, args)
	}
	res, err := s.callTool(ctx, ref.Tool, args)
	if err != nil {
		return failed(err)
	}
	return toolview.RenderCallResultMax(s.cfg.Name, res, m.media, s.cfg.MaxResultBytes), nil
}

// resolve is where a call of the model-visible name goes: the server and
// MCP name, and the utility it is ("" for a server's own tool). A name
// that cannot be called is a *CallError saying why (Lookup's Err). Call
// and Resolve both resolve here, so what a gate decides on is what runs.
func (m *Manager) resolve(name string) (ref toolview.ToolRef, utility string, err error) {
	l := m.Lookup(name)
	switch {
	case l.Availability == Available:
		return toolview.ToolRef{Server: l.Def.Server, Tool: l.Def.OriginalName}, l.Def.Utility, nil
	case l.Availability == ServerDown && l.ref != nil:
		// A tool of a server that is down: the call revives it.
		ref = *l.ref
		if isUtility(ref.Tool) && toolview.ToolName(ref.Server, ref.Tool) == name {
			utility = ref.Tool
		}
		return ref, utility, nil
	}
	return toolview.ToolRef{}, "", l.Err()
}

// CallTool calls tool (its MCP name) of server with the same guards as
// Call (filter, breaker, reconnect) and returns the raw result, for callers
// that show it themselves. A tool the filter removes is refused.
func (m *Manager) CallTool(ctx context.Context, server, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	s := m.server(server)
	if s == nil {
		return nil, &CallError{Server: server, Tool: tool, Code: failure.CodeUnknownServer, Msg: fmt.Sprintf("MCP server '%s' is not configured", server)}
	}
	return s.callTool(ctx, tool, args)
}

// Render renders a raw result of server as Call would.
func (m *Manager) Render(server string, res *mcp.CallToolResult) string {
	max := 0
	if s := m.server(server); s != nil {
		max = s.cfg.MaxResultBytes
	}
	return toolview.RenderCallResultMax(server, res, m.media, max)
}

func failed(err error) (string, error) {
	return toolview.ErrorResult(err.Error()), err
}

func isUtility(tool string) bool {
	switch tool {
	case toolview.UtilityListResources, toolview.UtilityReadResource, toolview.UtilityListPrompts, toolview.UtilityGetPrompt:
		return true
	}
	return false
}

// timeout is the server's per-call timeout.
func (s *server) timeout() time.Duration {
	if s.cfg.Timeout > 0 {
		return s.cfg.Timeout
	}
	return 300 * time.Second
}

// callTool runs tools/call with the breaker, reconnect and timeout rules of
// REFERENCE §4.5.
func (s *server) callTool(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	name := toolview.ToolName(s.cfg.Name, tool)
	if !s.filter.Allows(tool) {
		return nil, &CallError{Server: s.cfg.Name, Tool: tool, Code: failure.CodeFiltered,
			Msg: fmt.Sprintf("tool %s is not available: it is filtered by tools.include/exclude of server %s", name, s.cfg.Name)}
	}
	if err := s.m.driftError(s.cfg.Name, tool); err != nil {
		return nil, err
	}
	if args == nil {
		// Servers validate arguments as an object; null is refused.
		args = map[string]any{}
	}
	ok, probe, failures, left := s.brk.allow()
	if !ok {
		return nil, &CallError{Server: s.cfg.Name, Tool: tool, Code: failure.CodeBreaker, Msg: breakerMessage(s.cfg.Name, failures, left)}
	}
	// Every call carries a progress token; the caller's callback, if any,
	// gets the notifications sent for it.
	token, unroute := s.progress.open(ProgressFrom(ctx))
	defer unroute()
	res, err := s.doCall(ctx, tool, func(ctx context.Context, c *conn) (*mcp.CallToolResult, error) {
		req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}}
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
		return c.sess.CallTool(ctx, req)
	})
	switch {
	case err == nil:
		s.brk.success()
	case failure.Interrupted(err):
		// The caller gave up; says nothing about the server.
		if probe {
			s.brk.release()
		}
	default:
		s.brk.failure()
	}
	return res, err
}

// doCall gets a live session (waiting for one while the transport is down),
// runs fn within the server's timeout, and on an expired session reconnects,
// waits for a new session and retries once.
func doCallGeneric[T any](s *server, ctx context.Context, what string, fn func(context.Context, *conn) (T, error)) (T, error) {
	var zero T
	timeout := s.timeout()
	c := s.begin()
	defer s.end()
	if c == nil || c.dead() {
		s.kick()
		c = s.waitConn(ctx, nil, s.sessionWait(timeout))
		if c == nil {
			if ctx.Err() != nil {
				return zero, interrupted(s, what, ctx.Err())
			}
			s.kick()
			return zero, &CallError{Server: s.cfg.Name, Tool: what, Code: failure.CodeDown,
				Msg: fmt.Sprintf("MCP server '%s' transport is down; reconnect requested. Do NOT retry this tool immediately — give it a few seconds to come back.", s.cfg.Name)}
		}
	}
	for attempt := 0; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		v, err := fn(callCtx, c)
		// What mcp-go's client returned gets its failure code here, once.
		err = failure.FromClient(err)
		// The server's timeout ran out: here, or first in the transport
		// plugin, which bounds its exchange with the same value.
		timedOut := ctx.Err() == nil && (callCtx.Err() == context.DeadlineExceeded || failure.Timeout(err))
		cancel()
		if err == nil {
			return v, nil
		}
		if failure.Closed(err) {
			// The end of the connection may trail the failed request by a
			// moment; wait for it so a dead connection is not retried.
			select {
			case <-c.sess.Done():
			case <-time.After(closedSettle):
			}
		}
		switch {
		case ctx.Err() != nil:
			return zero, interrupted(s, what, err)
		case timedOut:
			return zero, &CallError{Server: s.cfg.Name, Tool: what, Code: failure.CodeTimeout, Err: err,
				Msg: fmt.Sprintf("MCP call timed out after %ss", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))}
		case attempt == 0 && failure.Reconnect(err) && !c.dead():
			s.log.Info("session expired; reconnecting and retrying once", "tool", what)
			c.requestReconnect()
			next := s.waitConn(ctx, c, s.m.timings.ReconnectWait)
			if next == nil {
				return zero, &CallError{Server: s.cfg.Name, Tool: what, Code: failure.Of(err), Err: err,
					Msg: toolview.Redact(fmt.Sprintf("MCP call failed: session expired and MCP server '%s' did not reconnect within %s: %s",
						s.cfg.Name, s.m.timings.ReconnectWait, oneLine(err.Error())))}
			}
			c = next
			continue
		case c.dead() || failure.Closed(err):
			return zero, &CallError{Server: s.cfg.Name, Tool: what, Code: failure.Of(err), Err: err,
				Msg: toolview.Redact(fmt.Sprintf("MCP call failed: the connection to MCP server '%s' was lost during the call (%s); it is reconnecting. "+
					"The call may not have completed; check before retrying.", s.cfg.Name, oneLine(err.Error())))}
		default:
			return zero, &CallError{Server: s.cfg.Name, Tool: what, Code: failure.Of(err), Err: err,
				Msg: toolview.Redact("MCP call failed: " + oneLine(err.Error()))}
		}
	}
}

// closedSettle is how long a call that failed with a closed-connection
// error waits to see whether the connection really ended.
const closedSettle = 200 * time.Millisecond

func (s *server) doCall(ctx context.Context, what string, fn func(context.Context, *conn) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	return doCallGeneric(s, ctx, what, fn)
}

func interrupted(s *server, what string, err error) *CallError {
	return &CallError{Server: s.cfg.Name, Tool: what, Code: failure.CodeCanceled, Err: err, Msg: "MCP call interrupted: the caller cancelled it"}
}

// callUtility runs a resource or prompt utility tool. Utilities share the
// session rules of tool calls but not the breaker.
func (s *server) callUtility(ctx context.Context, kind string, args map[string]any) (string, error) {
	media := s.m.media
	switch kind {
	case toolview.UtilityListResources:
		// Resources and resource templates, each paginated and bounded
		// as a listing is (ListResources, ListResourceTemplates).
		type listing struct {
			resources []mcp.Resource
			templates []mcp.ResourceTemplate
		}
		res, err := doCallGeneric(s, ctx, kind, func(ctx context.Context, c *conn) (listing, error) {
			r, err := ListResources(ctx, c.sess.Client, s.cfg)
			if err != nil {
				return listing{}, err
			}
			t, err := ListResourceTemplates(ctx, c.sess.Client, s.cfg)
			return listing{r, t}, err
		})
		if err != nil {
			return failed(err)
		}
		return toolview.RenderResources(res.resources, res.templates), nil
	case toolview.UtilityReadResource:
		uri, _ := args["uri"].(string)
		if uri == "" {
			return toolview.MissingParamError("uri"), &CallError{Server: s.cfg.Name, Tool: kind, Code: failure.CodeInvalid, Msg: "Missing required parameter 'uri'"}
		}
		res, err := doCallGeneric(s, ctx, kind, func(ctx context.Context, c *conn) (*mcp.ReadResourceResult, error) {
			return c.sess.Client.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		})
		if err != nil {
			return failed(err)
		}
		return toolview.RenderReadResourceMax(s.cfg.Name, res, media, s.cfg.MaxResultBytes), nil
	case toolview.UtilityListPrompts:
		res, err := doCallGeneric(s, ctx, kind, func(ctx context.Context, c *conn) (*mcp.ListPromptsResult, error) {
			return c.sess.Client.ListPrompts(ctx, mcp.ListPromptsRequest{})
		})
		if err != nil {
			return failed(err)
		}
		return toolview.RenderPromptList(res), nil
	case toolview.UtilityGetPrompt:
		name, _ := args["name"].(string)
		if name == "" {
			return toolview.MissingParamError("name"), &CallError{Server: s.cfg.Name, Tool: kind, Code: failure.CodeInvalid, Msg: "Missing required parameter 'name'"}
		}
		pargs := promptArgs(args["arguments"])
		res, err := doCallGeneric(s, ctx, kind, func(ctx context.Context, c *conn) (*mcp.GetPromptResult, error) {
			return c.sess.Client.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: name, Arguments: pargs}})
		})
		if err != nil {
			return failed(err)
		}
		return toolview.RenderGetPromptMax(s.cfg.Name, res, media, s.cfg.MaxResultBytes), nil
	}
	return failed(&CallError{Server: s.cfg.Name, Tool: kind, Code: failure.CodeNoSuchTool, Msg: "unknown utility tool " + kind})
}

// promptArgs turns the arguments object into the string map prompts/get
// takes: strings as they are, other values as JSON.
func promptArgs(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		switch t := x.(type) {
		case string:
			out[k] = t
		case nil:
		default:
			b, err := json.Marshal(t)
			if err == nil {
				out[k] = string(b)
			}
		}
	}
	return out
}
