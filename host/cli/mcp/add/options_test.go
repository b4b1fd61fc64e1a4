package add

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
)

// testEnv is a run with streams and nothing else: the runF seam must not
// need the composition root.
func testEnv() *cmdkit.Env {
	return &cmdkit.Env{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
}

// runAdd runs 'hermes mcp add args...' through the runF seam and returns
// the options it was handed (nil when runF was not called) and the error.
func runAdd(t *testing.T, e *cmdkit.Env, args ...string) (*AddOptions, error) {
	t.Helper()
	var got *AddOptions
	cmd := NewCmdAdd(e, func(_ context.Context, o *AddOptions) error {
		got = o
		return nil
	})
	err := cmd.Run(context.Background(), append([]string{"add"}, args...))
	return got, err
}

// isUsage reports whether err is a usage error (exit 2).
func isUsage(err error) bool {
	var ee *cmdkit.ExitError
	return errors.As(err, &ee) && ee.Code == cmdkit.ExitUsage
}

// TestNewCmdAddParsesFlags checks what the command line of 'hermes mcp
// add' becomes in AddOptions, every flag and each way of writing the
// server's argv, through the runF seam: nothing is probed or saved.
func TestNewCmdAddParsesFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want AddOptions
		json bool
	}{
		{
			name: "stdio, every stdio flag",
			args: []string{"fs", "--command", "npx", "--env", "A=1", "--env", "B=2,3", "--cwd", "/srv",
				"--connect-timeout", "60", "--timeout", "5m", "--tools", "read_file,list_dir", "--no-probe", "--json",
				"--args", "-y", "pkg"},
			want: AddOptions{
				Name: "fs", Command: "npx", Envs: []string{"A=1", "B=2,3"}, Cwd: "/srv",
				ConnectTimeout: 60 * time.Second, Timeout: 5 * time.Minute, Tools: "read_file,list_dir", NoProbe: true,
				ChildArgs: []string{"-y", "pkg"}, HasChildArgs: true,
			},
			json: true,
		},
		{
			name: "http, every http and login flag",
			args: []string{"gh", "--url", "https://example.com/mcp", "--header", "X-A: 1", "--header", "X-B: 2",
				"--transport", "sse", "--auth", "oauth", "--client-id", "cid", "--client-secret", "s3cret",
				"--scope", "repo", "--no-browser", "--device", "-y"},
			want: AddOptions{
				Name: "gh", URL: "https://example.com/mcp", Headers: []string{"X-A: 1", "X-B: 2"},
				Transport: "sse", Auth: "oauth", ClientID: "cid", ClientSecret: "s3cret", Scope: "repo",
				NoBrowser: true, Device: true, Yes: true,
			},
		},
		{
			name: "preset, name after the flags",
			args: []string{"--preset", "codex", "--yes", "cx"},
			want: AddOptions{Name: "cx", Preset: "codex", Yes: true},
		},
		{
			name: "dash dash: the argv is the server's, hermes's flags too",
			args: []string{"fs", "--env", "A=1", "--", "npx", "--no-probe", "pkg"},
			want: AddOptions{
				Name: "fs", Envs: []string{"A=1"},
				ChildArgs: []string{"npx", "--no-probe", "pkg"}, HasChildArgs: true, DashDash: true,
			},
		},
		{
			name: "hermes's flags after --args are noted",
			args: []string{"fs", "--command", "npx", "--args", "-y", "--tools", "a", "pkg", "--tools"},
			want: AddOptions{
				Name: "fs", Command: "npx",
				ChildArgs: []string{"-y", "--tools", "a", "pkg", "--tools"}, HasChildArgs: true,
				ArgvFlags: []string{"--tools"},
			},
		},
		{
			name: "--args= gives the first word",
			args: []string{"fs", "--command", "npx", "--args=-y", "pkg"},
			want: AddOptions{Name: "fs", Command: "npx", ChildArgs: []string{"-y", "pkg"}, HasChildArgs: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := testEnv()
			got, err := runAdd(t, e, tc.args...)
			if err != nil {
				t.Fatalf("hermes mcp add %q: %v", tc.args, err)
			}
			if got == nil {
				t.Fatalf("hermes mcp add %q: runF was not called", tc.args)
			}
			if got.Env != e || got.JSON == nil || got.JSON.E != e {
				t.Fatalf("hermes mcp add %q: the options do not carry the run's Env", tc.args)
			}
			if got.JSON.On != tc.json {
				t.Errorf("hermes mcp add %q: JSON.On = %v, want %v", tc.args, got.JSON.On, tc.json)
			}
			g := *got
			g.Env, g.JSON = nil, nil
			for _, l := range []*[]string{&g.Envs, &g.Headers, &g.ChildArgs, &g.ArgvFlags} {
				if len(*l) == 0 {
					*l = nil // the flag parser's empty lists are no lists
				}
			}
			if !reflect.DeepEqual(g, tc.want) {
				t.Errorf("hermes mcp add %q:\n got %+v\nwant %+v", tc.args, g, tc.want)
			}
		})
	}
}

