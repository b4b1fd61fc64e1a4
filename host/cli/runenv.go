package cli

import "github.com/hermes-agent/hermes/host/config"

// The run's environment (Options.Env) reaches everything below the command
// line that reads one: config's ${VAR} expansion and HERMES_SAFE_MODE
// (config.LoadEnv, config.LoadEntryEnv), the safe environment a stdio
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

// loadConfig reads <home>/config.yaml with the run's environment.
func (e *env) loadConfig(home string) (*config.Config, error) {
	return config.LoadEnv(home, e.configEnv())
}
