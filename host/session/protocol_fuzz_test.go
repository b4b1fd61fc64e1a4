package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// FuzzServerAnswers feeds arbitrary server answers to what the session
// reads of them itself: the result of server/discover, a tools/list page,
// and the state file. Nothing panics; a discover answer either passes as a
// result listing the revision asked for, or becomes an error.
func FuzzServerAnswers(f *testing.F) {
	f.Add([]byte(`{"supportedVersions":["2026-07-28"],"capabilities":{}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"supportedVersions":"2026-07-28"}`))
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":[1]}]}`))
	f.Add([]byte(`{"servers":{"ts":{"revision":"2025-11-25","entry":"x"}},"order":["ts"]}`))
	f.Add([]byte(`null`))
	home := f.TempDir()
	srv := &config.Server{Name: "ts", Command: "x"}
	f.Fuzz(func(t *testing.T, b []byte) {
		w := &watch{}
		req := mcptransport.JSONRPCRequest{Method: string(mcp.MethodServerDiscover), Params: map[string]any{
			"_meta": map[string]any{mcp.MetaKeyProtocolVersion: Latest}}}
		resp, err := w.checkDiscover(context.Background(), req, &mcptransport.JSONRPCResponse{Result: json.RawMessage(b)}, nil)
		if err != nil {
			t.Fatalf("checkDiscover returned a transport error: %v", err)
		}
		if resp.Error == nil {
			var r struct {
				SupportedVersions []string `json:"supportedVersions"`
			}
			if json.Unmarshal(resp.Result, &r) != nil || !slices.Contains(r.SupportedVersions, Latest) {
				t.Fatalf("passed a discover answer that does not list %s: %s", Latest, b)
			}
		}
		w.schemas.keep(json.RawMessage(b))
		tools := []mcp.Tool{{Name: "a"}, {Name: "b"}}
		w.schemas.fill(tools)
		for _, tl := range tools {
			if tl.RawInputSchema != nil && !json.Valid(tl.RawInputSchema) {
				t.Fatalf("kept an invalid schema %q", tl.RawInputSchema)
			}
		}
		if err := os.WriteFile(filepath.Join(home, MemoryFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if r := remembered(home, srv); r != "" && !slices.Contains(config.ProtocolRevisions, r) {
			t.Fatalf("remembered %q", r)
		}
	})
}
