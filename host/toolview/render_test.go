package toolview

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// checkGolden compares got with testdata/<name>.golden after replacing the
// cache folder with $CACHE, so outputs are the same on every machine.
func checkGolden(t *testing.T, name, got string, cache *MediaCache) {
	t.Helper()
	if cache != nil {
		got = strings.ReplaceAll(got, cache.dir, "$CACHE")
	}
	file := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if got != strings.TrimSuffix(string(want), "\n") {
		t.Errorf("%s:\ngot  %s\nwant %s", file, got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("%s: output is not valid JSON: %s", file, got)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestRenderCallResultGolden(t *testing.T) {
	pdf := mcp.BlobResourceContents{URI: "file:///docs/report.pdf", MIMEType: "application/pdf", Blob: b64("%PDF-1.7 fake")}
	tests := []struct {
		name    string
		res     *mcp.CallToolResult
		noCache bool
	}{
		{"text", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("hello <b>&</b> wörld")}}, false},
		{"text_multi", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("one"), mcp.NewTextContent(""), mcp.NewTextContent("two")}}, false},
		{"empty", &mcp.CallToolResult{}, false},
		{"image_png", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(b64("PNGDATA"), "image/png")}}, false},
		{"image_jpeg", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(b64("JPEGDATA"), "image/jpeg; q=1")}}, false},
		{"image_bad_base64", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent("%%%secret", "image/png")}}, false},
		{"image_no_cache", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(b64("PNGDATA"), "image/png")}}, true},
		{"audio_wav", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(b64("RIFFDATA"), "audio/wav")}}, false},
		{"audio_unknown_mime", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(b64("???"), "audio/x-strange")}}, false},
		{"resource_link", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewResourceLink("file:///logs/app.log", "app.log", "the log", "text/plain")}}, false},
		{"resource_link_uri_only", &mcp.CallToolResult{Content: []mcp.Content{mcp.ResourceLink{Type: "resource_link", URI: "mem://x\ny"}}}, false},
		{"embedded_text", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "mem://t", Text: "inline body"})}}, false},
		{"embedded_blob", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(pdf)}}, false},
		{"embedded_blob_ext_from_uri", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "s3://bucket/data.parquet?v=2", Blob: b64("PAR1")})}}, false},
		{"embedded_blob_bad_base64", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "mem://bad", MIMEType: "application/pdf", Blob: "%%%"})}}, false},
		{"embedded_blob_no_cache", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(pdf)}}, true},
		{"mixed", &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("Here you go:"),
			mcp.NewImageContent(b64("PNGDATA"), "image/png"),
			&mcp.AudioContent{Type: "audio", Data: b64("MP3DATA"), MIMEType: "audio/mpeg"},
			&mcp.ResourceLink{Type: "resource_link", URI: "file:///a", Name: "a"},
			&mcp.EmbeddedResource{Type: "resource", Resource: &mcp.TextResourceContents{URI: "mem://t", Text: "embedded"}},
			mcp.NewEmbeddedResource(pdf),
			mcp.NewToolUseContent("id1", "x", nil),
		}}, false},
		{"structured_with_text", &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent(`{"temp":21}`)},
			StructuredContent: map[string]any{"temp": 21},
		}, false},
		{"structured_only", &mcp.CallToolResult{StructuredContent: map[string]any{"items": []any{1, "two"}}}, false},
		{"structured_raw", &mcp.CallToolResult{
			StructuredContent:    map[string]any{"n": 1.0},
			RawStructuredContent: json.RawMessage(`{"n": 12345678901234567890, "z": "<&>"}`),
		}, false},
		{"is_error", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
			mcp.NewTextContent("upstream said 401 for Bearer abc.def"),
			mcp.NewImageContent(b64("x"), "image/png"),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "mem://e", Text: "retry with api_key=sk-123"}),
		}}, false},
		{"is_error_empty", &mcp.CallToolResult{IsError: true}, false},
		{"nil_result", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := NewMediaCache(filepath.Join(t.TempDir(), "cache"))
			use := cache
			if tt.noCache {
				use = nil
			}
			got := renderCallResult("my-srv", tt.res, use)
			checkGolden(t, "render/"+tt.name, got, cache)
		})
	}
}

func TestRenderCallResultWritesMedia(t *testing.T) {
	cache := NewMediaCache(filepath.Join(t.TempDir(), "cache"))
	got := renderCallResult("s", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(b64("PNGDATA"), "image/png")}}, cache)
	want := filepath.Join(cache.dir, sha("PNGDATA")+".png")
	if !strings.Contains(got, "MEDIA:"+want) {
		t.Fatalf("result %s does not name %s", got, want)
	}
	data, err := os.ReadFile(want)
	if err != nil || string(data) != "PNGDATA" {
		t.Fatalf("media file: %q, %v", data, err)
	}
	st, _ := os.Stat(want)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", st.Mode().Perm())
	}
	dst, _ := os.Stat(cache.dir)
	if dst.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v", dst.Mode().Perm())
	}
	// Same content again: same path, no temporary files left behind.
	if again := renderCallResult("s", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(b64("PNGDATA"), "image/png")}}, cache); again != got {
		t.Errorf("second render differs: %s", again)
	}
	entries, _ := os.ReadDir(cache.dir)
	if len(entries) != 1 {
		t.Errorf("cache holds %d files, want 1", len(entries))
	}
}

