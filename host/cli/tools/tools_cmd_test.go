package tools

import (
	"context"
	"errors"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
)

// TestNewCmdToolsParsesFlags checks what the command line of 'hermes
// tools' becomes in ToolsOptions, through the runF seam: nothing runs.
func TestNewCmdToolsParsesFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		args       []string
		live, json bool
	}{
		{"none", nil, false, false},
		{"live", []string{"--live"}, true, false},
		{"json", []string{"--json"}, false, true},
		{"both", []string{"--json", "--live"}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &cmdkit.Env{}
			var got *ToolsOptions
			cmd := NewCmdTools(e, func(_ context.Context, o *ToolsOptions) error {
				got = o
				return nil
			})
			if err := cmd.Run(context.Background(), append([]string{"tools"}, tc.args...)); err != nil {
				t.Fatalf("hermes tools %v: %v", tc.args, err)
			}
			if got == nil {
				t.Fatalf("hermes tools %v: runF was not called", tc.args)
			}
			if got.Env != e || got.JSON == nil || got.JSON.E != e {
				t.Errorf("hermes tools %v: options do not carry the run's Env", tc.args)
			}
			if got.Live != tc.live || got.JSON.On != tc.json {
				t.Errorf("hermes tools %v: Live=%v JSON=%v, want Live=%v JSON=%v", tc.args, got.Live, got.JSON.On, tc.live, tc.json)
			}
		})
	}
}

// TestNewCmdToolsRefusesArguments checks that an argument is a usage
// error found before anything runs.
func TestNewCmdToolsRefusesArguments(t *testing.T) {
	t.Parallel()
	cmd := NewCmdTools(&cmdkit.Env{}, func(context.Context, *ToolsOptions) error {
		t.Error("runF called for a command line with an argument")
		return nil
	})
	err := cmd.Run(context.Background(), []string{"tools", "extra"})
	var ee *cmdkit.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdkit.ExitUsage {
		t.Fatalf("hermes tools extra: %v, want a usage error", err)
	}
}
