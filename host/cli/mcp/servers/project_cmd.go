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

func ApproveCommand(e *cmdkit.Env) *cli.Command {
	var yes, all, noSandbox bool
	return &cli.Command{
		Name:      "approve",
		Usage:     "approve servers the project in the working folder declares (.hermes/mcp.yaml, .mcp.json) to run",
		ArgsUsage: "<name>... | --all",
		Description: "A project's servers run only once approved, for the entry as it is now: a changed entry asks again.\n" +
			"Each is shown first (what it runs, the variables it reads, its sandbox). Local servers run sandboxed:\n" +
			"read-only files but the project folder, no access to $HERMES_HOME or your keys; --no-sandbox lifts that.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "every server of the project", Destination: &all},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation", Destination: &yes},
			&cli.BoolFlag{Name: "no-sandbox", Usage: "let local servers run with your user's rights instead of the project sandbox", Destination: &noSandbox},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if (c.Args().Len() == 0) == !all {
				return cmdkit.Usagef("usage: hermes mcp approve <name>... | --all [--yes] [--no-sandbox]")
			}
			servers, _, err := ProjectServers(e, c.Args().Slice(), all)
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
				if noSandbox && srv.Launch().Local {
					srv.Origin.Unsandboxed = true
					srv.Sandbox = nil
				}
				cmdkit.ShowProjectServer(e, srv)
				if !yes {
					if !e.P.Interactive() {
						return cmdkit.Usagef("hermes mcp approve: no terminal to confirm on; add --yes to approve '%s'", srv.Name)
					}
					if !e.P.Confirm(fmt.Sprintf("Approve '%s'?", srv.Name), false) {
						e.P.Info("'%s' was left as it was (%s).", srv.Name, srv.Origin.Approval)
						continue
					}
				}
				if err := project.Decide(e.Home, srv, config.ApprovalApproved, noSandbox); err != nil {
					return cmdkit.Failf("approving '%s': %s", srv.Name, cmdkit.OneLine(err.Error()))
				}
				how := "sandboxed"
				switch {
				case !srv.Launch().Local:
					how = "remote"
				case noSandbox:
					how = "without a sandbox"
				}
				e.P.OK("Approved '%s' (%s) for project %s; a change to its entry asks again.", srv.Name, how, srv.Origin.Project)
			}
			return nil
		},
	}
}

func RejectCommand(e *cmdkit.Env) *cli.Command {
	return &cli.Command{
		Name:      "reject",
		Usage:     "keep servers the project in the working folder declares from running (until their entry changes)",
		ArgsUsage: "<name>...",
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() == 0 {
				return cmdkit.Usagef("usage: hermes mcp reject <name>...")
			}
			servers, _, err := ProjectServers(e, c.Args().Slice(), false)
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
		},
	}
}

func ResetProjectChoicesCommand(e *cmdkit.Env) *cli.Command {
	return &cli.Command{
		Name:  "reset-project-choices",
		Usage: "forget every approval and rejection of the project in the working folder: its servers ask again",
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return cmdkit.Usagef("usage: hermes mcp reset-project-choices")
			}
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
		},
	}
}
