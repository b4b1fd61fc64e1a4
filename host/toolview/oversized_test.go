package toolview

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A result over max_result_kb goes to a file in the cache: the model gets
// where it is, the limit and how to raise it, and its beginning; the file
// holds the whole text. Results within the limit are untouched.
func TestOversizedResultToFile(t *testing.T) {
	cache := NewMediaCache(t.TempDir())
	big := strings.Repeat("line of a huge result\n", 2000) // 44,000 bytes
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(big)}}

	var out struct {
		Result string `json:"result"`
	}
	got := renderCallResultMax("files", res, cache, 10<<10)
	if err := json.Unmarshal([]byte(got), &out); err != nil {
		t.Fatal(err)
	}
	if len(got) > 10<<10 {
		t.Fatalf("the model got %d bytes, over the 10 KiB limit", len(got))
	}
	for _, want := range []string{"MCP result too large for the model (44000 bytes", "max_result_kb is 10 for server 'files'", "read it with read_file", "It begins:]\nline of a huge result\n"} {
		if !strings.Contains(out.Result, want) {
			t.Errorf("result lacks %q:\n%.400s", want, out.Result)
		}
	}
	path := savedPath(t, out.Result)
	if b, err := os.ReadFile(path); err != nil || string(b) != big {
		t.Fatalf("the file holds %d bytes (%v), want the whole result", len(b), err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 || !strings.HasSuffix(path, ".txt") {
		t.Fatalf("%s: mode %v", path, fi.Mode().Perm())
	}

	small := renderCallResultMax("files", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok")}}, cache, 10<<10)
	if small != `{"result":"ok"}` {
		t.Fatalf("a small result became %s", small)
	}
	// The default limit is 512 KiB.
	if got := renderCallResult("files", res, cache); !strings.Contains(got, "line of a huge result") || strings.Contains(got, "too large") {
		t.Fatalf("44 KB under the default limit: %.200s", got)
	}
}

// Oversized structured content and error text go to files too; without a
// cache the model gets the limit and the beginning.
func TestOversizedOtherParts(t *testing.T) {
	cache := NewMediaCache(t.TempDir())
	rows := make([]int, 5000)
	structured := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("summary")}, StructuredContent: map[string]any{"rows": rows}}
	var out map[string]any
	if err := json.Unmarshal([]byte(renderCallResultMax("s", structured, cache, 4<<10)), &out); err != nil {
		t.Fatal(err)
	}
	text, _ := out["result"].(string)
	if _, has := out["structuredContent"]; has || !strings.HasPrefix(text, "summary\n[MCP structured content too large") {
		t.Fatalf("got %.300v", out)
	}
	if b, err := os.ReadFile(savedPath(t, text)); err != nil || !json.Valid(b) || !strings.HasSuffix(savedPath(t, text), ".json") {
		t.Fatalf("structured file: %v", err)
	}

	errText := "Authorization: Bearer sk-abcdefghijklmnop " + strings.Repeat("e", 8000)
	failed := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent(errText)}}
	if err := json.Unmarshal([]byte(renderCallResultMax("s", failed, cache, 4<<10)), &out); err != nil {
		t.Fatal(err)
	}
	msg, _ := out["error"].(string)
	if !strings.HasPrefix(msg, "[MCP error text too large") {
		t.Fatalf("error: %.200s", msg)
	}
	if b, _ := os.ReadFile(savedPath(t, msg)); strings.Contains(string(b), "sk-abcdefghijklmnop") || strings.Contains(msg, "sk-abcdefghijklmnop") {
		t.Fatal("a secret in an oversized error reached the file or the model")
	}

	big := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(strings.Repeat("y", 9000))}}
	got := renderCallResultMax("s", big, nil, 4<<10)
	if !strings.Contains(got, "could not be saved") || !strings.Contains(got, "max_result_kb is 4") || len(got) > 4<<10 {
		t.Fatalf("without a cache: %.300s", got)
	}
}

// A result over the media cap is saved in part, and says so.
func TestOversizedOverMediaCap(t *testing.T) {
	old := mediaCap
	mediaCap = 1000
	t.Cleanup(func() { mediaCap = old })
	cache := NewMediaCache(t.TempDir())
	got := renderCallResultMax("s", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(strings.Repeat("z", 3000))}}, cache, 100)
	var out struct{ Result string }
	_ = json.Unmarshal([]byte(got), &out)
	if !strings.Contains(out.Result, "its first 1000 bytes are saved to") {
		t.Fatalf("got %.300s", out.Result)
	}
	if b, _ := os.ReadFile(savedPath(t, out.Result)); len(b) != 1000 {
		t.Fatalf("the file holds %d bytes", len(b))
	}
}

// savedPath returns the file an oversized note names.
func savedPath(t *testing.T, note string) string {
	t.Helper()
	_, after, ok := strings.Cut(note, "saved to ")
	if !ok {
		t.Fatalf("no file in %.300s", note)
	}
	path, _, _ := strings.Cut(after, " (")
	return path
}

// Saving an oversized result costs memory of its own only for a small
// buffer: a result of tens of MB written to the cache must not leave as
// much garbage again behind it (the host holds the result already).
func TestOversizedSavedWithoutCopies(t *testing.T) {
	cache := NewMediaCache(t.TempDir())
	big := strings.Repeat("x", 8<<20)
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(big)}}
	renderCallResultMax("files", res, cache, 10<<10) // the folder exists, as it will
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := renderCallResultMax("files", res, cache, 10<<10)
	runtime.ReadMemStats(&after)
	if !strings.Contains(got, "saved to") {
		t.Fatalf("not saved: %.300s", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("rendering an 8 MB result allocated %d bytes; want under 1 MB (no copy of the text)", n)
	}
}
