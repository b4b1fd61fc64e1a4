package supervisor

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/hermes-agent/hermes/sdk"
)

// Stopped reports whether hermes stopped the plugin on purpose (Kill,
// KillAll, Interrupt) or let it finish on its own (Detach): its end is then
// no crash, and the connection it served was not dropped.
func (p *Plugin) Stopped() bool { return p.run != nil && p.run.stopping.Load() }

// ExitReason waits up to wait for the plugin process to exit and says which
// process it was and how it ended, e.g. "hermes-transport-stdio (pid 4242)
// was killed by signal SIGKILL (...)"; "" when it is still running. The host
// uses it to explain a plugin that died without a word. A plugin hermes
// stopped on purpose "was stopped by hermes", whatever signal it took.
func (p *Plugin) ExitReason(wait time.Duration) string {
	if p.run == nil {
		return ""
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-p.run.exited:
	case <-timer.C:
		return ""
	}
	if p.run.stopping.Load() {
		return fmt.Sprintf("%s (pid %d) was stopped by hermes", filepath.Base(p.Path), p.run.pid)
	}
	return fmt.Sprintf("%s (pid %d) %s", filepath.Base(p.Path), p.run.pid, sdk.ExitReason(p.run.cmd.ProcessState))
}
