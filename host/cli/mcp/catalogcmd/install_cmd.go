package catalogcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/install"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/urfave/cli/v3"
)

const InstallDescription = `Shows what the entry fetches, runs and launches, and the sandbox it runs
under, then asks before running anything (without a terminal, --yes is
required). The repository is cloned at its pinned commit into
$HERMES_HOME/mcp-installs/<name> and each bootstrap step runs there with
sh -c, at most --step-timeout each. The values the entry asks for are
saved to $HERMES_HOME/.env (without a terminal they are read from the
environment). The server is then probed and its tools picked: on a
terminal from a checklist pre-checked with your previous selection, else
the entry's defaults, else all. An install is done only once its server
has started and listed its tools: if it does not, the install is undone
(--keep-failed keeps it, disabled). The folders the entry's sandbox
declares writable are created first (mode 0700) when they do not exist.

An install is all or nothing: if a step fails or hermes is stopped or
killed, config.yaml, .env and the install folder are left (or, by the
next hermes command of any kind, put back) exactly as they were.`

// InstallOptions are what 'hermes mcp install NAME' needs: the run, its
// --json output, the entry's name and the flags.
type InstallOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// Name is the catalog entry to install.
	Name string
	// Install are --yes, --keep-failed and --no-sandbox, and the tools of
	// --tools (its names, split).
	Install install.Options
	// Tools is --tools as written.
	Tools string
	// StepTimeout, CloneTimeout and ProbeTimeout are --step-timeout,
	// --clone-timeout and --probe-timeout.
	StepTimeout, CloneTimeout, ProbeTimeout time.Duration
}

// NewCmdInstall is 'hermes mcp install NAME': install a catalog entry.
// runF, when not nil, is called with the parsed options instead of
// installRun (the tests' seam).
func NewCmdInstall(e *cmdkit.Env, runF func(context.Context, *InstallOptions) error) *cli.Command {
	opts := &InstallOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:        "install",
		Usage:       "install a server from the curated catalog",
		ArgsUsage:   "<name>",
		Description: InstallDescription,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tools", Usage: "enable only these tools (`a,b`; names or globs), without asking", Destination: &opts.Tools},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask: install, and pick tools by the rules above (required without a terminal)", Destination: &opts.Install.Yes},
			&cli.BoolFlag{Name: "keep-failed", Usage: "when the server does not start or list its tools, keep it installed but disabled instead of undoing the install", Destination: &opts.Install.KeepFailed},
			&cli.BoolFlag{Name: "no-sandbox", Usage: "run the server unconfined, without the sandbox its manifest asks for", Destination: &opts.Install.NoSandbox},
			&cmdkit.TimeFlag{Name: "step-timeout", Value: install.DefaultStepTimeout, Usage: "longest each bootstrap step may run (`DURATION` or seconds: 30m, 1800)", Destination: &opts.StepTimeout},
			&cmdkit.TimeFlag{Name: "probe-timeout", Value: cmdkit.ProbeConnectTimeout, Usage: "longest the server may take to start and list its tools when the entry sets no connect_timeout (`DURATION` or seconds: 2m, 120)", Destination: &opts.ProbeTimeout},
			&cmdkit.TimeFlag{Name: "clone-timeout", Value: install.DefaultCloneTimeout, Usage: "longest the git clone and checkout may each run (`DURATION` or seconds)", Destination: &opts.CloneTimeout},
			j.Flag("print the installed server (progress goes to stderr; see docs/JSON.md)"),
		},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp install <name> [--tools a,b | --yes] [--no-sandbox]; see the entries with: hermes mcp catalog")
			}
			opts.Name = c.Args().First()
			if c.IsSet("tools") {
				if opts.Install.Tools = cmdkit.SplitList(opts.Tools); len(opts.Install.Tools) == 0 {
					return cmdkit.Usagef("--tools needs at least one tool name, e.g. --tools read_file,list_dir")
				}
			}
			if opts.StepTimeout <= 0 || opts.CloneTimeout <= 0 || opts.ProbeTimeout <= 0 {
				return cmdkit.Usagef("--step-timeout, --clone-timeout and --probe-timeout must be above 0, e.g. --step-timeout 30m")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return installRun(ctx, opts)
		}),
	}
}

