package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Hostile selects an attack (flags --huge-result, --endless-message,
// --endless-event, --request-burst). A hostile server is written by hand
// rather than with mcp-go, so that what it sends is streamed and never held
// in its own memory: whatever memory a measurement sees is the client's.
// It answers initialize, ping and tools/list like any server and offers the
// tools attack (the attack), echo {message} and burst_stats; the attack
// starts when attack is called.
type Hostile struct {
	// HugeResult answers attack with a text result of this many bytes
	// (--huge-result BYTES).
	HugeResult int64
	// EndlessMessage answers attack with a message that never ends: over
	// stdio a line without a newline, over HTTP a chunked JSON body
	// (--endless-message).
	EndlessMessage bool
	// EndlessEvent answers attack (HTTP) with an SSE stream whose first
	// event never ends (--endless-event).
	EndlessEvent bool
	// RequestBurst sends this many sampling/createMessage requests back to
	// back when attack is called (over HTTP on the call's SSE response
	// stream), and answers the call once at most BurstPending of them are
	// left unanswered; burst_stats counts the client's answers
	// (--request-burst N).
	RequestBurst int
	// HangList offers tools, resources and prompts but never answers
	// tools/list, resources/list or prompts/list (--hang-list).
	HangList bool
	// DeepSchema adds a tool "deep" to tools/list whose input schema nests
	// this many levels of properties (--deep-schema N); the other tools are
	// listed as usual, in the same answer.
	DeepSchema int
	// LogFlood sends this many notifications/message entries (logger
	// "flood") back to back when attack is called, then answers the call
	// (--log-flood N; stdio).
	LogFlood int
	// ShellNames adds to tools/list the tools of ShellToolNames, whose
	// names are shell code, and those of ShellSafeToolNames
	// (--shell-names).
	ShellNames bool
}

// Active reports whether an attack is configured.
func (h Hostile) Active() bool {
	if h.ShellNames {
		return true
	}
	return h.HugeResult > 0 || h.EndlessMessage || h.EndlessEvent || h.RequestBurst > 0 ||
		h.HangList || h.DeepSchema > 0 || h.LogFlood > 0
}

// hangs reports whether the server never answers m.
func (h *hostile) hangs(m *rpcMsg) bool {
	switch m.Method {
	case "tools/list", "resources/list", "prompts/list":
		return h.cfg.Hostile.HangList
	}
	return false
}

// reply is the whole answer to a request that is not the attack.
func (h *hostile) reply(m *rpcMsg) []byte {
	res, ok := h.answer(m)
	if !ok {
		return errorResponse(m.ID, -32601, "method not found: "+m.Method)
	}
	b := response(m.ID, res)
	if m.Method == "tools/list" && h.cfg.Hostile.DeepSchema > 0 {
		// Written by hand: encoding/json refuses to write (or read)
		// values nested more than 10000 levels deep.
		at := bytes.Index(b, []byte(`"tools":[`)) + len(`"tools":[`)
		deep := `{"name":"deep","description":"A tool whose input schema is nested very deeply.","inputSchema":` + deepSchema(h.cfg.Hostile.DeepSchema) + `},`
		b = append(b[:at:at], append([]byte(deep), b[at:]...)...)
	}
	return b
}

// deepSchema is an object schema whose properties nest n levels deep.
func deepSchema(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(`{"type":"object","properties":{"a":`)
	}
	b.WriteString(`{"type":"string"}`)
	for range n {
		b.WriteString(`}}`)
	}
	return b.String()
}

// logNote is the i-th notification of a log flood.
func logNote(i int) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"flood line ` + strconv.Itoa(i) + `"}}`)
}

// BurstStats is what the burst_stats tool returns (as JSON text): how the
// client answered the requests of --request-burst. Refused counts error
// answers with code BurstRefusedCode, Failed other error answers.
type BurstStats struct {
	Sent     int64 `json:"sent"`
	Answered int64 `json:"answered"`
	Refused  int64 `json:"refused"`
	Failed   int64 `json:"failed"`
}

// BurstPending is how many requests of a burst may stay unanswered when
// the attack call is answered: a client's default bound on the requests it
// handles at once (Hermes's max_server_requests).
const BurstPending = 64

// BurstRefusedCode is the JSON-RPC error code a client refusing a request
// for being one too many is expected to use (-32000, "server error").
const BurstRefusedCode = -32000

// chunk is what attacks write at a time.
var chunk = []byte(strings.Repeat("x", 64<<10))

// rpcMsg is any JSON-RPC message.
type rpcMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error,omitempty"`
}

