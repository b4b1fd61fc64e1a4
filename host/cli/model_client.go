package cli

import (
	"errors"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/model"
)

// modelClient is the run's model client (app.Factory.Model: hermes chat,
// hermes model test and sampling share one), or what went wrong as a
// command's failure: a model: block that cannot be read is a config
// error; a model plugin that is not installed is said at once.
func modelClient(c *model.Client, err error) (*model.Client, error) {
	if err == nil {
		return c, nil
	}
	if errors.As(err, new(*app.ModelConfigError)) {
		return nil, cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	return nil, cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
}
