package chat

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/ui"
)

// TestNewCmdChatParsesCommandLine checks what the command line of
// 'hermes chat' becomes in ChatOptions, through the runF seam: no model
// is asked and no server started. Stdin is not a terminal, so no prompt
// means one read from stdin (by chatRun, not by the parsing).
func TestNewCmdChatParsesCommandLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		args          []string
		model, prompt string
	}{
		{"stdin", nil, "", ""},
		{"prompt", []string{"what", "time", "is", "it"}, "", "what time is it"},
		{"short", []string{"-m", "small-model", "hello"}, "small-model", "hello"},
		{"long", []string{"--model", "large-model"}, "large-model", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, r := cmdkit.NewInput(strings.NewReader("from stdin\n"))
			e := &cmdkit.Env{In: r, Input: in, Out: io.Discard, Err: io.Discard,
				P: ui.NewEnv(io.Discard, io.Discard, r, func(string) string { return "" })}
			var got *ChatOptions
			cmd := NewCmdChat(e, func(_ context.Context, o *ChatOptions) error {
				got = o
				return nil
			})
			if err := cmd.Run(context.Background(), append([]string{"chat"}, tc.args...)); err != nil {
				t.Fatalf("hermes chat %v: %v", tc.args, err)
			}
			if got == nil {
				t.Fatalf("hermes chat %v: runF was not called", tc.args)
			}
			if got.Env != e {
				t.Errorf("hermes chat %v: options do not carry the run's Env", tc.args)
			}
			if got.Model != tc.model || got.Prompt != tc.prompt || got.Interactive {
				t.Errorf("hermes chat %v: Model=%q Prompt=%q Interactive=%v, want Model=%q Prompt=%q Interactive=false",
					tc.args, got.Model, got.Prompt, got.Interactive, tc.model, tc.prompt)
			}
		})
	}
}