// installRun installs the catalog entry opts.Name, then with --json prints
// the server it added.
func installRun(ctx context.Context, opts *InstallOptions) error {
	e, j := opts.Env, opts.JSON
	e.ProbeTimeout = opts.ProbeTimeout
	m, err := LookupEntry(e, opts.Name)
	if err != nil {
		return err
	}
	if j.On {
		cmdkit.ProgressToStderr(e)
	}
	if err := InstallEntry(e, ctx, m, opts.Install, opts.StepTimeout, opts.CloneTimeout); err != nil || !j.On {
		return err
	}
	return cmdkit.PrintServer(e, j, m.Name)
}

// LookupEntry finds a catalog entry in the catalog hermes reads (the
// built-in one, or $HERMES_OPTIONAL_MCPS).
func LookupEntry(e *cmdkit.Env, name string) (*catalog.Manifest, error) {
	cat, err := catalog.LoadFrom(cmdkit.Getenv(e, catalog.EnvDir))
	if err != nil {
		return nil, cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	m, err := cat.Lookup(name)
	if err != nil {
		return nil, cmdkit.WithCode(cmdkit.CodeUnknownEntry, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	return m, nil
}

// Installer is the install engine wired to this command line: its
// printer, the probe 'hermes mcp add' uses, and the security check.
func Installer(e *cmdkit.Env, stepTimeout, cloneTimeout time.Duration) *install.Installer {
	return &install.Installer{
		Home:     e.Home,
		Prompter: InstallPrompter{p: e.P},
		Probe: func(ctx context.Context, srv *config.Server) ([]install.Tool, error) {
			return CatalogProbe(e, ctx, srv)
		},
		StepTimeout:  stepTimeout,
		CloneTimeout: cloneTimeout,
		Admit:        AdmitInstall,
		LookupEnv:    func(key string) (string, bool) { return cmdkit.LookupEnv(e, key) },
	}
}

// AdmitInstall is the security check of an entry being installed: its
// findings, one line.
func AdmitInstall(srv *config.Server) error {
	var re *screening.RejectedError
	if err := screening.Admit(srv); errors.As(err, &re) {
		return fmt.Errorf("suspicious command/args configuration: %s", cmdkit.OneLine(strings.Join(re.Messages(), "; ")))
	} else if err != nil {
		return err
	}
	return nil
}

// InstallEntry runs the installEntry engine and turns its errors into exit codes.
func InstallEntry(e *cmdkit.Env, ctx context.Context, m *catalog.Manifest, o install.Options, stepTimeout, cloneTimeout time.Duration) error {
	err := Installer(e, stepTimeout, cloneTimeout).Install(ctx, m, o)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, install.ErrConfirmNeeded):
		_, msg, _ := strings.Cut(err.Error(), ": ")
		return cmdkit.Usagef("hermes mcp install %s: %s", m.Name, msg)
	case errors.Is(err, install.ErrDeclined):
		return cmdkit.WithCode(cmdkit.CodeCancelled, cmdkit.Failf("Cancelled; nothing was installed"))
	case ctx.Err() != nil:
		return cmdkit.WithCode(cmdkit.CodeCancelled, cmdkit.Failf("Interrupted; nothing was installed ('%s' is as it was)", m.Name))
	}
	var pe *install.ProbeError
	if errors.As(err, &pe) {
		return cmdkit.WithCode(cmdkit.CodeInstall, cmdkit.Failf("installing '%s' failed: %s; nothing was installed: fix the problem and install again (a server slow to start needs a longer --probe-timeout), or pass --keep-failed to keep it installed but disabled", m.Name, cmdkit.ShownErr(err)))
	}
	return cmdkit.WithCode(cmdkit.CodeInstall, cmdkit.Failf("installing '%s' failed: %s; nothing was installed", m.Name, cmdkit.ShownErr(err)))
}

// CatalogProbe connects to the entry being installed as 'hermes mcp add'
// does, and lists its tools.
func CatalogProbe(e *cmdkit.Env, ctx context.Context, srv *config.Server) ([]install.Tool, error) {
	if config.SafeModeFrom(cmdkit.Getter(e)) {
		return nil, errors.New("HERMES_SAFE_MODE is set, so no MCP server is started")
	}
	if srv.Err != nil {
		return nil, errors.New(cmdkit.ShownErr(srv.Err))
	}
	cmdkit.WithProbeTimeout(srv)
	if _, set := srv.Raw["connect_timeout"]; !set && e.ProbeTimeout > 0 {
		srv.ConnectTimeout = e.ProbeTimeout
	}
	tools, err := cmdkit.ProbeTools(e, ctx, srv)
	if err != nil {
		return nil, errors.New(cmdkit.ShownErr(err))
	}
	// The person is shown these tools to install: they are the approved
	// ones (tool-definition drift is measured against them).
	cmdkit.ApproveOffered(e, srv.Name, tools, "install")
	out := make([]install.Tool, len(tools))
	for i, t := range tools {
		out[i] = install.Tool{Name: t.Name, Description: t.Description}
	}
	return out, nil
}

// UninstallOptions are what 'hermes mcp uninstall NAME' needs.
type UninstallOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// Name is the installed entry to remove.
	Name string
	// Yes is --yes: do not ask.
	Yes bool
}

