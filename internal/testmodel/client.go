package testmodel

import (
	"os"
	"testing"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
)

// Supervisor returns a supervisor of the test's own that finds the model
// plugin the tests built; it stops every plugin when the test ends.
func Supervisor(t testing.TB) *supervisor.Supervisor {
	t.Helper()
	dir := testbin.Dir(t)
	testbin.Path(t, model.Binary)
	sup := supervisor.New(supervisor.Options{Home: t.TempDir(), Env: func(k string) (string, bool) {
		if k == "HERMES_PLUGIN_PATH" {
			return dir, true
		}
		return os.LookupEnv(k)
	}})
	t.Cleanup(sup.KillAll)
	return sup
}

// Client returns hermes's model client of s, its plugin started by
// Supervisor; it is closed when the test ends.
func Client(t testing.TB, s *model.Settings) *model.Client {
	t.Helper()
	c := model.New(s, model.Options{Supervisor: Supervisor(t)})
	t.Cleanup(c.Close)
	return c
}
