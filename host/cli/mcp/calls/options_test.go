package calls_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/cli/mcp/calls"
)

// TestCallFlagsBindToOptions: --arg (repeated), the k=v words after the
// tool, --args-json and --rendered land in CallOptions, and the usage
// errors (a word that is no argument, --json with --rendered) are decided
// before anything runs (the runF seam takes the place of the call).
func TestCallFlagsBindToOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := &cmdkit.Env{}
	run := func(args ...string) (*calls.CallOptions, error) {
		var got *calls.CallOptions
		cmd := calls.NewCmdCall(e, func(_ context.Context, o *calls.CallOptions) error { got = o; return nil })
		err := cmd.Run(ctx, append([]string{"call"}, args...))
		return got, err
	}

	o, err := run("--arg", "a=1", "--arg", "b=x", "--args-json", `{"c": true}`, "--rendered", "ev", "echo", "message=hi")
	if err != nil || o == nil {
		t.Fatalf("call: options %v, err %v", o, err)
	}
	if o.Env != e || o.Name != "ev" || o.Tool != "echo" || o.ArgsJSON != `{"c": true}` || !o.Rendered || o.JSON.On {
		t.Errorf("call options = %+v, want server ev, tool echo, --args-json, --rendered, no --json", o)
	}
	if want := []string{"a=1", "b=x", "message=hi"}; !slices.Equal(o.Args, want) {
		t.Errorf("args = %q, want %q", o.Args, want)
	}

	o, err = run("--json", "ev", "echo")
	if err != nil || o == nil || !o.JSON.On || o.Rendered || len(o.Args) != 0 {
		t.Errorf("call --json ev echo: options %+v, err %v; want json on and no arguments", o, err)
	}

	for _, args := range [][]string{{"--json", "--rendered", "ev", "echo"}, {"ev", "echo", "hi"}, {"ev"}} {
		var ee *cmdkit.ExitError
		if o, err := run(args...); !errors.As(err, &ee) || ee.Code != cmdkit.ExitUsage || o != nil {
			t.Errorf("call %q = %v (ran %v), want a usage error and no run", args, err, o != nil)
		}
	}
}

// TestTestAndToolsFlagsBindToOptions: test's and tools' server, tool and
// --json land in their Options.
func TestTestAndToolsFlagsBindToOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := &cmdkit.Env{}
	var to *calls.TestOptions
	cmd := calls.NewCmdTest(e, func(_ context.Context, o *calls.TestOptions) error { to = o; return nil })
	if err := cmd.Run(ctx, []string{"test", "--json", "ev"}); err != nil {
		t.Fatalf("test: %v", err)
	}
	if to == nil || to.Name != "ev" || !to.JSON.On || to.Env != e {
		t.Errorf("test options = %+v, want ev and json on", to)
	}
	var so *calls.ToolsSchemaOptions
	cmd = calls.NewCmdToolsSchema(e, func(_ context.Context, o *calls.ToolsSchemaOptions) error { so = o; return nil })
	if err := cmd.Run(ctx, []string{"tools", "--json", "ev", "echo"}); err != nil {
		t.Fatalf("tools: %v", err)
	}
	if so == nil || so.Name != "ev" || so.Tool != "echo" || !so.JSON.On {
		t.Errorf("tools options = %+v, want ev, echo and json on", so)
	}
}
