package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/toolview"
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

// Call runs the tool the model knows as name with args, its arguments
// object as the model wrote it (nil or empty: {}), which is handed to the
// server as it is, and returns what the model gets: the rendered result
// (toolview.ReplyOf with the server's max_result_kb, or a utility
// renderer) whose Failed is the result's own isError flag, err nil. When
// the call could not produce a result (unknown or filtered tool, open
// breaker, transport down, timeout, failure) err is a *CallError and the
// reply is toolview.Failure of its message, ready for the model as well.
// The name is looked up once: the registry's snapshot maps it to its
// server and its tool.
func (m *Manager) Call(ctx context.Context, name string, args json.RawMessage) (toolview.Reply, error) {
	t, err := m.resolve(name)
	if err != nil {
		return failed(err)
	}
	if t.srv == nil {
		return failed(&CallError{Server: t.ref.Server, Tool: name, Code: failure.CodeUnknownServer,
			Msg: fmt.Sprintf("tool %s is not available: MCP server '%s' is not configured", name, t.ref.Server)})
	}
	if t.utility != "" {
		return t.srv.callUtility(ctx, t.utility, args)
	}
	res, err := t.srv.callTool(ctx, t.ref.Tool, args)
	if err != nil {
		return failed(err)
	}
	return toolview.ReplyOf(t.srv.cfg.Name, &res, m.media, t.srv.cfg.MaxResultBytes), nil
}

// target is where a call of a model-visible name goes.
type target struct {
	ref toolview.ToolRef
	// utility is "" for a server's own tool.
	utility string
	// srv is the server (nil: not configured), ann the tool's
	// annotations as the server lists it now (zero for a server that is
	// down).
	srv *server
	ann mcpvalue.Annotations
}

// resolve is where a call of the model-visible name goes: the server and
// MCP name, and the utility it is ("" for a server's own tool). A name
// that cannot be called is a *CallError saying why (Lookup's Err). Call
// and Resolve both resolve here, so what a gate decides on is what runs.
func (m *Manager) resolve(name string) (target, error) {
	l := m.Lookup(name)
	switch {
	case l.Availability == Available:
		return target{ref: toolview.ToolRef{Server: l.Def.Server, Tool: l.Def.OriginalName}, utility: l.Def.Utility,
			srv: l.rec.srv, ann: l.rec.ann}, nil
	case l.Availability == ServerDown && l.ref != nil:
		// A tool of a server that is down: the call revives it.
		t := target{ref: *l.ref, srv: m.server(l.ref.Server)}
		if isUtility(t.ref.Tool) && toolview.ToolName(t.ref.Server, t.ref.Tool) == name {
			t.utility = t.ref.Tool
		}
		return t, nil
	}
	return target{}, l.Err()
}

// CallTool calls tool (its MCP name) of server with args (a JSON object;
// nil: {}) with the same guards as Call (filter, breaker, reconnect) and
// returns the result, for callers that show it themselves (Render,
// RenderPerson). A tool the filter removes is refused.
func (m *Manager) CallTool(ctx context.Context, server, tool string, args json.RawMessage) (mcpvalue.CallResult, error) {
	s := m.server(server)
	if s == nil {
		return mcpvalue.CallResult{}, &CallError{Server: server, Tool: tool, Code: failure.CodeUnknownServer, Msg: fmt.Sprintf("MCP server '%s' is not configured", server)}
	}
	return s.callTool(ctx, tool, args)
}

// Render renders a result of server as Call gives it to the model.
func (m *Manager) Render(server string, res *mcpvalue.CallResult) string {
	return toolview.RenderCallResultMax(server, res, m.media, m.maxResult(server))
}

// RenderPerson renders a result of server for a person
// (toolview.RenderCallResultPerson), its media and oversized parts saved
// as for the model.
func (m *Manager) RenderPerson(server string, res *mcpvalue.CallResult) string {
	return toolview.RenderCallResultPerson(server, res, m.media, m.maxResult(server))
}

// maxResult is server's max_result_kb in bytes (0: the default).
func (m *Manager) maxResult(server string) int {
	if s := m.server(server); s != nil {
		return s.cfg.MaxResultBytes
	}
	return 0
}

