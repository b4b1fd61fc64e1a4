package config

import (
	"slices"
	"strings"
	"testing"
)

// The other clients' type key is read as transport: it picks the transport
// when transport is absent, is not reported as unknown, loses to transport
// with a warning when they disagree, and a value that names no transport is
// an error for that server only.
func TestLoadImportedTypeKeyIsTransport(t *testing.T) {
	cfg, _ := loadString(t, `mcp_servers:
  legacy:
    type: sse
    url: https://h/sse
  streamable:
    type: streamableHttp
    url: https://h/mcp
  local:
    type: stdio
    command: x
  both:
    transport: http
    type: sse
    url: https://h/mcp
  agree:
    transport: streamable-http
    type: http
    url: https://h/mcp
  odd:
    type: websocket
    url: wss://h/ws
  fine:
    command: y
`)
	for name, want := range map[string]string{"legacy": "sse", "streamable": "http", "local": "stdio", "both": "http", "agree": "http"} {
		s := cfg.Server(name)
		if s.Err != nil || s.Transport != want {
			t.Errorf("%s: transport %q, err %v; want %q", name, s.Transport, s.Err, want)
		}
		if slices.Contains(s.Unknown, "type") {
			t.Errorf("%s: type reported as unknown: %v", name, s.Unknown)
		}
	}
	if w := cfg.Server("both").Warnings; len(w) != 1 || !strings.Contains(w[0], "using transport") {
		t.Errorf("both: warnings %q", w)
	}
	if w := cfg.Server("agree").Warnings; len(w) != 0 {
		t.Errorf("agree: warnings %q", w)
	}
	odd := cfg.Server("odd")
	if odd.Err == nil || !strings.Contains(odd.Err.Error(), `"websocket"`) || !strings.Contains(odd.Err.Error(), "transport:") {
		t.Errorf("odd: %v", odd.Err)
	}
	if f := cfg.Server("fine"); f.Err != nil {
		t.Errorf("a bad type broke another server: %v", f.Err)
	}
}
