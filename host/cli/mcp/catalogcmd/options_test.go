package catalogcmd_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/cli/mcp/catalogcmd"
	"github.com/hermes-agent/hermes/host/install"
)

// TestInstallFlagsBindToOptions: every flag of install lands in its
// Options (both forms of a time flag, the split --tools), the defaults
// stand where no flag is given, and a usage error is decided before
// anything runs (the runF seam takes the place of the install).
func TestInstallFlagsBindToOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := &cmdkit.Env{}
	run := func(args ...string) (*catalogcmd.InstallOptions, error) {
		var got *catalogcmd.InstallOptions
		cmd := catalogcmd.NewCmdInstall(e, func(_ context.Context, o *catalogcmd.InstallOptions) error { got = o; return nil })
		err := cmd.Run(ctx, append([]string{"install"}, args...))
		return got, err
	}

	o, err := run("--tools", "read_file, list_*", "-y", "--keep-failed", "--no-sandbox",
		"--step-timeout", "90", "--clone-timeout", "2m", "--probe-timeout", "1m30s", "--json", "filesystem")
	if err != nil || o == nil {
		t.Fatalf("install: options %v, err %v", o, err)
	}
	if o.Name != "filesystem" || o.Env != e || !o.JSON.On {
		t.Errorf("name %q, env %p, json %v; want filesystem, %p, on", o.Name, o.Env, o.JSON.On, e)
	}
	if !o.Install.Yes || !o.Install.KeepFailed || !o.Install.NoSandbox || !slices.Equal(o.Install.Tools, []string{"read_file", "list_*"}) {
		t.Errorf("install options = %+v, want yes, keep-failed, no-sandbox and tools read_file, list_*", o.Install)
	}
	if o.StepTimeout != 90*time.Second || o.CloneTimeout != 2*time.Minute || o.ProbeTimeout != 90*time.Second {
		t.Errorf("timeouts step %v clone %v probe %v, want 1m30s 2m0s 1m30s", o.StepTimeout, o.CloneTimeout, o.ProbeTimeout)
	}

	o, err = run("filesystem")
	if err != nil || o == nil {
		t.Fatalf("install filesystem: options %v, err %v", o, err)
	}
	if o.Install.Yes || o.Install.KeepFailed || o.Install.NoSandbox || o.Install.Tools != nil || o.JSON.On {
		t.Errorf("without flags: %+v, json %v; want nothing set", o.Install, o.JSON.On)
	}
	if o.StepTimeout != install.DefaultStepTimeout || o.CloneTimeout != install.DefaultCloneTimeout || o.ProbeTimeout != cmdkit.ProbeConnectTimeout {
		t.Errorf("default timeouts step %v clone %v probe %v", o.StepTimeout, o.CloneTimeout, o.ProbeTimeout)
	}

	for _, args := range [][]string{{"--tools", " , ", "filesystem"}, {}, {"a", "b"}} {
		var ee *cmdkit.ExitError
		if o, err := run(args...); !errors.As(err, &ee) || ee.Code != cmdkit.ExitUsage || o != nil {
			t.Errorf("install %q = %v (ran %v), want a usage error and no run", args, err, o != nil)
		}
	}
}

// TestUninstallAndCatalogFlagsBindToOptions: uninstall's --yes and
// --json, and catalog's --json, land in their Options.
func TestUninstallAndCatalogFlagsBindToOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := &cmdkit.Env{}
	var uo *catalogcmd.UninstallOptions
	cmd := catalogcmd.NewCmdUninstall(e, func(_ context.Context, o *catalogcmd.UninstallOptions) error { uo = o; return nil })
	if err := cmd.Run(ctx, []string{"uninstall", "--yes", "--json", "filesystem"}); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if uo == nil || uo.Name != "filesystem" || !uo.Yes || !uo.JSON.On {
		t.Errorf("uninstall options = %+v, want filesystem, yes, json", uo)
	}
	var co *catalogcmd.CatalogOptions
	cmd = catalogcmd.NewCmdCatalog(e, func(_ context.Context, o *catalogcmd.CatalogOptions) error { co = o; return nil })
	if err := cmd.Run(ctx, []string{"catalog", "--json"}); err != nil {
		t.Fatalf("catalog: %v", err)
	}
	if co == nil || !co.JSON.On || co.Env != e {
		t.Errorf("catalog options = %+v, want json on", co)
	}
}
