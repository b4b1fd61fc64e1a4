package homedir_test

import (
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/host/homedir"
)

func TestFromPrefersHermesHomeThenHome(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := homedir.From(env(map[string]string{"HERMES_HOME": "/h", "HOME": "/u"})); got != "/h" {
		t.Errorf("HERMES_HOME set: %q, want /h", got)
	}
	if got := homedir.From(env(map[string]string{"HOME": "/u"})); got != homedir.Dir(filepath.Join("/u", ".hermes")) {
		t.Errorf("HOME only: %q, want /u/.hermes", got)
	}
}

// The layout is the one the docs and the users' existing folders have:
// changing a name here moves a person's files.
func TestLayoutNames(t *testing.T) {
	t.Parallel()
	d := homedir.Dir("/h")
	for got, want := range map[string]string{
		d.Config():           "/h/config.yaml",
		d.DotEnv():           "/h/.env",
		d.Tokens():           "/h/mcp-tokens",
		d.Install("x"):       "/h/mcp-installs/x",
		d.Plugins():          "/h/plugins",
		d.HostLog():          "/h/logs/hermes.log",
		d.ServerStderrLog():  "/h/logs/mcp-stderr.log",
		d.StateDB():          "/h/state.db",
		d.Offered():          "/h/offered",
		d.ProjectApprovals(): "/h/project-approvals.json",
		d.Protocols():        "/h/mcp-protocols.json",
		d.SamplingMetrics():  "/h/sampling_metrics.json",
		d.MediaCache():       "/h/cache",
	} {
		if got != want {
			t.Errorf("%s, want %s", got, want)
		}
	}
}
