//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"os/exec"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/children"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// Options tune New; the zero value is what the plugin uses.
type Options struct {
	// NoNetNS, MaxRules and NoPidNS only mean something on Linux.
	NoNetNS  bool
	MaxRules int
	NoPidNS  bool
}

// ErrNoPidNS is not returned elsewhere than on Linux.
var ErrNoPidNS = errors.New("no pid namespace for the server")

// SpawnFailed is err.
func (l *Launch) SpawnFailed(err error) error { return err }

// NewInit returns nil: there is no pid namespace elsewhere than on Linux.
func NewInit(transport.Config, string, hclog.Logger, Options) (*Launch, error) { return nil, nil }

// ServerPid is pid: the server is the process started.
func (l *Launch) ServerPid(pid int) int { return pid }

// ServerExit has nothing to say: the server is the process started.
func (l *Launch) ServerExit() (string, bool) { return "", false }

// Launch is a sandboxed start of a server. Elsewhere than on Linux nothing
// can be enforced: New refuses a sandbox with Enforce set, and otherwise
// starts the server as it is, reporting every part as a gap.
type Launch struct {
	sb  *transport.Sandbox
	dec decision
}

// New refuses the sandbox (Enforce) or returns a Launch that applies
// nothing and says so.
func New(cfg transport.Config, _ string, _ hclog.Logger, _ Options) (*Launch, error) {
	if err := checkSandbox(cfg.Server, cfg.Sandbox); err != nil {
		return nil, err
	}
	d := decide(cfg.Sandbox, kernel{})
	if len(d.gaps) > 0 && cfg.Sandbox.Enforce {
		return nil, refusal(cfg.Server, d.gaps)
	}
	return &Launch{sb: cfg.Sandbox, dec: d}, nil
}

// Start starts cmd and registers it as one of the plugin's children.
func (l *Launch) Start(cmd *exec.Cmd) error { return children.Start(cmd) }

// Wrap leaves cmd as it is.
func (l *Launch) Wrap(*exec.Cmd) error { return nil }

// Started has nothing to complete.
func (l *Launch) Started(context.Context, int) error { return nil }

// Report lists everything as a gap.
func (l *Launch) Report() *transport.SandboxReport {
	return report(l.sb, l.dec, 0, nil, 0, 0, false, 0)
}

// Refused is nil: nothing is enforced, so nothing is refused.
func (l *Launch) Refused() []string { return nil }

// TempDir is "": there is no private temp folder.
func (l *Launch) TempDir() string { return "" }

// Close has nothing to release.
func (l *Launch) Close() {}
