package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// The example keeps the auth contract, with a token stored and without.
func TestContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	sdktest.CheckAuth(t, open, auth.Config{Server: "notes", Method: "tokenfile", URL: "https://mcp.example/mcp", Settings: map[string]any{"path": path}})
	if err := os.WriteFile(path, []byte("s3cr3t-t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sdktest.CheckAuth(t, open, auth.Config{Server: "notes", Method: "tokenfile", URL: "https://mcp.example/mcp", Settings: map[string]any{"path": path}})
}
