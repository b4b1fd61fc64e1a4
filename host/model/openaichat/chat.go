// Package openaichat is the model client's one link to
// github.com/openai/openai-go/v3: a streamed chat completion with tool
// calls, retries, the response bound and typed errors. Only the
// hermes-model-openai process links it (cmd/hermes-model-openai); the
// hermes binary reaches it through host/model, so that openai-go's
// initialisation (about 3 ms and 270 KB) is paid by the calls that use a
// model, not by every command.
package openaichat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// Client calls one OpenAI-compatible endpoint. It is safe for concurrent
// use.
type Client struct {
	s   *model.Settings
	svc openai.ChatCompletionService
}

// New returns a client of the endpoint s describes; httpClient nil is a
// default one. Nothing is read from the process environment: the endpoint
// and key are s's.
func New(s *model.Settings, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(s.BaseURL + "/"),
		option.WithHTTPClient(httpClient),
		option.WithMaxRetries(s.MaxRetries),
		option.WithMaxRetryDelay(s.MaxRetryDelay),
		option.WithAPIKey(s.APIKey),
	}
	if s.APIKey == "" {
		// An endpoint without keys (a local server) gets no header.
		opts = append(opts, option.WithHeaderDel("Authorization"))
	}
	return &Client{s: s, svc: openai.NewChatCompletionService(opts...)}
}

// call watches one call's HTTP exchanges: how many were made, the last
// status and content type, whether the body passed the bound.
type call struct {
	limit int64

	mu          sync.Mutex
	attempts    int
	status      int
	contentType string
	tooLarge    bool
}

// middleware counts the attempts, notes the response's status and content
// type, and bounds its body.
func (w *call) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	w.mu.Lock()
	w.attempts++
	w.mu.Unlock()
	res, err := next(req)
	if res != nil {
		w.mu.Lock()
		w.status = res.StatusCode
		w.contentType, _, _ = mime.ParseMediaType(res.Header.Get("Content-Type"))
		w.mu.Unlock()
		if res.Body != nil {
			res.Body = &boundedBody{rc: res.Body, left: w.limit, w: w}
		}
	}
	return res, err
}

func (w *call) snapshot() (attempts, status int, contentType string, tooLarge bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.attempts, w.status, w.contentType, w.tooLarge
}

// errTooLarge ends a body past model.max_response_kb.
var errTooLarge = errors.New("response passed model.max_response_kb")