// TestNewCmdAddUsage checks that a command line without exactly one name,
// or with an unknown flag, is a usage error found before anything runs.
func TestNewCmdAddUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--command", "npx"},
		{"a", "b", "--command", "npx"},
		{"a", "--no-such-flag"},
		{"a", "--connect-timeout", "soon"},
	} {
		got, err := runAdd(t, testEnv(), args...)
		if got != nil {
			t.Errorf("hermes mcp add %q: runF called", args)
		}
		if !isUsage(err) {
			t.Errorf("hermes mcp add %q: %v, want a usage error", args, err)
		}
	}
}

// TestNewCmdAddJSONParsesArgs checks what 'hermes mcp add-json' puts in
// AddJSONOptions, through the runF seam.
func TestNewCmdAddJSONParsesArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want AddJSONOptions
		json bool
	}{
		{"stdin", []string{"fs"}, AddJSONOptions{Name: "fs", Server: "-"}, false},
		{"dash", []string{"fs", "-"}, AddJSONOptions{Name: "fs", Server: "-"}, false},
		{"empty is not stdin", []string{"fs", ""}, AddJSONOptions{Name: "fs", Server: ""}, false},
		{
			"flags",
			[]string{"--tools", "a,b", "--yes", "--no-probe", "--json", "fs", `{"command":"npx"}`},
			AddJSONOptions{Name: "fs", Server: `{"command":"npx"}`, Tools: "a,b", Yes: true, NoProbe: true},
			true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := testEnv()
			var got *AddJSONOptions
			cmd := NewCmdAddJSON(e, func(_ context.Context, o *AddJSONOptions) error {
				got = o
				return nil
			})
			if err := cmd.Run(context.Background(), append([]string{"add-json"}, tc.args...)); err != nil {
				t.Fatalf("hermes mcp add-json %q: %v", tc.args, err)
			}
			if got == nil {
				t.Fatalf("hermes mcp add-json %q: runF was not called", tc.args)
			}
			if got.Env != e || got.JSON == nil || got.JSON.E != e || got.JSON.On != tc.json {
				t.Fatalf("hermes mcp add-json %q: Env or JSON (%v, want %v) not as parsed", tc.args, got.JSON != nil && got.JSON.On, tc.json)
			}
			g := *got
			g.Env, g.JSON = nil, nil
			if !reflect.DeepEqual(g, tc.want) {
				t.Errorf("hermes mcp add-json %q:\n got %+v\nwant %+v", tc.args, g, tc.want)
			}
		})
	}
	for _, args := range [][]string{{}, {"a", "{}", "extra"}, {"bad name", "{}"}} {
		cmd := NewCmdAddJSON(testEnv(), func(context.Context, *AddJSONOptions) error {
			t.Errorf("hermes mcp add-json %q: runF called", args)
			return nil
		})
		if err := cmd.Run(context.Background(), append([]string{"add-json"}, args...)); !isUsage(err) {
			t.Errorf("hermes mcp add-json %q: %v, want a usage error", args, err)
		}
	}
}

// TestNewCmdImportParsesFlags checks what 'hermes mcp import' puts in
// ImportOptions, and that flags that do not go together are refused
// before anything is read.
func TestNewCmdImportParsesFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want ImportOptions
	}{
		{"nothing", nil, ImportOptions{}},
		{
			"every flag",
			[]string{"--from", "cursor", "--dry-run", "--force", "--tools", "a,b", "-y", "--no-probe", "--json", "github"},
			ImportOptions{From: "cursor", DryRun: true, Force: true, Tools: "a,b", Yes: true, NoProbe: true, JSON: true, Names: []string{"github"}},
		},
		{"all", []string{"--all", "--from", "./claude"}, ImportOptions{All: true, From: "./claude"}},
		{"names", []string{"a", "b"}, ImportOptions{Names: []string{"a", "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := testEnv()
			var got *ImportOptions
			cmd := NewCmdImport(e, func(_ context.Context, o *ImportOptions) error {
				got = o
				return nil
			})
			if err := cmd.Run(context.Background(), append([]string{"import"}, tc.args...)); err != nil {
				t.Fatalf("hermes mcp import %q: %v", tc.args, err)
			}
			if got == nil || got.Env != e {
				t.Fatalf("hermes mcp import %q: runF not called with the run's Env", tc.args)
			}
			g := *got
			g.Env = nil
			if len(g.Names) == 0 {
				g.Names = nil
			}
			if !reflect.DeepEqual(g, tc.want) {
				t.Errorf("hermes mcp import %q:\n got %+v\nwant %+v", tc.args, g, tc.want)
			}
		})
	}
	for _, args := range [][]string{
		{"--all", "a"},
		{"--tools", "x", "a", "b"},
		{"--tools", "x"},
		{"--tools", ",", "a"},
	} {
		cmd := NewCmdImport(testEnv(), func(context.Context, *ImportOptions) error {
			t.Errorf("hermes mcp import %q: runF called", args)
			return nil
		})
		if err := cmd.Run(context.Background(), append([]string{"import"}, args...)); !isUsage(err) {
			t.Errorf("hermes mcp import %q: %v, want a usage error", args, err)
		}
	}
}
