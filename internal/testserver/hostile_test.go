package testserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/internal/testserver"
)

// rawStdio starts the binary with args and speaks JSON-RPC lines to it by
// hand, so that a test sees the bytes a hostile server writes.
type rawStdio struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
}

// startRaw starts the binary with args and performs the initialize
// handshake at 2025-11-25.
func startRaw(t *testing.T, args ...string) *rawStdio {
	t.Helper()
	r := startLines(t, args...)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if line := r.line(); !strings.Contains(line, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize answer: %s", line)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

// startLines starts the binary with args, without a handshake.
func startLines(t *testing.T, args ...string) *rawStdio {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &rawStdio{t: t, in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

func (r *rawStdio) send(msg string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, msg+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawStdio) line() string {
	r.t.Helper()
	s, err := r.out.ReadString('\n')
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return s
}

func callAttack(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"attack","arguments":{}}}`, id)
}

// A hostile server lists its tools and echoes like any server.
func TestHostileServesTools(t *testing.T) {
	r := startRaw(t, "--huge-result", "10")
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if line := r.line(); !strings.Contains(line, `"attack"`) || !strings.Contains(line, `"burst_stats"`) {
		t.Fatalf("tools/list: %s", line)
	}
	r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	if line := r.line(); !strings.Contains(line, `"text":"hi"`) {
		t.Fatalf("echo: %s", line)
	}
}

// --huge-result answers attack with one line holding exactly that many
// bytes of text.
func TestHostileHugeResult(t *testing.T) {
	const n = 3<<20 + 17
	r := startRaw(t, "--huge-result", strconv.Itoa(n))
	r.send(callAttack(7))
	var res struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.line()), &res); err != nil {
		t.Fatal(err)
	}
	if res.ID != 7 || len(res.Result.Content) != 1 || len(res.Result.Content[0].Text) != n {
		t.Fatalf("id %d, %d blocks", res.ID, len(res.Result.Content))
	}
}

// --endless-message writes a line that does not end.
func TestHostileEndlessMessage(t *testing.T) {
	r := startRaw(t, "--endless-message")
	r.send(callAttack(2))
	buf := make([]byte, 8<<20)
	if _, err := io.ReadFull(r.out, buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf, []byte(`{"jsonrpc":"2.0","method":"notifications/message"`)) || bytes.IndexByte(buf, '\n') >= 0 {
		t.Fatalf("want 8 MiB of one unterminated message, got %q...", buf[:80])
	}
}

// --request-burst sends N requests and answers the call; burst_stats counts
// the answers, refusals (-32000) apart.
func TestHostileRequestBurst(t *testing.T) {
	const n = 500
	r := startRaw(t, "--request-burst", strconv.Itoa(n))
	r.send(callAttack(2))
	var ids []string
	for len(ids) < n {
		line := r.line()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Method != "sampling/createMessage" {
			t.Fatalf("request %d: %s (%v)", len(ids), line, err)
		}
		ids = append(ids, string(m.ID))
	}
	// The call is answered once all but 64 are: answer all but 64.
	for i, id := range ids[:n-testserver.BurstPending] {
		if i%2 == 0 {
			r.send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32000,"message":"too many"}}`)
		} else {
			r.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}`)
		}
	}
	if line := r.line(); !strings.Contains(line, `"id":2`) || !strings.Contains(line, fmt.Sprintf("sent %d requests", n)) {
		t.Fatalf("call answer: %s", line)
	}
	for _, id := range ids[n-testserver.BurstPending:] {
		r.send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"gave up"}}`)
	}
	half := int64(n-testserver.BurstPending) / 2
	want := testserver.BurstStats{Sent: n, Answered: half, Refused: half, Failed: testserver.BurstPending}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"burst_stats","arguments":{}}}`)
		var res struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(r.line()), &res); err != nil || len(res.Result.Content) != 1 {
			t.Fatalf("burst_stats: %v", err)
		}
		var got testserver.BurstStats
		_ = json.Unmarshal([]byte(res.Result.Content[0].Text), &got)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("burst_stats = %+v, want %+v", got, want)
		}
	}
}

// hostilePost POSTs one JSON-RPC message to a hostile HTTP server.
func hostilePost(t *testing.T, base, msg string) *http.Response {
	t.Helper()
	resp, err := http.Post(base+testserver.MCPPath, "application/json", strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Over HTTP, --endless-message is a JSON body and --endless-event an SSE
// event that do not end.
func TestHostileHTTPEndless(t *testing.T) {
	for flag, ctype := range map[string]string{"--endless-message": "application/json", "--endless-event": "text/event-stream"} {
		t.Run(flag, func(t *testing.T) {
			base := startHTTP(t, "--http", "127.0.0.1:0", flag)
			init := hostilePost(t, base, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
			if init.Header.Get("Mcp-Session-Id") == "" {
				t.Fatal("no session id")
			}
			resp := hostilePost(t, base, callAttack(2))
			if got := resp.Header.Get("Content-Type"); got != ctype {
				t.Fatalf("content type %q, want %q", got, ctype)
			}
			buf := make([]byte, 8<<20)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatal(err)
			}
			if i := bytes.Index(buf, []byte("xxxx")); i < 0 || bytes.Contains(buf[i:], []byte("\n")) {
				t.Fatalf("want an unterminated message, got %q...", buf[:120])
			}
		})
	}
}
