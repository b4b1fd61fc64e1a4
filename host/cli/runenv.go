package cli

import (
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/project"
)

// The run's environment (Options.Env) reaches everything below the command
// line that reads one: config's ${VAR} expansion and HERMES_SAFE_MODE
// (config.LoadEnv, config.LoadEntryEnv), roots: (roots.Load, with ~ as the
// run's HOME), mcp_serve:, approval: and model: (config.LoadServe,
// config.LoadApproval, model.Load), the ~ of a catalog entry's sandbox at
// install (install.Installer.LookupEnv), the safe environment a stdio
// server inherits (session.Deps.Environ) and the plugins'
// (supervisor.Options.Env). Nothing a command does reads the process
// environment, so commands run side by side in one process (the tests do)
// each see their own.

// configEnv is the run's environment for config's loaders; nil (the
// process's) when the run was given none.
func (e *env) configEnv() func(string) (string, bool) {
	if e.environ == nil {
		return nil
	}
	return e.lookupEnv
}

// loadConfig reads <home>/config.yaml with the run's environment, and
// merges over it the servers the project of the working folder declares
// (project.Load). A project file that cannot be read leaves the user's
// config as it is, with a warning (once per run) naming the file.
func (e *env) loadConfig(home string) (*config.Config, error) {
	cfg, err := config.LoadEnv(home, e.configEnv())
	if err != nil || cfg.SafeMode {
		return cfg, err
	}
	p, err := e.loadProject(home)
	if err != nil {
		e.warnProjectOnce(err)
		return cfg, nil
	}
	project.Merge(cfg, p)
	return cfg, nil
}

// loadProject reads the project of the run's working folder; nil when
// there is none.
func (e *env) loadProject(home string) (*project.Project, error) {
	dir, err := e.workDir()
	if err != nil {
		return nil, nil
	}
	userHome, _ := e.userHome()
	return project.Load(dir, project.Options{Home: home, UserHome: userHome, Env: e.configEnv()})
}

// warnProjectOnce says, once per run, that the project's servers are left
// out and why.
func (e *env) warnProjectOnce(err error) {
	if e.projectWarned.Swap(true) {
		return
	}
	e.p.Warn("project servers left out: %s", oneLine(err.Error()))
}
