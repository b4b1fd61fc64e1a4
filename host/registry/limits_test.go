package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
)

// A result over the server's max_message_mb fails the call at once with an
// error that names the server and the key to raise, instead of hanging
// until the call's timeout; the server reconnects and keeps serving.
func TestMessageLimitFailsTheCall(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	srv := tsServer(dir, "big")
	srv.MaxMessageBytes = 1 << 20
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	ce := callErr(t, m, "mcp_big_huge", map[string]any{"bytes": 2 << 20})
	for _, want := range []string{"big", "max_message_mb", "1 MB"} {
		if !strings.Contains(ce.Msg, want) {
			t.Errorf("error %q lacks %q", ce.Msg, want)
		}
	}
	// The connection ended; the server reconnects and serves again.
	eventually(t, 10*time.Second, "a call served after the reconnect", func() bool {
		out, err := call(m, context.Background(), "mcp_big_echo", map[string]any{"message": "still here"})
		return err == nil && strings.Contains(out, "still here")
	})
}

// read_resource and get_prompt results over the server's max_result_kb
// are held to it like tool results: the whole text goes to a file in the
// cache, and the model gets a note naming the file, the key and how to
// raise it, and the text's beginning. Under the limit they are inline.
func TestUtilityResultsHeldToMaxResult(t *testing.T) {
	t.Parallel()
	deps, dir, _ := liveEnv(t)
	srv := tsServer(dir, "rsrc", "--resources", "--prompts")
	srv.MaxResultBytes = 4 << 10
	m := startManager(t, registry.Options{Servers: []*config.Server{srv}, Deps: deps, Timings: fast()})
	id := strings.Repeat("a", 20<<10)

	savedFile := func(what, note string) string {
		t.Helper()
		for _, want := range []string{"MCP " + what + " too large for the model", "max_result_kb is 4 for server 'rsrc'", "raise it in config.yaml", "It begins:]"} {
			if !strings.Contains(note, want) {
				t.Fatalf("%s note lacks %q:\n%.600s", what, want, note)
			}
		}
		_, after, ok := strings.Cut(note, "saved to ")
		if !ok {
			t.Fatalf("no file in %.300s", note)
		}
		path, _, _ := strings.Cut(after, " (")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	out, err := call(m, context.Background(), "mcp_rsrc_read_resource", map[string]any{"uri": "test://items/" + id})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > 4<<10 {
		t.Errorf("read_resource gave the model %d bytes, over max_result_kb (4)", len(out))
	}
	note, _ := decode(t, out)["result"].(string)
	if whole := savedFile("resource", note); whole != `{"id":"`+id+`"}` {
		t.Errorf("the saved resource is %d bytes, want the whole text", len(whole))
	}

	out, err = call(m, context.Background(), "mcp_rsrc_get_prompt", map[string]any{"name": "summarize", "arguments": map[string]any{"text": id}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > 4<<10 {
		t.Errorf("get_prompt gave the model %d bytes, over max_result_kb (4)", len(out))
	}
	got := decode(t, out)
	note, _ = got["result"].(string)
	var whole struct {
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal([]byte(savedFile("prompt", note)), &whole); err != nil || len(whole.Messages) != 1 || whole.Messages[0].Content != "Summarize (short): "+id {
		t.Errorf("the saved prompt is not the whole prompt: %v", err)
	}
	if got["description"] != "A summary request" {
		t.Errorf("description %v", got["description"])
	}

	// Under the limit: inline, as before.
	r := mustCall(t, m, "mcp_rsrc_read_resource", map[string]any{"uri": "test://items/7"})
	if r["result"] != `{"id":"7"}` {
		t.Errorf("small resource = %v", r)
	}
	p := mustCall(t, m, "mcp_rsrc_get_prompt", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
	if msgs, _ := p["messages"].([]any); len(msgs) != 1 || !strings.Contains(fmt.Sprint(msgs[0]), "Say hello to Ada.") {
		t.Errorf("small prompt = %v", p)
	}
}
