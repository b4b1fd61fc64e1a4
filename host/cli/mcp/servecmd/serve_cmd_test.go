package servecmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/serve"
)

// TestNewCmdServeParsesFlags checks what the command line of 'hermes mcp
// serve' becomes in ServeOptions, through the runF seam: nothing is
// served.
func TestNewCmdServeParsesFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want ServeOptions
	}{
		{"stdio", nil, ServeOptions{Bridge: serve.DefaultBridge}},
		{"http", []string{"--http", "127.0.0.1:0"}, ServeOptions{HTTPAddr: "127.0.0.1:0", Bridge: serve.DefaultBridge}},
		{
			"every flag",
			[]string{"--http", "0.0.0.0:8080", "--allow-remote", "--bridge", "my_bridge-2"},
			ServeOptions{HTTPAddr: "0.0.0.0:8080", AllowRemote: true, Bridge: "my_bridge-2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &cmdkit.Env{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
			var got *ServeOptions
			cmd := NewCmdServe(e, func(_ context.Context, o *ServeOptions) error {
				got = o
				return nil
			})
			if err := cmd.Run(context.Background(), append([]string{"serve"}, tc.args...)); err != nil {
				t.Fatalf("hermes mcp serve %q: %v", tc.args, err)
			}
			if got == nil || got.Env != e {
				t.Fatalf("hermes mcp serve %q: runF not called with the run's Env", tc.args)
			}
			g := *got
			g.Env = nil
			if g != tc.want {
				t.Errorf("hermes mcp serve %q:\n got %+v\nwant %+v", tc.args, g, tc.want)
			}
		})
	}
}

// TestNewCmdServeUsage checks that a bad command line is a usage error
// found before anything starts.
func TestNewCmdServeUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"extra"},
		{"--allow-remote"},
		{"--bridge", "../hermes-bridge-x"},
		{"--bridge", ""},
	} {
		e := &cmdkit.Env{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
		cmd := NewCmdServe(e, func(context.Context, *ServeOptions) error {
			t.Errorf("hermes mcp serve %q: runF called", args)
			return nil
		})
		err := cmd.Run(context.Background(), append([]string{"serve"}, args...))
		var ee *cmdkit.ExitError
		if !errors.As(err, &ee) || ee.Code != cmdkit.ExitUsage {
			t.Errorf("hermes mcp serve %q: %v, want a usage error", args, err)
		}
	}
}
