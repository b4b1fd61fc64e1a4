package cmdkit

import (
	"errors"

	"github.com/hermes-agent/hermes/host/app"
	"github.com/hermes-agent/hermes/host/model"
)

// ModelClient is the run's model client (app.Factory.Model: hermes chat,
// hermes model test and sampling share one), or what went wrong as a
// command's failure: a model: block that cannot be read is a config
// error; a model plugin that is not installed is said at once.
func ModelClient(c *model.Client, err error) (*model.Client, error) {
	if err == nil {
		return c, nil
	}
	if errors.As(err, new(*app.ModelConfigError)) {
		return nil, WithCode(CodeConfig, Failf("%s", OneLine(err.Error())))
	}
	return nil, Failf("%s", OneLine(err.Error()))
}