func (m *rpcMsg) isRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// hostile is the state of one hostile server.
type hostile struct {
	cfg   *Config
	stats struct{ sent, answered, refused, failed atomic.Int64 }
}

// answer returns the result of a request that is not the attack, or ok
// false when method is unknown.
func (h *hostile) answer(m *rpcMsg) (result any, ok bool) {
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.ProtocolVersion == "" {
			p.ProtocolVersion = "2025-11-25"
		}
		caps := map[string]any{"tools": map[string]any{}}
		if h.cfg.Hostile.HangList {
			caps["resources"], caps["prompts"] = map[string]any{}, map[string]any{}
		}
		if h.cfg.Hostile.LogFlood > 0 {
			caps["logging"] = map[string]any{}
		}
		return map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    caps,
			"serverInfo":      map[string]any{"name": h.cfg.Server.Name, "version": Version},
		}, true
	case "logging/setLevel":
		return map[string]any{}, true
	case "ping":
		return map[string]any{}, true
	case "tools/list":
		obj := map[string]any{"type": "object"}
		return map[string]any{"tools": append([]any{
			map[string]any{"name": "attack", "description": "Starts the attack this server was started with.", "inputSchema": obj},
			map[string]any{"name": "echo", "description": "Returns the message verbatim.", "inputSchema": map[string]any{
				"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}},
			map[string]any{"name": "burst_stats", "description": "How the client answered the requests of the burst.", "inputSchema": obj},
		}, h.shellTools()...)}, true
	case "tools/call":
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				Message string `json:"message"`
			} `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		switch p.Name {
		case "echo":
			return textResult(p.Arguments.Message), true
		case "burst_stats":
			b, _ := json.Marshal(BurstStats{Sent: h.stats.sent.Load(), Answered: h.stats.answered.Load(),
				Refused: h.stats.refused.Load(), Failed: h.stats.failed.Load()})
			return textResult(string(b)), true
		}
		return map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "no tool " + p.Name}}}, true
	}
	return nil, false
}

func textResult(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

// isAttack reports whether m calls the attack tool.
func isAttack(m *rpcMsg) bool {
	if m.Method != "tools/call" {
		return false
	}
	var p struct {
		Name string `json:"name"`
	}
	return json.Unmarshal(m.Params, &p) == nil && p.Name == "attack"
}

// answered is how many requests of the burst the client answered.
func (h *hostile) answered() int64 {
	return h.stats.answered.Load() + h.stats.refused.Load() + h.stats.failed.Load()
}

// awaitBurst waits until at most BurstPending requests of the burst are
// unanswered, or done is closed.
func (h *hostile) awaitBurst(done <-chan struct{}) bool {
	want := int64(h.cfg.Hostile.RequestBurst - BurstPending)
	for h.answered() < want {
		select {
		case <-done:
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

// count records the client's answer to one request of the burst.
func (h *hostile) count(m *rpcMsg) {
	switch {
	case m.Error != nil && m.Error.Code == BurstRefusedCode:
		h.stats.refused.Add(1)
	case m.Error != nil:
		h.stats.failed.Add(1)
	default:
		h.stats.answered.Add(1)
	}
}

func response(id json.RawMessage, result any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return b
}

func errorResponse(id json.RawMessage, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return b
}

// burstRequest is the i-th request of the burst.
func burstRequest(i int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":"burst-` + strconv.Itoa(i) +
		`","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],"maxTokens":8}}`)
}

// writeText writes n bytes of "x".
func writeText(w io.Writer, n int64) error {
	for n > 0 {
		c := chunk
		if int64(len(c)) > n {
			c = c[:n]
		}
		if _, err := w.Write(c); err != nil {
			return err
		}
		n -= int64(len(c))
	}
	return nil
}

// writeForever writes "x" until a write fails.
func writeForever(w io.Writer, flush func()) error {
	for {
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		flush()
	}
}

// hugePrefix opens a text result of the response to id; hugeSuffix closes
// it.
func hugePrefix(id json.RawMessage) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"`
}

const hugeSuffix = `"}]}}`

