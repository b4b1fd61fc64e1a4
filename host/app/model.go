package app

import (
	"context"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/sdk"
)

// ModelConfigError is a model: block (or the key it names) that cannot be
// read: the person fixes config.yaml or .env.
type ModelConfigError struct{ Err error }

func (e *ModelConfigError) Error() string { return e.Err.Error() }
func (e *ModelConfigError) Unwrap() error { return e.Err }

// ModelSettings reads the model: block of config.yaml and the key it names
// (the run's environment, then .env).
func (f *Factory) ModelSettings() (*model.Settings, error) {
	block, path, err := config.LoadModel(f.HomePath(), f.Lookup)
	if err != nil {
		return nil, &ModelConfigError{err}
	}
	s, err := model.Load(block, path, f.Lookup, func() (map[string]string, error) { return config.LoadDotEnv(f.HomePath()) })
	if err != nil {
		return nil, &ModelConfigError{err}
	}
	return s, nil
}

// Model returns the run's model client, built at first use from the model:
// block: the chat's turns, its tool rounds and the servers' sampling
// requests share it, and so one model plugin process (started on the first
// call, stopped when idle). A model: block that cannot be read is a
// *ModelConfigError; a model plugin that is not installed is said at once.
func (f *Factory) Model() (*model.Client, error) {
	f.modelMu.Lock()
	defer f.modelMu.Unlock()
	if f.model != nil {
		return f.model, nil
	}
	c, err := f.newModel()
	if err != nil {
		return nil, err
	}
	f.model = c
	return c, nil
}

// ReloadModel reads the model: block again and makes the client it
// describes the run's (the chat's /reload-mcp); the previous client's
// plugin is stopped. On an error the run keeps its client.
func (f *Factory) ReloadModel() (*model.Client, error) {
	c, err := f.newModel()
	if err != nil {
		return nil, err
	}
	f.modelMu.Lock()
	old := f.model
	f.model = c
	f.modelMu.Unlock()
	if old != nil {
		old.Close()
	}
	return c, nil
}

func (f *Factory) newModel() (*model.Client, error) {
	s, err := f.ModelSettings()
	if err != nil {
		return nil, err
	}
	if _, err := f.sup.Find(sdk.KindModel, model.PluginName); err != nil {
		return nil, err
	}
	return model.New(s, model.Options{Supervisor: f.sup, Logger: f.Log.Named("model")}), nil
}

// samplingModel is what the servers' sampling asks: the run's model
// client at each request, so a reload reaches it too.
type samplingModel struct{ f *Factory }

func (m samplingModel) Chat(ctx context.Context, req model.Request) (*model.Response, error) {
	c, err := m.f.Model()
	if err != nil {
		return nil, err
	}
	return c.Chat(ctx, req)
}
