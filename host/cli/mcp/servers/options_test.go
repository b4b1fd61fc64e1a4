package servers_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/cli/mcp/servers"
	"github.com/urfave/cli/v3"
)

// parse runs cmd with args through its runF seam: nothing is done, the
// options the flags and arguments filled are captured by the runF that
// built cmd. It reports whether runF was reached and the error.
func parse(t *testing.T, cmd *cli.Command, reached *bool, args ...string) error {
	t.Helper()
	cmd.Writer, cmd.ErrWriter = io.Discard, io.Discard
	*reached = false
	return cmd.Run(context.Background(), append([]string{cmd.Name}, args...))
}

// wantUsage fails unless err is a usage error (exit 2) and runF was not
// reached.
func wantUsage(t *testing.T, err error, reached bool, args []string) {
	t.Helper()
	var ee *cmdkit.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdkit.ExitUsage {
		t.Errorf("%q: got %v, want a usage error", args, err)
	}
	if reached {
		t.Errorf("%q: the command ran despite the usage error", args)
	}
}

func TestConfigureOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want servers.ConfigureOptions
	}{
		{[]string{"--include", "read_file, list_dir", "fs"}, servers.ConfigureOptions{Name: "fs", Include: "read_file, list_dir", IncludeSet: true, IncludeTools: []string{"read_file", "list_dir"}}},
		{[]string{"--exclude=delete_*", "--json", "fs"}, servers.ConfigureOptions{Name: "fs", Exclude: "delete_*", ExcludeSet: true, ExcludeTools: []string{"delete_*"}}},
		{[]string{"--all", "--json", "fs"}, servers.ConfigureOptions{Name: "fs", All: true}},
		{[]string{"--accept-changes", "fs"}, servers.ConfigureOptions{Name: "fs", AcceptChanges: true}},
		{[]string{"--accept-changes", "--all", "fs"}, servers.ConfigureOptions{Name: "fs", AcceptChanges: true, All: true}},
		{[]string{"fs"}, servers.ConfigureOptions{Name: "fs"}},
	} {
		var got *servers.ConfigureOptions
		reached := false
		cmd := servers.NewCmdConfigure(&cmdkit.Env{}, func(_ context.Context, o *servers.ConfigureOptions) error {
			reached, got = true, o
			return nil
		})
		if err := parse(t, cmd, &reached, tc.args...); err != nil || !reached {
			t.Fatalf("%q: ran %v, err %v", tc.args, reached, err)
		}
		if got.Env == nil || got.JSON == nil {
			t.Fatalf("%q: the options lost the run: %+v", tc.args, got)
		}
		wantJSON := slices.Contains(tc.args, "--json")
		if got.JSON.On != wantJSON {
			t.Errorf("%q: JSON.On = %v, want %v", tc.args, got.JSON.On, wantJSON)
		}
		g := *got
		g.Env, g.JSON = nil, nil
		if !reflect.DeepEqual(g, tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, g, tc.want)
		}
	}
	for _, args := range [][]string{
		{},
		{"a", "b"},
		{"--include", "a", "--exclude", "b", "fs"},
		{"--include", "a", "--all", "fs"},
		{"--include", " , ", "fs"},
		{"--exclude=", "fs"},
		{"--accept-changes", "--json", "fs"},
		{"--json", "fs"},
	} {
		reached := false
		cmd := servers.NewCmdConfigure(&cmdkit.Env{}, func(context.Context, *servers.ConfigureOptions) error {
			reached = true
			return nil
		})
		wantUsage(t, parse(t, cmd, &reached, args...), reached, args)
	}
}

func TestEnableDisableOptions(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		var got *servers.EnableOptions
		reached := false
		cmd := servers.NewCmdEnable(&cmdkit.Env{}, on, func(_ context.Context, o *servers.EnableOptions) error {
			reached, got = true, o
			return nil
		})
		wantName := map[bool]string{true: "enable", false: "disable"}[on]
		if cmd.Name != wantName {
			t.Errorf("on=%v: command %q, want %q", on, cmd.Name, wantName)
		}
		if err := parse(t, cmd, &reached, "--json", "fs"); err != nil || !reached {
			t.Fatalf("on=%v: ran %v, err %v", on, reached, err)
		}
		if got.On != on || got.Name != "fs" || !got.JSON.On || got.Env == nil {
			t.Errorf("on=%v: got %+v (json %v)", on, got, got.JSON.On)
		}
		args := []string{}
		wantUsage(t, parse(t, cmd, &reached, args...), reached, args)
	}
}

func TestGetOptions(t *testing.T) {
	t.Parallel()
	var got *servers.GetOptions
	reached := false
	cmd := servers.NewCmdGet(&cmdkit.Env{}, func(_ context.Context, o *servers.GetOptions) error {
		reached, got = true, o
		return nil
	})
	if err := parse(t, cmd, &reached, "--revoke", "read_file", "--revoke=all", "--json", "fs"); err != nil || !reached {
		t.Fatalf("ran %v, err %v", reached, err)
	}
	if got.Name != "fs" || !got.JSON.On || !reflect.DeepEqual(got.Revoke, []string{"read_file", "all"}) {
		t.Errorf("got name %q json %v revoke %q", got.Name, got.JSON.On, got.Revoke)
	}
	args := []string{"a", "b"}
	wantUsage(t, parse(t, cmd, &reached, args...), reached, args)
}

func TestListOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args        []string
		check, json bool
	}{
		{nil, false, false},
		{[]string{"--check"}, true, false},
		{[]string{"--check", "--json"}, true, true},
	} {
		var got *servers.ListOptions
		reached := false
		cmd := servers.NewCmdList(&cmdkit.Env{}, func(_ context.Context, o *servers.ListOptions) error {
			reached, got = true, o
			return nil
		})
		if err := parse(t, cmd, &reached, tc.args...); err != nil || !reached {
			t.Fatalf("%q: ran %v, err %v", tc.args, reached, err)
		}
		if got.Check != tc.check || got.JSON.On != tc.json {
			t.Errorf("%q: check %v json %v, want %v %v", tc.args, got.Check, got.JSON.On, tc.check, tc.json)
		}
	}
	reached := false
	cmd := servers.NewCmdList(&cmdkit.Env{}, func(context.Context, *servers.ListOptions) error {
		reached = true
		return nil
	})
	args := []string{"fs"}
	wantUsage(t, parse(t, cmd, &reached, args...), reached, args)
}

func TestLogsOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want servers.LogsOptions
	}{
		{[]string{"fs"}, servers.LogsOptions{Name: "fs", Lines: servers.DefaultLogLines}},
		{[]string{"-f", "-n", "7", "fs"}, servers.LogsOptions{Name: "fs", Follow: true, Lines: 7}},
		{[]string{"--follow", "--lines=0", "fs"}, servers.LogsOptions{Name: "fs", Follow: true, Lines: 0}},
	} {
		var got *servers.LogsOptions
		reached := false
		cmd := servers.NewCmdLogs(&cmdkit.Env{}, func(_ context.Context, o *servers.LogsOptions) error {
			reached, got = true, o
			return nil
		})
		if err := parse(t, cmd, &reached, tc.args...); err != nil || !reached {
			t.Fatalf("%q: ran %v, err %v", tc.args, reached, err)
		}
		g := *got
		g.Env = nil
		if g != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.args, g, tc.want)
		}
	}
	for _, args := range [][]string{{}, {"a", "b"}, {"--lines=-1", "fs"}, {"--lines", "100001", "fs"}} {
		reached := false
		cmd := servers.NewCmdLogs(&cmdkit.Env{}, func(context.Context, *servers.LogsOptions) error {
			reached = true
			return nil
		})
		wantUsage(t, parse(t, cmd, &reached, args...), reached, args)
	}
}

func TestRemoveOptions(t *testing.T) {
	t.Parallel()
	var got *servers.RemoveOptions
	reached := false
	cmd := servers.NewCmdRemove(&cmdkit.Env{}, func(_ context.Context, o *servers.RemoveOptions) error {
		reached, got = true, o
		return nil
	})
	if err := parse(t, cmd, &reached, "-y", "--json", "fs"); err != nil || !reached {
		t.Fatalf("ran %v, err %v", reached, err)
	}
	if got.Name != "fs" || !got.Yes || !got.JSON.On {
		t.Errorf("got name %q yes %v json %v", got.Name, got.Yes, got.JSON.On)
	}
	args := []string{}
	wantUsage(t, parse(t, cmd, &reached, args...), reached, args)
}

func TestProjectChoiceOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want servers.ApproveOptions
	}{
		{[]string{"--all", "--yes", "--no-sandbox"}, servers.ApproveOptions{Names: []string{}, All: true, Yes: true, NoSandbox: true}},
		{[]string{"-y", "a", "b"}, servers.ApproveOptions{Names: []string{"a", "b"}, Yes: true}},
	} {
		var got *servers.ApproveOptions
		reached := false
		cmd := servers.NewCmdApprove(&cmdkit.Env{}, func(_ context.Context, o *servers.ApproveOptions) error {
			reached, got = true, o
			return nil
		})
		if err := parse(t, cmd, &reached, tc.args...); err != nil || !reached {
			t.Fatalf("approve %q: ran %v, err %v", tc.args, reached, err)
		}
		g := *got
		g.Env = nil
		if len(g.Names) == 0 && len(tc.want.Names) == 0 {
			g.Names = tc.want.Names
		}
		if !reflect.DeepEqual(g, tc.want) {
			t.Errorf("approve %q: got %+v, want %+v", tc.args, g, tc.want)
		}
	}
	for _, args := range [][]string{{}, {"--all", "a"}} {
		reached := false
		cmd := servers.NewCmdApprove(&cmdkit.Env{}, func(context.Context, *servers.ApproveOptions) error {
			reached = true
			return nil
		})
		wantUsage(t, parse(t, cmd, &reached, args...), reached, args)
	}

	var rej *servers.RejectOptions
	reached := false
	reject := servers.NewCmdReject(&cmdkit.Env{}, func(_ context.Context, o *servers.RejectOptions) error {
		reached, rej = true, o
		return nil
	})
	if err := parse(t, reject, &reached, "a", "b"); err != nil || !reached {
		t.Fatalf("reject: ran %v, err %v", reached, err)
	}
	if !reflect.DeepEqual(rej.Names, []string{"a", "b"}) {
		t.Errorf("reject: names %q", rej.Names)
	}
	wantUsage(t, parse(t, reject, &reached), reached, nil)

	reset := servers.NewCmdResetProjectChoices(&cmdkit.Env{}, func(context.Context, *servers.ResetProjectChoicesOptions) error {
		reached = true
		return nil
	})
	if err := parse(t, reset, &reached); err != nil || !reached {
		t.Fatalf("reset-project-choices: ran %v, err %v", reached, err)
	}
	args := []string{"x"}
	wantUsage(t, parse(t, reset, &reached, args...), reached, args)
}
