// Package testmodel is a scripted OpenAI-compatible chat-completions
// server on loopback for tests: it answers POST /v1/chat/completions with
// the replies a test scripts (streamed text deltas, tool calls, parallel
// tool calls, 429 with Retry-After, 5xx, malformed chunks, a very long
// stream, an HTML page), checks the bearer key and the model like a real
// endpoint, and records every request it received so a test asserts what
// hermes sent.
package testmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// ToolCall is a function call a reply makes.
type ToolCall struct {
	ID, Name string
	// Arguments is the JSON text sent (split over two chunks).
	Arguments string
}

// Reply is one scripted answer. The zero Reply streams "ok".
type Reply struct {
	// Status, when not 0 or 200, answers with this status and an OpenAI
	// error object (Body replaces it); RetryAfter sets Retry-After.
	Status     int
	RetryAfter string
	// Body and ContentType replace the whole answer (an HTML page, a
	// JSON document of another API).
	Body        string
	ContentType string
	// Text is streamed in chunks of ChunkSize bytes (default 4), Repeat
	// times (a very long stream).
	Text      string
	ChunkSize int
	Repeat    int
	// ToolCalls are streamed after the text, each in its own chunks and
	// interleaved when there are several (parallel calls).
	ToolCalls []ToolCall
	// FinishReason defaults to "stop", or "tool_calls" with ToolCalls.
	FinishReason string
	// Raw are extra data: lines sent as they are, before [DONE]
	// (malformed chunks).
	Raw []string
	// NoChoices sends a chunk without choices and nothing else.
	NoChoices bool
	// Hang holds the answer until the client gives up (a model that
	// never answers).
	Hang bool
	// HangAfterText streams Text, then holds the rest until the client
	// gives up (text that must be shown before the answer ends).
	HangAfterText bool
	// Usage is reported in the last chunk.
	PromptTokens, CompletionTokens int
}

// Request is one request the server received.
type Request struct {
	// Authorization is the header as received.
	Authorization string
	// Body is the JSON body, decoded.
	Body map[string]any
	// Raw is the body as sent.
	Raw []byte
}

// Model returns the request's model.
func (r Request) Model() string { s, _ := r.Body["model"].(string); return s }

// MaxTokens returns the request's max_tokens (0 when absent).
func (r Request) MaxTokens() int { f, _ := r.Body["max_tokens"].(float64); return int(f) }

// Messages returns the request's messages.
func (r Request) Messages() []map[string]any {
	var out []map[string]any
	list, _ := r.Body["messages"].([]any)
	for _, m := range list {
		if mm, ok := m.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

// Server is a scripted endpoint. Its base URL ends in /v1.
type Server struct {
	URL string
	// Key, when set, is the bearer key the server accepts; any other gets
	// 401. Models, when set, are the models it serves; any other gets 404
	// model_not_found.
	Key    string
	Models []string
	// EchoKey makes the 401 of a wrong key quote the Authorization header
	// it received, as some proxies do.
	EchoKey bool

	srv *httptest.Server

	mu       sync.Mutex
	script   []Reply
	requests []Request
	// Default answers when the script is empty.
	def Reply
}

// New starts a server on loopback, closed when t ends.
func New(t testing.TB) *Server {
	s := &Server{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Script appends replies to the script, answered in order.
func (s *Server) Script(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, r...)
}

// SetDefault sets the reply given once the script is used up.
func (s *Server) SetDefault(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = r
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Last returns the last request received; it fails t when there is none.
func (s *Server) Last(t testing.TB) Request {
	t.Helper()
	r := s.Requests()
	if len(r) == 0 {
		t.Fatal("the scripted model received no request")
	}
	return r[len(r)-1]
}

func (s *Server) next() Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) == 0 {
		return s.def
	}
	r := s.script[0]
	s.script = s.script[1:]
	return r
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": code}})
	w.Write(b)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		apiError(w, http.StatusNotFound, "", "no such route "+r.URL.Path)
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{Authorization: r.Header.Get("Authorization"), Raw: raw}
	_ = json.Unmarshal(raw, &req.Body)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	key, models, echo := s.Key, s.Models, s.EchoKey
	s.mu.Unlock()
	if key != "" && req.Authorization != "Bearer "+key {
		msg := "Incorrect API key provided."
		if echo {
			msg = "Incorrect API key provided: " + req.Authorization + " (" + url.QueryEscape(strings.TrimPrefix(req.Authorization, "Bearer ")) + ")"
		}
		apiError(w, http.StatusUnauthorized, "invalid_api_key", msg)
		return
	}
	if len(models) > 0 && !slices.Contains(models, req.Model()) {
		apiError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model()))
		return
	}
	rep := s.next()
	if rep.Hang {
		<-r.Context().Done()
		return
	}
	if rep.Body != "" {
		ct := rep.ContentType
		if ct == "" {
			ct = "text/html; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		if rep.Status != 0 {
			w.WriteHeader(rep.Status)
		}
		io.WriteString(w, rep.Body)
		return
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		apiError(w, rep.Status, "", fmt.Sprintf("scripted status %d", rep.Status))
		return
	}
	s.stream(r.Context(), w, req.Model(), rep)
}

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, modelName string, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": modelName,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if rep.NoChoices {
		send(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": modelName, "choices": []any{}})
		io.WriteString(w, "data: [DONE]\n\n")
		return
	}
	text := rep.Text
	if text == "" && len(rep.ToolCalls) == 0 && len(rep.Raw) == 0 {
		text = "ok"
	}
	size := rep.ChunkSize
	if size <= 0 {
		size = 4
	}
	repeat := max(rep.Repeat, 1)
	if !send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	for range repeat {
		for i := 0; i < len(text); i += size {
			if !send(chunk(map[string]any{"content": text[i:min(i+size, len(text))]}, nil)) {
				return
			}
		}
	}
	if rep.HangAfterText {
		<-ctx.Done()
		return
	}
	// Tool calls: the head of each, then the arguments in two halves,
	// interleaved across calls.
	for i, tc := range rep.ToolCalls {
		send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}}}, nil))
	}
	for half := range 2 {
		for i, tc := range rep.ToolCalls {
			a := tc.Arguments[:len(tc.Arguments)/2]
			if half == 1 {
				a = tc.Arguments[len(tc.Arguments)/2:]
			}
			send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": a}}}}, nil))
		}
	}
	for _, l := range rep.Raw {
		fmt.Fprintf(w, "data: %s\n\n", l)
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
		if len(rep.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	send(chunk(map[string]any{}, finish))
	pt, ct := rep.PromptTokens, rep.CompletionTokens
	send(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": modelName, "choices": []any{},
		"usage": map[string]any{"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}})
	io.WriteString(w, "data: [DONE]\n\n")
}

// HTML is a page a web server, not an API, answers with.
const HTML = "<!DOCTYPE html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>"

// Contains reports whether any message of r has text containing s.
func (r Request) Contains(s string) bool { return strings.Contains(string(r.Raw), s) }
