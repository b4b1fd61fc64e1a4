package cmdkit

import (
	"github.com/hermes-agent/hermes/host/ui"
)

// ProgressToStderr sends what a command prints for a person to stderr, so
// that stdout holds its JSON only (a terminal on stderr and stdin still
// gets its prompts).
func ProgressToStderr(e *Env) {
	e.P = ui.NewEnv(e.Err, e.Err, e.In, Getter(e))
}

// PrintServer prints the configured server name as serverJSON has it.
func PrintServer(e *Env, j *JSONOutput, name string) error {
	cfg, err := e.F.Config()
	if err != nil {
		return WithCode(CodeConfig, Failf("%s", OneLine(err.Error())))
	}
	srv := cfg.Server(name)
	if srv == nil {
		return NotFound(name, cfg.Names())
	}
	j.Write(ServerJSON(srv))
	return nil
}