// NewCmdUninstall is 'hermes mcp uninstall NAME'. runF, when not nil, is
// called with the parsed options instead of uninstallRun (the tests'
// seam).
func NewCmdUninstall(e *cmdkit.Env, runF func(context.Context, *UninstallOptions) error) *cli.Command {
	opts := &UninstallOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:      "uninstall",
		Usage:     "remove an installed catalog server and its install folder (keeps .env values)",
		ArgsUsage: "<name>",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation", Destination: &opts.Yes},
			j.Flag(`print {"name": ..., "removed": true, ...} (see docs/JSON.md)`),
		},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp uninstall <name> [--yes] [--json]")
			}
			opts.Name = c.Args().First()
			if runF != nil {
				return runF(ctx, opts)
			}
			return uninstallRun(ctx, opts)
		}),
	}
}

// uninstallRun removes the installed entry opts.Name (see Uninstall).
func uninstallRun(_ context.Context, opts *UninstallOptions) error {
	return Uninstall(opts.Env, opts.JSON, opts.Name, opts.Yes)
}

// ConfigServer is server name of config.yaml as loaded, nil when the file
// does not load or has no such server.
func ConfigServer(e *cmdkit.Env, name string) *config.Server {
	cfg, err := e.F.Config()
	if err != nil {
		return nil
	}
	return cfg.Server(name)
}

// HasInstallDir reports whether an install folder of name exists.
func HasInstallDir(e *cmdkit.Env, name string) bool {
	_, err := os.Lstat(install.InstallDir(e.Home, name))
	return err == nil
}

