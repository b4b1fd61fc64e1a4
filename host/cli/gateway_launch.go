package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// GatewayBinary is the program `hermes mcp gateway` runs. The gateway is
// a binary of its own so that what only it needs (OpenTelemetry,
// Prometheus, CEL, JOSE: 11 MB and 6 MB resident) is not loaded by every
// other hermes command; docs/BENCHMARKS.md, The gateway's own binary.
const GatewayBinary = "hermes-gateway"

// newCmdGatewayLauncher is 'hermes mcp gateway': it hands its arguments
// to hermes-gateway, found beside hermes, then on PATH. A process of its
// own becomes it (exec); a run inside another program (a test) runs it as
// a child with the run's streams and environment.
func newCmdGatewayLauncher(e *cmdkit.Env) *cli.Command {
	return &cli.Command{
		Name:            "gateway",
		Usage:           "serve the config's servers to a team as one MCP endpoint, with identity, policy, limits and audit (runs hermes-gateway)",
		Description:     "Runs hermes-gateway with these arguments; `hermes mcp gateway --help` shows its flags. See docs/GATEWAY.md.",
		SkipFlagParsing: true,
		Action: func(ctx context.Context, c *cli.Command) error {
			path, err := gatewayPath(e)
			if err != nil {
				return err
			}
			argv := append([]string{GatewayBinary}, c.Args().Slice()...)
			if e.Verbose {
				argv = append([]string{GatewayBinary, "-v"}, c.Args().Slice()...)
			}
			if e.Opts.OwnsProcess {
				cmdkit.CloseRun(e)
				err := syscall.Exec(path, argv, e.Opts.Env)
				return cmdkit.Failf("run %s: %s", termsafe.Escape(path), termsafe.Escape(err.Error()))
			}
			cmd := exec.Command(path, argv[1:]...)
			cmd.Env, cmd.Dir = e.Opts.Env, e.Opts.Dir
			cmd.Stdin, cmd.Stdout, cmd.Stderr = e.In, e.Out, e.Err
			if err := cmd.Start(); err != nil {
				return cmdkit.Failf("run %s: %s", termsafe.Escape(path), termsafe.Escape(err.Error()))
			}
			stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
			defer stop()
			err = cmd.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return &cmdkit.ExitError{Code: ee.ExitCode()}
			}
			return err
		},
	}
}

// gatewayPath finds hermes-gateway: beside the running hermes, then in
// the folders of HERMES_PLUGIN_PATH, then on the run's PATH.
func gatewayPath(e *cmdkit.Env) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), GatewayBinary)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	dirs := filepath.SplitList(cmdkit.Getenv(e, "HERMES_PLUGIN_PATH"))
	for _, dir := range append(dirs, filepath.SplitList(cmdkit.Getenv(e, "PATH"))...) {
		if !filepath.IsAbs(dir) {
			continue // never a folder relative to where hermes runs
		}
		p := filepath.Join(dir, GatewayBinary)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", cmdkit.Failf("%s is not installed beside hermes, on HERMES_PLUGIN_PATH or on PATH; install it with hermes (make build, make install) to run hermes mcp gateway", GatewayBinary)
}
