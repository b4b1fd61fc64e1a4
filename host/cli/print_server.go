package cli

import "github.com/hermes-agent/hermes/host/ui"

// progressToStderr sends what a command prints for a person to stderr, so
// that stdout holds its JSON only (a terminal on stderr and stdin still
// gets its prompts).
func progressToStderr(e *env) {
	e.p = ui.NewEnv(e.err, e.err, e.in, func(a0 string) string { return getenv(e, a0) })
}

// printServer prints the configured server name as serverJSON has it.
func printServer(e *env, j *jsonOutput, name string) error {
	cfg, err := e.f.Config()
	if err != nil {
		return withCode(codeConfig, failf("%s", oneLine(err.Error())))
	}
	srv := cfg.Server(name)
	if srv == nil {
		return notFound(name, cfg.Names())
	}
	j.write(serverJSON(srv))
	return nil
}
