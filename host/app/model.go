package app

import (
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/sampling"
)

// ModelSettings reads the model: block with the run's environment (the
// key it names from the environment or .env).
func (f *Factory) ModelSettings() (*model.Settings, error) {
	return model.Load(f.HomePath(), f.Lookup)
}

// Model builds the client of the model s describes: the model plugin found
// by the supervisor, with the run's environment.
func (f *Factory) Model(s *model.Settings) (*model.Client, error) {
	bin, err := f.sup.Find("model", "openai")
	if err != nil {
		return nil, err
	}
	return model.New(s, bin, f.opts.Env), nil
}

// samplingModel is the client sampling asks: the model: block's.
func (f *Factory) samplingModel() (sampling.Chatter, error) {
	s, err := f.ModelSettings()
	if err != nil {
		return nil, err
	}
	return f.Model(s)
}
