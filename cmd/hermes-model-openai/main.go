// Command hermes-model-openai is hermes's model plugin (kind model, name
// openai): it serves the model contract (sdk/model) over go-plugin, and
// makes each completion through github.com/openai/openai-go/v3
// (host/model/openaichat) against the OpenAI-compatible endpoint it was
// opened with. The host keeps one process for a chat and cancels a call by
// its context. It is a process of its own so that the OpenAI client
// library is initialised only by the runs that use a model.
package main

import (
	"context"
	"errors"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/model/openaichat"
	sdkmodel "github.com/hermes-agent/hermes/sdk/model"
)

func main() { sdkmodel.Serve(open) }

// open builds the model of cfg: an openai-go client of its endpoint, with
// its key (which came over the plugin's connection, not the environment).
func open(_ context.Context, cfg sdkmodel.Config) (sdkmodel.Model, error) {
	s := model.FromConfig(cfg)
	return &completer{s: s, c: openaichat.New(s, nil)}, nil
}

// completer is the plugin's Model.
type completer struct {
	s *model.Settings
	c *openaichat.Client
}

// Complete makes one completion; the endpoint's failures go back typed,
// with the key taken out (openaichat redacts them, and anything else is
// redacted here).
func (m *completer) Complete(ctx context.Context, req sdkmodel.Request) (sdkmodel.Response, error) {
	res, err := m.c.Chat(ctx, req)
	var me *model.Error
	switch {
	case errors.As(err, &me):
		return sdkmodel.Response{}, me.Plugin()
	case err != nil:
		return sdkmodel.Response{}, &sdkmodel.Error{Kind: sdkmodel.KindRejected, BaseURL: m.s.BaseURL, Detail: model.Clean(m.s.Redact(err.Error()))}
	}
	return *res, nil
}