type boundedBody struct {
	rc   io.ReadCloser
	left int64
	w    *call
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.w.mu.Lock()
		b.w.tooLarge = true
		b.w.mu.Unlock()
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// Chat asks the model for one completion, streamed. Errors are *Error,
// with the key the client was configured with redacted in every form
// (model.Settings.RedactError): an endpoint that echoes what it refused
// never gets it shown.
func (c *Client) Chat(ctx context.Context, req model.Request) (*model.Response, error) {
	res, err := c.chat(ctx, req)
	return res, c.s.RedactError(err)
}

func (c *Client) chat(ctx context.Context, req model.Request) (*model.Response, error) {
	modelName := req.Model
	if modelName == "" {
		modelName = c.s.Default
	}
	if modelName == "" {
		return nil, model.NewError(&model.Error{Kind: model.KindNoModel, BaseURL: c.s.BaseURL}, c.s)
	}
	ctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	params := buildParams(modelName, req)
	w := &call{limit: c.s.MaxResponseBytes}
	stream := c.svc.NewStreaming(ctx, params, option.WithMiddleware(w.middleware))
	defer stream.Close()
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		if !acc.AddChunk(chunk) {
			return nil, c.fail(ctx, modelName, w, fmt.Errorf("chunk %d does not continue the stream", chunks), "a chunk does not continue the stream")
		}
		if req.OnText != nil {
			for _, ch := range chunk.Choices {
				if ch.Index == 0 && ch.Delta.Content != "" {
					req.OnText(ch.Delta.Content)
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, c.fail(ctx, modelName, w, err, "")
	}
	_, _, ct, _ := w.snapshot()
	if ct != "text/event-stream" {
		// A 200 that is no event stream: an HTML page, a JSON document
		// of another API.
		return nil, c.fail(ctx, modelName, w, nil, notStream(ct))
	}
	out := &model.Response{Model: acc.Model, Choices: len(acc.Choices)}
	if out.Model == "" {
		out.Model = modelName
	}
	out.Usage = model.Usage{Prompt: acc.Usage.PromptTokens, Completion: acc.Usage.CompletionTokens, Total: acc.Usage.TotalTokens}
	if len(acc.Choices) > 0 {
		ch := acc.Choices[0]
		out.Text = ch.Message.Content
		out.FinishReason = ch.FinishReason
		for _, tc := range ch.Message.ToolCalls {
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
	}
	return out, nil
}

func notStream(ct string) string {
	if ct == "" {
		return "it answered without a content type"
	}
	return "it answered with " + ct + ", not an event stream"
}

// fail turns what went wrong into an *Error, deciding on the status and
// on typed errors.
func (c *Client) fail(ctx context.Context, modelName string, w *call, err error, detail string) error {
	attempts, status, ct, tooLarge := w.snapshot()
	e := &model.Error{Model: modelName, BaseURL: c.s.BaseURL, Attempts: attempts, Status: status, Cause: err, Detail: c.clean(detail)}
	var apiErr *openai.Error
	var streamErr *ssestream.StreamError
	switch {
	case tooLarge || errors.Is(err, errTooLarge):
		e.Kind = model.KindTooLarge
	case errors.As(err, &apiErr):
		e.Status = apiErr.StatusCode
		isJSON := ct == "application/json"
		if isJSON && apiErr.Message != "" {
			e.Detail = c.clean(apiErr.Message)
		}
		switch {
		case apiErr.Code == "model_not_found":
			e.Kind = model.KindUnknownModel
		case !isJSON:
			// An error page, not an API's error object.
			e.Kind = model.KindNotCompatible
			e.Detail = c.clean(fmt.Sprintf("HTTP %d with %s", apiErr.StatusCode, orNone(ct)))
		case apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden:
			e.Kind = model.KindAuth
		case apiErr.StatusCode == http.StatusNotFound:
			e.Kind = model.KindUnknownModel
		case apiErr.StatusCode == http.StatusTooManyRequests:
			e.Kind = model.KindRateLimited
		case apiErr.StatusCode >= 500:
			e.Kind = model.KindServer
		default:
			e.Kind = model.KindRejected
		}
	case errors.As(err, &streamErr):
		// An error event in the middle of the stream.
		e.Kind = model.KindRejected
		e.Detail = c.clean(streamErr.Message)
	case errors.Is(err, context.DeadlineExceeded) || (ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)):
		e.Kind = model.KindTimeout
		e.Detail = fmt.Sprintf("within model.timeout (%s)", c.s.Timeout)
	case errors.Is(err, context.Canceled):
		e.Kind = model.KindTimeout
		e.Detail = "the call was cancelled"
	case status == 0 && err != nil:
		e.Kind = model.KindUnreachable
		e.Detail = c.clean(rootCause(err).Error())
	default:
		e.Kind = model.KindNotCompatible
		if e.Detail == "" {
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			switch {
			case errors.As(err, &syn), errors.As(err, &typ):
				e.Detail = "a streamed chunk is not JSON of a chat completion chunk"
			case err != nil:
				e.Detail = c.clean(err.Error())
			}
		}
	}
	return model.NewError(e, c.s)
}

// clean is model.Clean of text with the key redacted first, so that a
// key is never cut into a fragment the redaction misses.
func (c *Client) clean(text string) string { return model.Clean(c.s.Redact(text)) }

func orNone(ct string) string {
	if ct == "" {
		return "no content type"
	}
	return ct
}

// rootCause is the innermost error of a chain of single wraps.
func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

func buildParams(modelName string, req model.Request) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(modelName),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if len(req.Stop) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.Stop}
	}
	for _, m := range req.Messages {
		p.Messages = append(p.Messages, messageParam(m))
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(params)}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	if req.ToolChoice == "required" && len(p.Tools) > 0 {
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoRequired))}
	}
	return p
}

func messageParam(m model.Message) openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case "system":
		return openai.SystemMessage(m.Text)
	case "tool":
		return openai.ToolMessage(m.Text, m.ToolCallID)
	case "assistant":
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Text != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Text)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	default:
		if len(m.Images) == 0 {
			return openai.UserMessage(m.Text)
		}
		var parts []openai.ChatCompletionContentPartUnionParam
		if m.Text != "" {
			parts = append(parts, openai.TextContentPart(m.Text))
		}
		for _, img := range m.Images {
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
				URL: "data:" + img.MIME + ";base64," + img.Data,
			}))
		}
		return openai.UserMessage(parts)
	}
}
