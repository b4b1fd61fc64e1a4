package modelcmd

import (
	"context"
	"errors"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
)

// TestNewCmdModelTestParsesFlags checks what the command line of 'hermes
// model test' becomes in ModelTestOptions, through the runF seam: no
// model is asked.
func TestNewCmdModelTestParsesFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		model string
		json  bool
	}{
		{"none", nil, "", false},
		{"short", []string{"-m", "small-model"}, "small-model", false},
		{"long", []string{"--model", "large-model"}, "large-model", false},
		{"json", []string{"--json", "-m", "m1"}, "m1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &cmdkit.Env{}
			var got *ModelTestOptions
			cmd := NewCmdModelTest(e, func(_ context.Context, o *ModelTestOptions) error {
				got = o
				return nil
			})
			if err := cmd.Run(context.Background(), append([]string{"test"}, tc.args...)); err != nil {
				t.Fatalf("hermes model test %v: %v", tc.args, err)
			}
			if got == nil {
				t.Fatalf("hermes model test %v: runF was not called", tc.args)
			}
			if got.Env != e || got.JSON == nil || got.JSON.E != e {
				t.Errorf("hermes model test %v: options do not carry the run's Env", tc.args)
			}
			if got.Model != tc.model || got.JSON.On != tc.json {
				t.Errorf("hermes model test %v: Model=%q JSON=%v, want Model=%q JSON=%v", tc.args, got.Model, got.JSON.On, tc.model, tc.json)
			}
		})
	}
}

// TestNewCmdModelTestRefusesArguments checks that an argument is a usage
// error found before anything runs.
func TestNewCmdModelTestRefusesArguments(t *testing.T) {
	t.Parallel()
	cmd := NewCmdModelTest(&cmdkit.Env{}, func(context.Context, *ModelTestOptions) error {
		t.Error("runF called for a command line with an argument")
		return nil
	})
	err := cmd.Run(context.Background(), []string{"test", "extra"})
	var ee *cmdkit.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdkit.ExitUsage {
		t.Fatalf("hermes model test extra: %v, want a usage error", err)
	}
}