// Uninstall removes an installed catalog entry: its config entry and its
// install folder. Its .env values stay. A server the user added is never
// the catalog's, whatever its name (catalog.FromCatalog).
func Uninstall(e *cmdkit.Env, j *cmdkit.JSONOutput, name string, yes bool) error {
	if !config.ValidName(name) {
		return cmdkit.Usagef("invalid server name '%s': use only letters, digits, '_' and '-'", name)
	}
	var m *catalog.Manifest
	if cat, err := catalog.LoadFrom(cmdkit.Getenv(e, catalog.EnvDir)); err == nil {
		m, _ = cat.Lookup(name)
	}
	_, names, err := cmdkit.ServerNames(e)
	if err != nil {
		return err
	}
	inConfig := false
	for _, n := range names {
		inConfig = inConfig || n == name
	}
	dir := install.InstallDir(e.Home, name)
	_, ferr := os.Lstat(dir)
	hasFolder := ferr == nil
	switch {
	case !inConfig && !hasFolder && m != nil:
		return cmdkit.WithCode(cmdkit.CodeNotInstalled, cmdkit.Failf("'%s' is not installed. Install it with: hermes mcp install %s", name, name))
	case !inConfig && !hasFolder:
		if len(names) == 0 {
			return cmdkit.WithCode(cmdkit.CodeNotInstalled, cmdkit.Failf("'%s' is not installed. Nothing is; see the catalog with: hermes mcp catalog", name))
		}
		return cmdkit.WithCode(cmdkit.CodeNotInstalled, cmdkit.Failf("'%s' is not installed. Installed servers: %s; see the catalog with: hermes mcp catalog", name, strings.Join(names, ", ")))
	case m == nil && !hasFolder:
		return cmdkit.WithCode(cmdkit.CodeNotInstalled, cmdkit.Failf("'%s' was not installed from the catalog; remove it with: hermes mcp remove %s", name, name))
	case inConfig && !catalog.FromCatalog(ConfigServer(e, name), m, hasFolder):
		return cmdkit.WithCode(cmdkit.CodeNotInstalled, cmdkit.Failf("'%s' is your own server, not one installed from the catalog; remove it with: hermes mcp remove %s", name, name))
	}
	if !yes {
		if !e.P.Interactive() {
			return cmdkit.Usagef("hermes mcp uninstall: no terminal to confirm on; add --yes to uninstall '%s'", name)
		}
		// Destructive: the answer defaults to No.
		if !e.P.Confirm(fmt.Sprintf("Uninstall '%s' (its entry and %s)?", name, dir), false) {
			return cmdkit.WithCode(cmdkit.CodeCancelled, cmdkit.Failf("Cancelled; '%s' was kept", name))
		}
	}
	entry, folder, err := install.Uninstall(e.Home, name)
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("uninstalling '%s': %s", name, cmdkit.OneLine(err.Error())))
	}
	if j.On {
		j.Write(cmdkit.JSONRemoved{Name: name, Removed: entry || folder, InstallDirDeleted: folder})
		return nil
	}
	if entry {
		e.P.OK("Removed '%s' from %s", name, e.F.Home.Config())
	}
	if folder {
		e.P.OK("Deleted its install folder %s", dir)
	}
	if m != nil && len(m.Auth.Env) > 0 {
		var keys []string
		for _, p := range m.Auth.Env {
			keys = append(keys, p.Name)
		}
		them := "them"
		if len(keys) == 1 {
			them = "it"
		}
		e.P.Info("Kept %s in %s; delete %s there if you no longer need %s.", strings.Join(keys, ", "), e.F.Home.DotEnv(), them, them)
	} else {
		e.P.Info("Values in %s are kept.", e.F.Home.DotEnv())
	}
	return nil
}

// RecoverInstalls puts back what interrupted installs left (see
// install.Recover), before any 'hermes mcp' command reads or changes the
// config. It says so on stderr, which 'hermes mcp serve' keeps off its
// protocol stream.
func RecoverInstalls(e *cmdkit.Env, ctx context.Context, c *cli.Command) (context.Context, error) {
	if e.Home == "" {
		return ctx, nil
	}
	rec, err := install.Recover(e.Home)
	for _, r := range rec {
		if !r.Committed {
			e.P.Errorf("Warning: the install of '%s' was interrupted; config.yaml, .env and its install folder are back as they were", r.Name)
		}
	}
	if err != nil {
		e.P.Errorf("Warning: putting back an interrupted install: %s", cmdkit.OneLine(err.Error()))
	}
	return ctx, nil
}
