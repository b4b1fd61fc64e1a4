package config

import (
	"strings"
	"testing"
)

// A project server's state key is its name with its project's hash: no
// config.yaml name can be it, two projects' servers of one name differ,
// and a config.yaml entry's key is its name.
func TestStateKey(t *testing.T) {
	user := &Server{Name: "docs"}
	a := &Server{Name: "docs", Origin: Origin{File: "/a/.mcp.json", Project: "/a"}}
	b := &Server{Name: "docs", Origin: Origin{File: "/b/.mcp.json", Project: "/b"}}
	if user.StateKey() != "docs" {
		t.Errorf("user key %q", user.StateKey())
	}
	ka, kb := a.StateKey(), b.StateKey()
	if ka == kb || !strings.HasPrefix(ka, "docs@") || ValidName(ka) || !ValidStateKey(ka) || !ValidStateKey(kb) {
		t.Errorf("project keys %q %q", ka, kb)
	}
	for _, bad := range []string{"", "docs@", "docs@12345678901", "docs@123456789012a", "docs@ABCDEF123456", "../x@123456789012", "a@b@123456789012"} {
		if ValidStateKey(bad) {
			t.Errorf("ValidStateKey(%q) = true", bad)
		}
	}
}

// A project file may name only hermes's built-in transports, however it
// spells them; any other name would pick a plugin binary of its choosing.
func TestProjectTransport(t *testing.T) {
	for _, ok := range []string{"", "stdio", "http", "HTTP", "streamable-http", "streamable_http", "streamableHttp", "sse", " sse "} {
		if !ProjectTransport(ok) {
			t.Errorf("ProjectTransport(%q) = false, want true (a built-in transport)", ok)
		}
	}
	for _, bad := range []string{"evil", "ws", "stdio2", "../stdio", "http/x"} {
		if ProjectTransport(bad) {
			t.Errorf("ProjectTransport(%q) = true, want false (it names a plugin)", bad)
		}
	}
	msg := (&ProjectTransportError{Server: "x", File: "/r/.hermes/mcp.yaml", Transport: "evil"}).Error()
	for _, want := range []string{"/r/.hermes/mcp.yaml", "'x'", "transport: evil", "hermes-transport-evil", "hermes mcp add x --transport evil"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error on more than one line: %q", msg)
	}
}
