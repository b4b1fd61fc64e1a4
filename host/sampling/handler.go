package sampling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/statedb"
)

// Chatter is the model a Host asks: *model.Client.
type Chatter interface {
	Chat(ctx context.Context, req model.Request) (*model.Response, error)
}

// Options configure a Host.
type Options struct {
	// Model returns the model client, called at the first request (a
	// command that never samples never builds one). An error fails that
	// request as "Sampling LLM call failed: ...".
	Model func() (Chatter, error)
	// Home is $HERMES_HOME: the limits are counted in its state.db and
	// the metrics kept in its sampling_metrics.json; "" keeps both in
	// memory, for this process only.
	Home   string
	Logger hclog.Logger
	// Now is the clock of the limits; nil is time.Now.
	Now func() time.Time
}

// Host answers the sampling requests of every server of one process; it
// keeps each server's tool-round count and metrics across reconnections,
// by the server's state key (config.Server.StateKey: a project's server
// never shares the person's server's), and counts its limits in state.db.
type Host struct {
	opts   Options
	log    hclog.Logger
	budget budget

	modelOnce sync.Once
	chatter   Chatter
	modelErr  error

	mu      sync.Mutex
	servers map[string]*serverState
}

type serverState struct {
	mu         sync.Mutex
	toolRounds int
	metrics    Metrics
}

// New returns a Host.
func New(opts Options) *Host {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &Host{opts: opts, log: log.Named("sampling"), servers: map[string]*serverState{}}
	if opts.Home != "" {
		h.budget = &dbBudget{path: homedir.Dir(opts.Home).StateDB(), log: h.log}
	} else {
		h.budget = &memBudget{}
	}
	return h
}

// Close releases the state.db connection the limits are counted on.
func (h *Host) Close() error {
	if b, ok := h.budget.(*dbBudget); ok {
		return b.close()
	}
	return nil
}

func (h *Host) state(key string) *serverState {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.servers[key]
	if st == nil {
		st = &serverState{}
		h.servers[key] = st
	}
	return st
}

