package cli

import (
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/sdk"
)

// newModelClient returns a model client of the model: block of the run's
// config.yaml and the key it names (the run's environment, then .env),
// whose plugin the run's supervisor starts on the first call and keeps
// for the client's life. A model: block that cannot be read is a config
// error; a model plugin that is not installed is said at once, before
// anything else starts. It is the one place the CLI builds a model client
// (hermes chat, hermes model test, sampling).
func newModelClient(e *env) (*model.Client, error) {
	block, path, err := config.LoadModel(e.home, e.lookupEnv)
	if err == nil {
		var s *model.Settings
		s, err = model.Load(block, path, e.lookupEnv, func() (map[string]string, error) { return config.LoadDotEnv(e.home) })
		if err == nil {
			sup := e.supervisor()
			if _, ferr := sup.Find(sdk.KindModel, model.PluginName); ferr != nil {
				return nil, failf("%s", oneLine(ferr.Error()))
			}
			return model.New(s, model.Options{Supervisor: sup, Logger: e.log}), nil
		}
	}
	return nil, withCode(codeConfig, failf("%s", oneLine(err.Error())))
}