func failed(err error) (toolview.Reply, error) {
	return toolview.Failure(err.Error()), err
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
func (s *server) callTool(ctx context.Context, tool string, args json.RawMessage) (mcpvalue.CallResult, error) {
	name := toolview.ToolName(s.cfg.Name, tool)
	if !s.filter.Allows(tool) {
		return mcpvalue.CallResult{}, &CallError{Server: s.cfg.Name, Tool: tool, Code: failure.CodeFiltered,
			Msg: fmt.Sprintf("tool %s is not available: it is filtered by tools.include/exclude of server %s", name, s.cfg.Name)}
	}
	if err := s.m.driftError(s.cfg.Name, tool); err != nil {
		return mcpvalue.CallResult{}, err
	}
	ok, probe, failures, left := s.brk.allow()
	if !ok {
		return mcpvalue.CallResult{}, &CallError{Server: s.cfg.Name, Tool: tool, Code: failure.CodeBreaker, Msg: breakerMessage(s.cfg.Name, failures, left)}
	}
	// Every call carries a progress token; the caller's callback, if any,
	// gets the notifications sent for it.
	token, unroute := s.progress.open(ProgressFrom(ctx))
	defer unroute()
	// What the server asks during the call goes to the caller's relay,
	// bounded by the server's entry (WithRelay).
	ctx, relayRefused := relayed(ctx, s.cfg)
	// Servers validate arguments as an object: none is sent as {} (Call).
	res, err := doCallGeneric(s, ctx, tool, func(ctx context.Context, c *conn) (mcpvalue.CallResult, error) {
		return c.sess.Call(ctx, tool, args, token)
	})
	switch {
	case err == nil:
		s.brk.success()
	case failure.Interrupted(err), relayRefused():
		// The caller gave up, or could not answer what the server asked
		// (a relay that refused); says nothing about the server.
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

func interrupted(s *server, what string, err error) *CallError {
	return &CallError{Server: s.cfg.Name, Tool: what, Code: failure.CodeCanceled, Err: err, Msg: "MCP call interrupted: the caller cancelled it"}
}

// callUtility runs a resource or prompt utility tool with its arguments
// object (decoded here, once). Utilities share the session rules of tool
// calls but not the breaker.
func (s *server) callUtility(ctx context.Context, kind string, raw json.RawMessage) (toolview.Reply, error) {
	media := s.m.media
	var args map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		_ = json.Unmarshal(raw, &args)
	}
	switch kind {
	case toolview.UtilityListResources:
		// Resources and resource templates, each paginated and bounded
		// as a listing is (ListResources, ListResourceTemplates).
		type listing struct {
			resources []mcpvalue.Resource
			templates []mcpvalue.ResourceTemplate
		}
		res, err := doCallGeneric(s, ctx, kind, func(ctx context.Context, c *conn) (listing, error) {
			r, err := ListResources(ctx, c.sess, s.cfg)
			if err != nil {
				return listing{}, err
			}
			t, err := ListResourceTemplates(ctx, c.sess, s.cfg)
			return listing{r, t}, err
		})
		if err != nil {
			return failed(err)
		}
		return toolview.Reply{Text: toolview.RenderResources(res.resources, res.templates)}, nil
	case toolview.UtilityReadResource:
		uri, _ := args["uri"].(string)
		if uri == "" {
			return toolview.Failure("Missing required parameter 'uri'"), &CallError{Server: s.cfg.Name, Tool: kind, Code: failure.CodeInvalid, Msg: "Missing required parameter 'uri'"}
		}
		res, err := doCallGeneric(s, ctx, kind, func(ctx context.Context, c *conn) ([]mcpvalue.ResourceContents, error) {
			return c.sess.ReadResource(ctx, uri)
		})
		if err != nil {
			return failed(err)
		}
		return toolview.Reply{Text: toolview.RenderReadResourceMax(s.cfg.Name, res, media, s.cfg.MaxResultBytes)}, nil
	case toolview.UtilityListPrompts:
		res, err := doCallGeneric(s, ctx, kind, func(ctx context.Context, c *conn) ([]mcpvalue.Prompt, error) {
			return c.sess.ListPrompts(ctx)
		})
		if err != nil {
			return failed(err)
		}
		return toolview.Reply{Text: toolview.RenderPromptList(res)}, nil
	case toolview.UtilityGetPrompt:
		name, _ := args["name"].(string)
		if name == "" {
			return toolview.Failure("Missing required parameter 'name'"), &CallError{Server: s.cfg.Name, Tool: kind, Code: failure.CodeInvalid, Msg: "Missing required parameter 'name'"}
		}
		pargs := promptArgs(args["arguments"])
		res, err := doCallGeneric(s, ctx, kind, func(ctx context.Context, c *conn) (*mcpvalue.PromptResult, error) {
			return c.sess.GetPrompt(ctx, name, pargs)
		})
		if err != nil {
			return failed(err)
		}
		return toolview.Reply{Text: toolview.RenderGetPromptMax(s.cfg.Name, res, media, s.cfg.MaxResultBytes)}, nil
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