// Metrics returns what this process counted for the server with state
// key key (config.Server.StateKey; a config.yaml entry's is its name).
func (h *Host) Metrics(key string) Metrics {
	st := h.state(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.metrics
}

// Handler returns srv's sampling handler, or nil when its sampling: block
// turns sampling off (the capability is then not offered) or cannot be
// read (logged; a server with a broken policy gets no sampling). Check
// for nil before storing it in an interface.
func (h *Host) Handler(srv *config.Server) *Handler {
	p, err := ParsePolicy(srv.Sampling)
	if err != nil {
		h.log.Warn("sampling disabled for server: bad sampling: block", "server", srv.Name, "error", err.Error())
		return nil
	}
	if !p.Enabled {
		return nil
	}
	return &Handler{h: h, server: srv.Name, key: srv.StateKey(), policy: p, st: h.state(srv.StateKey())}
}

// Handler answers one server's sampling requests (session.Sampler) under
// its policy.
type Handler struct {
	h *Host
	// server is the name shown; key the state key everything is counted
	// under.
	server, key string
	policy      Policy
	st          *serverState
}

// Error is a refused or failed sampling request; its message is the one
// the server receives, with JSON-RPC code -1 as the original host sends
// (REFERENCE.md §6).
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// JSONRPCCode is the code the server receives: -1.
func (e *Error) JSONRPCCode() int { return -1 }

func errorf(format string, args ...any) error { return &Error{msg: fmt.Sprintf(format, args...)} }

func (h *Handler) audit(msg string, args ...any) {
	switch h.policy.LogLevel {
	case "debug":
		h.h.log.Debug(msg, args...)
	case "warning":
		h.h.log.Warn(msg, args...)
	default:
		h.h.log.Info(msg, args...)
	}
}

// Sample answers one sampling/createMessage.
func (h *Handler) Sample(ctx context.Context, req mcpvalue.SamplingRequest) (mcpvalue.SamplingResult, error) {
	res, tokens, err := h.createMessage(ctx, req)
	h.st.mu.Lock()
	h.st.metrics.Requests++
	h.st.metrics.TokensUsed += tokens
	if err != nil {
		h.st.metrics.Errors++
		h.st.metrics.LastError = err.Error()
	} else if res.StopReason == "toolUse" {
		h.st.metrics.ToolUseCount++
	}
	h.st.mu.Unlock()
	if h.h.opts.Home != "" {
		if perr := record(h.h.opts.Home, h.key, tokens, err, res.StopReason); perr != nil {
			h.h.log.Warn("cannot save sampling metrics", "error", perr.Error())
		}
	}
	if err != nil {
		h.audit("sampling request refused or failed", "server", h.server, "error", err.Error())
		return mcpvalue.SamplingResult{}, err
	}
	h.audit("sampling request answered", "server", h.server, "model", res.Model, "stop_reason", res.StopReason, "tokens", tokens)
	return res, nil
}

func (h *Handler) createMessage(ctx context.Context, params mcpvalue.SamplingRequest) (mcpvalue.SamplingResult, int64, error) {
	var none mcpvalue.SamplingResult
	p := h.policy
	modelName := h.chooseModel(params.ModelPreferences)
	mreq, err := h.convert(params)
	if err != nil {
		return none, 0, err
	}
	mreq.Model = modelName
	// The request is counted before the call, at its max_tokens; the
	// tokens it used replace that when it ends.
	id, err := h.h.budget.take(ctx, h.key, h.h.opts.Now(), statedb.SamplingLimits{
		PerMinute: p.MaxRPM, PerDay: p.MaxPerDay, TokensPerDay: p.MaxTokensPerDay,
	}, int64(mreq.MaxTokens))
	if err != nil {
		var le *statedb.SamplingLimitError
		if errors.As(err, &le) {
			return none, 0, limitError(h.server, p, le)
		}
		return none, 0, errorf("Sampling refused for server '%s': its requests cannot be counted (%s); check that $HERMES_HOME/state.db is writable", h.server, sanitize(err.Error()))
	}
	res, tokens, err := h.call(ctx, modelName, params, mreq)
	h.h.budget.settle(context.WithoutCancel(ctx), id, tokens)
	return res, tokens, err
}

// chooseModel returns the model the person chose for this server: the
// first of the server's hints that sampling.allowed_models lists, else
// sampling.model, else "" (model.default). A hint not listed is ignored:
// a server never spends the person's key on a model of its choosing.
func (h *Handler) chooseModel(prefs mcpvalue.ModelPreferences) string {
	for _, hint := range prefs.Hints {
		if hint != "" && slices.Contains(h.policy.AllowedModels, hint) {
			return hint
		}
	}
	for _, hint := range prefs.Hints {
		if hint != "" {
			h.h.log.Debug("model hint ignored: not in sampling.allowed_models", "server", h.server, "hint", hint)
			break
		}
	}
	return h.policy.Model
}

// call asks the model and converts its answer; tokens is what it used.
func (h *Handler) call(ctx context.Context, modelName string, params mcpvalue.SamplingRequest, mreq model.Request) (mcpvalue.SamplingResult, int64, error) {
	var none mcpvalue.SamplingResult
	p := h.policy
	h.h.modelOnce.Do(func() {
		if h.h.opts.Model == nil {
			h.h.modelErr = errors.New("no model client in this process")
			return
		}
		h.h.chatter, h.h.modelErr = h.h.opts.Model()
	})
	if h.h.modelErr != nil {
		return none, 0, errorf("Sampling LLM call failed: %s", sanitize(h.h.modelErr.Error()))
	}
	h.audit("sampling request", "server", h.server, "model", modelName, "messages", len(params.Messages), "max_tokens", mreq.MaxTokens, "tools", len(mreq.Tools))
	cctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	resp, err := h.h.chatter.Chat(cctx, mreq)
	if err != nil {
		var me *model.Error
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return none, 0, errorf("Sampling LLM call timed out after %gs for server '%s'", p.Timeout.Seconds(), h.server)
		}
		if errors.As(err, &me) && me.Kind == model.KindTimeout && ctx.Err() == nil {
			return none, 0, errorf("Sampling LLM call timed out after %gs for server '%s'", p.Timeout.Seconds(), h.server)
		}
		return none, 0, errorf("Sampling LLM call failed: %s", sanitize(err.Error()))
	}
	tokens := resp.Usage.Total
	if resp.Choices == 0 {
		return none, tokens, errorf("LLM returned empty response (no choices) for server '%s'", h.server)
	}
	if resp.FinishReason == "tool_calls" || len(resp.ToolCalls) > 0 {
		h.st.mu.Lock()
		if p.MaxToolRounds == 0 {
			h.st.toolRounds = 0
			h.st.mu.Unlock()
			return none, tokens, errorf("Tool loops disabled for server '%s' (max_tool_rounds=0)", h.server)
		}
		h.st.toolRounds++
		over := h.st.toolRounds > p.MaxToolRounds
		if over {
			h.st.toolRounds = 0
		}
		h.st.mu.Unlock()
		if over {
			return none, tokens, errorf("Tool loop limit exceeded for server '%s' (max %d rounds)", h.server, p.MaxToolRounds)
		}
		var content []mcpvalue.SamplingContent
		for _, tc := range resp.ToolCalls {
			content = append(content, mcpvalue.SamplingContent{Type: mcpvalue.TypeToolUse, ID: tc.ID, Name: tc.Name, Input: toolInput(tc.Arguments)})
		}
		return mcpvalue.SamplingResult{Role: "assistant", Content: content, Model: resp.Model, StopReason: "toolUse"}, tokens, nil
	}
	h.st.mu.Lock()
	h.st.toolRounds = 0
	h.st.mu.Unlock()
	stop := map[string]string{"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse"}[resp.FinishReason]
	if stop == "" {
		stop = "endTurn"
	}
	return mcpvalue.SamplingResult{
		Role:    "assistant",
		Content: []mcpvalue.SamplingContent{{Type: mcpvalue.TypeText, Text: sanitize(resp.Text)}},
		Model:   resp.Model, StopReason: stop,
	}, tokens, nil
}

