package config

import (
	"strings"
	"testing"
)

// oauth.dpop takes auto or a boolean in any of the spellings the file
// takes elsewhere; absent is "" (the plugin's auto).
func TestLoadOAuthDPoP(t *testing.T) {
	for value, want := range map[string]string{
		"": "", "auto": "auto", "AUTO": "auto", "true": "true", "yes": "true", "false": "false", "\"off\"": "false",
	} {
		body := "mcp_servers:\n  a:\n    url: https://x/mcp\n    oauth: {client_id: c}\n"
		if value != "" {
			body = "mcp_servers:\n  a:\n    url: https://x/mcp\n    oauth: {dpop: " + value + "}\n"
		}
		cfg, _ := loadString(t, body)
		a := cfg.Server("a")
		if a == nil || a.Err != nil {
			t.Fatalf("dpop %q: %+v", value, a)
		}
		if a.OAuth.DPoP != want {
			t.Errorf("dpop %q: read as %q, want %q", value, a.OAuth.DPoP, want)
		}
		if len(a.Unknown) != 0 {
			t.Errorf("dpop %q: unknown keys %v", value, a.Unknown)
		}
	}
	cfg, _ := loadString(t, "mcp_servers:\n  a:\n    url: https://x/mcp\n    oauth: {dpop: sometimes}\n")
	a := cfg.Server("a")
	want := `server "a": key "oauth.dpop": want auto, true or false, got "sometimes"`
	if a == nil || a.Err == nil || !strings.HasPrefix(a.Err.Error(), want) || strings.Contains(a.Err.Error(), "\n") {
		t.Fatalf("got %v, want %s", a.Err, want)
	}
}
