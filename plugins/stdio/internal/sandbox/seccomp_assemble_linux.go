//go:build linux && !amd64

package sandbox

import (
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/seccompfilter"
)

// seccompFilters are the filters of a sandbox with network mode net,
// assembled at each start on this architecture (amd64 has a table of
// them: seccomp_table_linux_amd64.go).
func seccompFilters(net string) ([]launcher.Filter, error) { return seccompfilter.Assemble(net) }
