package cli

import (
	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/ui"
)

// progressToStderr sends what a command prints for a person to stderr, so
// that stdout holds its JSON only (a terminal on stderr and stdin still
// gets its prompts).
func progressToStderr(e *cmdkit.Env) {
	e.P = ui.NewEnv(e.Err, e.Err, e.In, func(a0 string) string { return cmdkit.Getenv(e, a0) })
}

// printServer prints the configured server name as serverJSON has it.
func printServer(e *cmdkit.Env, j *cmdkit.JSONOutput, name string) error {
	cfg, err := e.F.Config()
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	srv := cfg.Server(name)
	if srv == nil {
		return notFound(name, cfg.Names())
	}
	j.Write(cmdkit.ServerJSON(srv))
	return nil
}
