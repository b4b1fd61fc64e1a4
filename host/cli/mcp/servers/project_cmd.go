package servers

import (
	"context"
	"fmt"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/project"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/urfave/cli/v3"
)

// Project servers (host/project) run only once the person approved them as
// they are: a cloned repository is someone else's input. The commands here
// approve, reject and forget; admitProject asks on a terminal when a
// command is about to use a pending one.

// ProjectServers loads the merged config and returns the project servers
// named (all of them with all), failing for a name that is not one.
func ProjectServers(e *cmdkit.Env, names []string, all bool) ([]*config.Server, *config.Config, error) {
	cfg, err := e.F.Config()
	if err != nil {
		return nil, nil, cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	if cfg.SafeMode {
		return nil, nil, cmdkit.WithCode(cmdkit.CodeSafeMode, cmdkit.Failf("HERMES_SAFE_MODE is set, so no MCP servers are loaded; unset it first"))
	}
	var out []*config.Server
	if all {
		for _, s := range cfg.Servers {
			if s.FromProject() {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			return nil, nil, cmdkit.WithCode(cmdkit.CodeUnknownServer, cmdkit.Failf("no project file here declares a server (hermes reads %s and %s from the working folder up to the repository's top)", project.HermesFile, project.ClaudeFile))
		}
		return out, cfg, nil
	}
	for _, n := range names {
		s := cfg.Server(n)
		if s == nil {
			return nil, nil, cmdkit.NotFound(n, cfg.Names())
		}
		if !s.FromProject() {
			return nil, nil, cmdkit.WithCode(cmdkit.CodeUnknownServer, cmdkit.Failf("'%s' is your own server (config.yaml), not a project file's; only project servers need approval", n))
		}
		out = append(out, s)
	}
	return out, cfg, nil
}

// ApproveOptions is what 'hermes mcp approve' needs.
type ApproveOptions struct {
	Env *cmdkit.Env
	// Names are the project servers to approve; All is --all (every one).
	Names []string
	All   bool
	// Yes is --yes: do not ask for confirmation.
	Yes bool
	// NoSandbox is --no-sandbox: local servers run with the user's rights.
	NoSandbox bool
}

// NewCmdApprove is 'hermes mcp approve NAME... | --all'. runF, when not
// nil, is called with the options in place of the work (the tests' seam).
func NewCmdApprove(e *cmdkit.Env, runF func(context.Context, *ApproveOptions) error) *cli.Command {
	opts := &ApproveOptions{Env: e}
	return &cli.Command{
		Name:      "approve",
		Usage:     "approve servers the project in the working folder declares (.hermes/mcp.yaml, .mcp.json) to run",
		ArgsUsage: "<name>... | --all",
		Description: "A project's servers run only once approved, for the entry as it is now: a changed entry asks again.\n" +
			"Each is shown first (what it runs, the variables it reads, its sandbox). Local servers run sandboxed:\n" +
			"read-only files but the project folder, no access to $HERMES_HOME or your keys; --no-sandbox lifts that.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "every server of the project", Destination: &opts.All},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation", Destination: &opts.Yes},
			&cli.BoolFlag{Name: "no-sandbox", Usage: "let local servers run with your user's rights instead of the project sandbox", Destination: &opts.NoSandbox},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if (c.Args().Len() == 0) == !opts.All {
				return cmdkit.Usagef("usage: hermes mcp approve <name>... | --all [--yes] [--no-sandbox]")
			}
			opts.Names = c.Args().Slice()
			if runF != nil {
				return runF(ctx, opts)
			}
			return approveRun(ctx, opts)
		},
	}
}

