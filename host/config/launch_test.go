package config

import (
	"fmt"
	"strings"
	"testing"
)

// Every spelling of a built-in transport resolves the same whether it is
// written under transport: or type:, into the same transport and plugin;
// any other transport: value names a plugin of its own.
func TestLaunchOneTransportRule(t *testing.T) {
	cases := []struct{ written, transport, plugin string }{
		{"stdio", "stdio", "stdio"},
		{"http", "http", "http"},
		{"HTTP", "http", "http"},
		{"streamablehttp", "http", "http"},
		{"streamableHttp", "http", "http"},
		{"streamable-http", "http", "http"},
		{"streamable_http", "http", "http"},
		{"sse", "sse", "http"},
		{"SSE", "sse", "http"},
	}
	var src strings.Builder
	src.WriteString("mcp_servers:\n")
	for i, c := range cases {
		target := "url: https://h/mcp"
		if c.transport == "stdio" {
			target = "command: x"
		}
		for _, key := range []string{"transport", "type"} {
			fmt.Fprintf(&src, "  %s%d:\n    %s: %s\n    %s\n", key, i, key, c.written, target)
		}
	}
	cfg, _ := loadString(t, src.String())
	for i, c := range cases {
		for _, key := range []string{"transport", "type"} {
			s := cfg.Server(fmt.Sprintf("%s%d", key, i))
			if s.Err != nil {
				t.Errorf("%s: %s: %v", key, c.written, s.Err)
				continue
			}
			l := s.Launch()
			if s.Transport != c.transport || l.Transport != c.transport || l.Plugin != c.plugin {
				t.Errorf("%s: %s: transport %q, launch %q by plugin %q; want %q by %q", key, c.written, s.Transport, l.Transport, l.Plugin, c.transport, c.plugin)
			}
		}
	}
}

// A transport: value that is none of the built-in ones is a third-party
// plugin's name (lower-cased); a pin applies to the transport plugin it
// names and to no other; a sandbox applies to a local command only.
func TestLaunchPluginPinAndSandbox(t *testing.T) {
	pin := &PluginPin{Kind: "transport", Name: "ws", Path: "/x/hermes-transport-ws", SHA256: strings.Repeat("a", 64)}
	s := &Server{Name: "a", Transport: "WS", URL: "wss://h", Plugin: pin}
	if l := s.Launch(); l.Transport != "ws" || l.Plugin != "ws" || l.Pin != pin || l.Local || !l.Remote {
		t.Errorf("third-party transport: %+v", l)
	}
	s = &Server{Name: "b", URL: "https://h/mcp", Plugin: pin, Sandbox: &SandboxSettings{}}
	if l := s.Launch(); l.Transport != "http" || l.Pin != nil || l.Sandbox != nil {
		t.Errorf("pin of another plugin or sandbox of a remote server applied: %+v", l)
	}
	if s.SandboxMisplaced() == "" {
		t.Error("a remote server's sandbox is not reported as misplaced")
	}
	s = &Server{Name: "c", Command: "x", Sandbox: &SandboxSettings{}, MaxMessageBytes: 7}
	if l := s.Launch(); l.Transport != "stdio" || !l.Local || l.Remote || l.Sandbox == nil || l.MaxMessageBytes != 7 || s.SandboxMisplaced() != "" {
		t.Errorf("local server: %+v", l)
	}
	if p := (&Server{Plugin: pin}).PinFor("transport", "ws"); p != pin {
		t.Errorf("PinFor = %v", p)
	}
	if p := (&Server{Plugin: pin}).PinFor("auth", "ws"); p != nil {
		t.Errorf("PinFor another kind = %v", p)
	}
}