// runHostileStdio serves the hostile server on stdin and stdout.
func runHostileStdio(ctx context.Context, cfg *Config, stdin io.Reader, stdout io.Writer) error {
	h := &hostile{cfg: cfg}
	bw := bufio.NewWriterSize(stdout, 64<<10)
	var mu sync.Mutex // one message at a time on stdout
	send := func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		bw.Write(b)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if ctx.Err() != nil {
			return nil
		}
		var m rpcMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Method == "" && len(m.ID) > 0:
			h.count(&m)
		case !m.isRequest():
			// notifications
		case isAttack(&m):
			// The attack runs beside the reader, so that the client's
			// answers (to a burst) are read while it goes on.
			go h.attackStdio(&m, bw, &mu)
		case h.hangs(&m):
		default:
			_ = send(h.reply(&m))
		}
	}
	return nil
}

// attackStdio runs the attack in answer to the request m.
func (h *hostile) attackStdio(m *rpcMsg, bw *bufio.Writer, mu *sync.Mutex) {
	mu.Lock()
	defer mu.Unlock()
	a := h.cfg.Hostile
	switch {
	case a.HugeResult > 0:
		bw.WriteString(hugePrefix(m.ID))
		if writeText(bw, a.HugeResult) != nil {
			return
		}
		bw.WriteString(hugeSuffix + "\n")
	case a.EndlessMessage:
		bw.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`)
		_ = writeForever(bw, func() {})
		return
	case a.RequestBurst > 0:
		for i := 1; i <= a.RequestBurst; i++ {
			bw.Write(burstRequest(i))
			if bw.WriteByte('\n') != nil {
				return
			}
			h.stats.sent.Add(1)
		}
		if bw.Flush() != nil {
			return
		}
		mu.Unlock()
		h.awaitBurst(nil)
		mu.Lock()
		bw.Write(response(m.ID, textResult(fmt.Sprintf("sent %d requests", a.RequestBurst))))
		bw.WriteByte('\n')
	case a.LogFlood > 0:
		for i := 1; i <= a.LogFlood; i++ {
			bw.Write(logNote(i))
			if bw.WriteByte('\n') != nil {
				return
			}
		}
		bw.Write(response(m.ID, textResult(fmt.Sprintf("sent %d log entries", a.LogFlood))))
		bw.WriteByte('\n')
	default:
		bw.Write(response(m.ID, textResult("no attack")))
		bw.WriteByte('\n')
	}
	_ = bw.Flush()
}

// hostileHandler serves the hostile server over streamable HTTP at /mcp:
// POSTs are answered with JSON (the attack as configured), the GET stream
// is not offered (405), DELETE ends nothing.
func hostileHandler(cfg *Config) http.Handler {
	h := &hostile{cfg: cfg}
	mux := http.NewServeMux()
	mux.HandleFunc(MCPPath, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
		case http.MethodDelete:
			w.WriteHeader(http.StatusOK)
			return
		default:
			w.Header().Set("Allow", "POST, DELETE")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m rpcMsg
		if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&m); err != nil {
			http.Error(w, "bad JSON-RPC message", http.StatusBadRequest)
			return
		}
		switch {
		case m.Method == "" && len(m.ID) > 0:
			h.count(&m)
			w.WriteHeader(http.StatusAccepted)
			return
		case !m.isRequest():
			w.WriteHeader(http.StatusAccepted)
			return
		case isAttack(&m):
			h.attackHTTP(w, r, &m)
			return
		}
		if h.hangs(&m) {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if m.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "hostile-session")
		}
		_, _ = w.Write(h.reply(&m))
	})
	return mux
}

// attackHTTP answers the attack call m.
func (h *hostile) attackHTTP(w http.ResponseWriter, r *http.Request, m *rpcMsg) {
	a := h.cfg.Hostile
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	switch {
	case a.HugeResult > 0:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, hugePrefix(m.ID))
		if writeText(w, a.HugeResult) == nil {
			_, _ = io.WriteString(w, hugeSuffix)
		}
	case a.EndlessMessage:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, hugePrefix(m.ID))
		_ = writeForever(w, flush)
	case a.EndlessEvent:
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message\ndata: "+hugePrefix(m.ID))
		_ = writeForever(w, flush)
	case a.RequestBurst > 0:
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriterSize(w, 64<<10)
		for i := 1; i <= a.RequestBurst; i++ {
			bw.WriteString("event: message\ndata: ")
			bw.Write(burstRequest(i))
			if _, err := bw.WriteString("\n\n"); err != nil {
				return
			}
			h.stats.sent.Add(1)
		}
		_ = bw.Flush()
		flush()
		if !h.awaitBurst(r.Context().Done()) {
			return
		}
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", response(m.ID, textResult(fmt.Sprintf("sent %d requests", a.RequestBurst))))
		flush()
	}
}