// approveRun shows each server named and records its approval (asking
// first unless --yes).
func approveRun(_ context.Context, opts *ApproveOptions) error {
	e := opts.Env
	servers, _, err := ProjectServers(e, opts.Names, opts.All)
	if err != nil {
		return err
	}
	for _, srv := range servers {
		if srv.Err != nil {
			return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("cannot approve '%s': %s", srv.Name, cmdkit.OneLine(srv.Err.Error())))
		}
		if err := screening.Admit(srv); err != nil {
			return cmdkit.WithCode(cmdkit.CodeRejected, cmdkit.Failf("cannot approve '%s': %s", srv.Name, cmdkit.OneLine(err.Error())))
		}
	}
	for _, srv := range servers {
		if opts.NoSandbox && srv.Launch().Local {
			srv.Origin.Unsandboxed = true
			srv.Sandbox = nil
		}
		cmdkit.ShowProjectServer(e, srv)
		if !opts.Yes {
			if !e.P.Interactive() {
				return cmdkit.Usagef("hermes mcp approve: no terminal to confirm on; add --yes to approve '%s'", srv.Name)
			}
			if !e.P.Confirm(fmt.Sprintf("Approve '%s'?", srv.Name), false) {
				e.P.Info("'%s' was left as it was (%s).", srv.Name, srv.Origin.Approval)
				continue
			}
		}
		if err := project.Decide(e.Home, srv, config.ApprovalApproved, opts.NoSandbox); err != nil {
			return cmdkit.Failf("approving '%s': %s", srv.Name, cmdkit.OneLine(err.Error()))
		}
		how := "sandboxed"
		switch {
		case !srv.Launch().Local:
			how = "remote"
		case opts.NoSandbox:
			how = "without a sandbox"
		}
		e.P.OK("Approved '%s' (%s) for project %s; a change to its entry asks again.", srv.Name, how, srv.Origin.Project)
	}
	return nil
}

// RejectOptions is what 'hermes mcp reject' needs.
type RejectOptions struct {
	Env *cmdkit.Env
	// Names are the project servers to reject.
	Names []string
}

// NewCmdReject is 'hermes mcp reject NAME...'. runF, when not nil, is
// called with the options in place of the work (the tests' seam).
func NewCmdReject(e *cmdkit.Env, runF func(context.Context, *RejectOptions) error) *cli.Command {
	opts := &RejectOptions{Env: e}
	return &cli.Command{
		Name:      "reject",
		Usage:     "keep servers the project in the working folder declares from running (until their entry changes)",
		ArgsUsage: "<name>...",
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() == 0 {
				return cmdkit.Usagef("usage: hermes mcp reject <name>...")
			}
			opts.Names = c.Args().Slice()
			if runF != nil {
				return runF(ctx, opts)
			}
			return rejectRun(ctx, opts)
		},
	}
}

// rejectRun records the rejection of each server named.
func rejectRun(_ context.Context, opts *RejectOptions) error {
	e := opts.Env
	servers, _, err := ProjectServers(e, opts.Names, false)
	if err != nil {
		return err
	}
	for _, srv := range servers {
		if err := project.Decide(e.Home, srv, config.ApprovalRejected, false); err != nil {
			return cmdkit.Failf("rejecting '%s': %s", srv.Name, cmdkit.OneLine(err.Error()))
		}
		e.P.OK("Rejected '%s' in project %s; approve it later with: hermes mcp approve %s", srv.Name, srv.Origin.Project, srv.Name)
	}
	return nil
}

// ResetProjectChoicesOptions is what 'hermes mcp reset-project-choices'
// needs: the run only (it takes no flags or arguments).
type ResetProjectChoicesOptions struct {
	Env *cmdkit.Env
}

// NewCmdResetProjectChoices is 'hermes mcp reset-project-choices'. runF,
// when not nil, is called with the options in place of the work (the
// tests' seam).
func NewCmdResetProjectChoices(e *cmdkit.Env, runF func(context.Context, *ResetProjectChoicesOptions) error) *cli.Command {
	opts := &ResetProjectChoicesOptions{Env: e}
	return &cli.Command{
		Name:  "reset-project-choices",
		Usage: "forget every approval and rejection of the project in the working folder: its servers ask again",
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return cmdkit.Usagef("usage: hermes mcp reset-project-choices")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return resetProjectChoicesRun(ctx, opts)
		},
	}
}

// resetProjectChoicesRun forgets the approvals and rejections of the
// project in the working folder.
func resetProjectChoicesRun(_ context.Context, opts *ResetProjectChoicesOptions) error {
	e := opts.Env
	p, err := e.F.Project()
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	if p == nil {
		return cmdkit.WithCode(cmdkit.CodeUnknownServer, cmdkit.Failf("no project here: hermes reads %s and %s from the working folder up to the repository's top", project.HermesFile, project.ClaudeFile))
	}
	n, err := project.Forget(e.Home, p.Root)
	if err != nil {
		return cmdkit.Failf("forgetting the choices of %s: %s", p.Root, cmdkit.OneLine(err.Error()))
	}
	e.P.OK("Forgot %d choice(s) for project %s; its servers ask again.", n, p.Root)
	return nil
}