// toolInput is a tool call's arguments as a tool use's input: the JSON the
// model wrote, else (not JSON, or none) {"_raw": what it wrote}.
func toolInput(args string) json.RawMessage {
	var input any
	if err := json.Unmarshal([]byte(args), &input); err != nil || args == "" {
		input = map[string]any{"_raw": args}
	}
	b, _ := json.Marshal(input)
	return b
}

// sanitize keeps credentials out of what goes back to a server.
func sanitize(s string) string { return toolview.Redact(s) }

// convert turns the server's request into the model's, within the
// policy's bounds.
func (h *Handler) convert(params mcpvalue.SamplingRequest) (model.Request, error) {
	p := h.policy
	if n := len(params.Messages); n > p.MaxMessages {
		return model.Request{}, errorf("Sampling request from server '%s' has %d messages, more than sampling.max_messages (%d); raise it in the server's sampling: block", h.server, n, p.MaxMessages)
	}
	maxTokens := p.MaxTokensCap
	if params.MaxTokens > 0 && params.MaxTokens < maxTokens {
		maxTokens = params.MaxTokens
	}
	out := model.Request{MaxTokens: maxTokens, Stop: params.StopSequences}
	if params.Temperature != 0 {
		t := params.Temperature
		out.Temperature = &t
	}
	text := len(params.SystemPrompt)
	if params.SystemPrompt != "" {
		out.Messages = append(out.Messages, model.Message{Role: "system", Text: params.SystemPrompt})
	}
	for _, m := range params.Messages {
		msgs, n, err := h.convertMessage(m)
		if err != nil {
			return out, err
		}
		text += n
		out.Messages = append(out.Messages, msgs...)
	}
	if text > p.MaxTextBytes {
		return out, errorf("Sampling request from server '%s' has %d KiB of text, more than sampling.max_text_kb (%d); raise it in the server's sampling: block", h.server, text>>10, p.MaxTextBytes>>10)
	}
	if params.ToolChoice != mcpvalue.ToolChoiceNone {
		for _, t := range params.Tools {
			def := toolview.ConvertTool(h.server, mcpvalue.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
			out.Tools = append(out.Tools, model.Tool{Name: t.Name, Description: t.Description, Parameters: def.Parameters})
		}
		if params.ToolChoice == mcpvalue.ToolChoiceRequired && len(out.Tools) > 0 {
			out.ToolChoice = "required"
		}
	}
	return out, nil
}

// convertMessage converts one sampling message; n is its text's size.
func (h *Handler) convertMessage(m mcpvalue.SamplingMessage) ([]model.Message, int, error) {
	role := m.Role
	if role != "assistant" {
		role = "user"
	}
	cur := model.Message{Role: role}
	var out []model.Message
	n := 0
	for _, c := range m.Content {
		switch c.Type {
		case mcpvalue.TypeText:
			cur.Text += c.Text
			n += len(c.Text)
		case mcpvalue.TypeImage:
			if err := h.checkImage(len(c.Data)); err != nil {
				return nil, 0, err
			}
			cur.Images = append(cur.Images, model.Image{MIME: c.MIMEType, Data: c.Data})
		case mcpvalue.TypeToolUse:
			cur.Role = "assistant"
			cur.ToolCalls = append(cur.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Name, Arguments: string(c.Input)})
			n += len(c.Input)
		case mcpvalue.TypeToolResult:
			t := resultText(c)
			n += len(t)
			out = append(out, model.Message{Role: "tool", ToolCallID: c.ToolUseID, Text: t})
		default:
			// Audio and what this version does not know: the model is
			// told something was left out.
			cur.Text += "[content omitted]"
		}
	}
	if cur.Text != "" || len(cur.Images) > 0 || len(cur.ToolCalls) > 0 || len(out) == 0 {
		out = append([]model.Message{cur}, out...)
	}
	return out, n, nil
}

func (h *Handler) checkImage(size int) error {
	if size > h.policy.MaxImageB64 {
		return errorf("Sampling request from server '%s' has an image of %d KiB, more than sampling.max_image_kb (%d); raise it in the server's sampling: block", h.server, size>>10, h.policy.MaxImageB64>>10)
	}
	return nil
}

// resultText is a tool result's text content, joined; without any, its
// structured content.
func resultText(c mcpvalue.SamplingContent) string {
	var parts []string
	for _, b := range c.Content {
		if b.Type == mcpvalue.TypeText {
			parts = append(parts, b.Text)
		}
	}
	if len(parts) == 0 && len(c.Structured) > 0 {
		parts = append(parts, string(c.Structured))
	}
	return strings.Join(parts, "\n")
}
