package testserver_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/hermes-agent/hermes/internal/testserver"
)

// --shell-names lists every name of ShellToolNames and ShellSafeToolNames
// byte for byte, after the hostile server's own tools.
func TestHostileShellNames(t *testing.T) {
	r := startRaw(t, "--shell-names")
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var res struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.line()), &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range res.Result.Tools {
		got = append(got, tool.Name)
	}
	want := append(append([]string{"attack", "echo", "burst_stats"}, testserver.ShellToolNames...), testserver.ShellSafeToolNames...)
	if !slices.Equal(got, want) {
		t.Fatalf("tools/list names = %q, want %q", got, want)
	}
}