func TestRenderSizeCap(t *testing.T) {
	saved := mediaCap
	mediaCap = 16
	defer func() { mediaCap = saved }()
	cache := NewMediaCache(filepath.Join(t.TempDir(), "cache"))

	// Base64 longer than the cap allows: refused before decoding.
	long := b64(strings.Repeat("A", 64))
	// Decodes to 17 bytes: passes the length precheck, fails the byte cap.
	just := b64(strings.Repeat("B", 17))
	if len(just) > maxBase64Len() {
		t.Fatalf("test data too long for the precheck: %d > %d", len(just), maxBase64Len())
	}
	tests := []struct {
		name    string
		content mcp.Content
	}{
		{"blob_precheck", mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "mem://big", MIMEType: "application/pdf", Blob: long})},
		{"blob_decoded", mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "mem://big", MIMEType: "application/pdf", Blob: just})},
		{"image_precheck", mcp.NewImageContent(long, "image/png")},
		{"image_decoded", mcp.NewImageContent(just, "image/png")},
		{"audio_precheck", mcp.NewAudioContent(long, "audio/wav")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderCallResult("s", &mcp.CallToolResult{Content: []mcp.Content{tt.content}}, cache)
			checkGolden(t, "render/too_large_"+tt.name, got, cache)
		})
	}
	if entries, _ := os.ReadDir(cache.dir); len(entries) != 0 {
		t.Errorf("oversized content was written: %v", entries)
	}
}

func TestMediaCacheErrors(t *testing.T) {
	var nilCache *MediaCache
	if _, err := nilCache.save([]byte("x"), "image/png", ""); err == nil {
		t.Error("nil cache saved")
	}
	// A file where the folder should be: the write fails and is reported.
	base := t.TempDir()
	blocker := filepath.Join(base, "cache")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := NewMediaCache(blocker)
	if _, err := c.save([]byte("x"), "image/png", ""); err == nil || !strings.Contains(err.Error(), blocker) {
		t.Errorf("error %v does not name the folder", err)
	}
	got := renderCallResult("s", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(b64("x"), "image/png")}}, c)
	if got != `{"result":"[MCP image could not be cached: image/png]"}` {
		t.Errorf("got %s", got)
	}
}

func TestExtensionFor(t *testing.T) {
	tests := []struct{ mime, hint, want string }{
		{"image/png", "", ".png"},
		{"IMAGE/JPEG; charset=x", "", ".jpg"},
		{"audio/mpeg", "", ".mp3"},
		{"application/x-unknown", "file:///a/b.TAR", ".tar"},
		{"", "s3://b/k.parquet?x=1#f", ".parquet"},
		{"", "mem://noext", ".bin"},
		{"", "mem://weird.ext/../x.$$", ".bin"},
		{"", "", ".bin"},
	}
	for _, tt := range tests {
		if got := extensionFor(tt.mime, tt.hint); got != tt.want {
			t.Errorf("extensionFor(%q, %q) = %q, want %q", tt.mime, tt.hint, got, tt.want)
		}
	}
}

func TestDecodeBase64Lenient(t *testing.T) {
	for _, in := range []string{"aGk=", "aGk", "aG\nk=", "aGk_", "aGk-"} {
		if _, err := decodeBase64(in); err != nil {
			t.Errorf("decodeBase64(%q): %v", in, err)
		}
	}
	if _, err := decodeBase64("%%%"); err == nil {
		t.Error("garbage decoded")
	}
}

func TestErrorResult(t *testing.T) {
	tests := []struct{ in, want string }{
		{"MCP call failed: boom", `{"error":"MCP call failed: boom"}`},
		{"auth failed with token=abc&x=1", `{"error":"auth failed with token=[REDACTED]&x=1"}`},
		{`quote " and <tag>`, `{"error":"quote \" and <tag>"}`},
	}
	for _, tt := range tests {
		if got := ErrorResult(tt.in); got != tt.want {
			t.Errorf("ErrorResult(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := MissingParamError("uri"); got != `{"error":"Missing required parameter 'uri'"}` {
		t.Errorf("MissingParamError = %s", got)
	}
}

// A value the renderer cannot encode becomes an error result. Structured
// content arrives as the JSON the server wrote (mcpvalue.CallResult), so
// only the encoder's own guard is left to see it.
func TestRenderUnencodableStructured(t *testing.T) {
	got := marshalJSON(struct {
		Result any `json:"result"`
	}{map[string]any{"f": func() {}}})
	if !strings.HasPrefix(got, `{"error":"render MCP result: `) || !json.Valid([]byte(got)) {
		t.Errorf("got %s", got)
	}
	// Structured content that is not JSON is not handed on.
	res := &mcpvalue.CallResult{Content: []mcpvalue.Content{mcpvalue.Text("ok")}, Structured: json.RawMessage(`{"a":`)}
	if got := RenderCallResult("s", res, nil); got != `{"result":"ok"}` {
		t.Errorf("got %s", got)
	}
}
