package model_test

import (
	"context"
	"os"
	"testing"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/model/openaichat"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// BenchmarkModelCall is one streamed completion of the scripted model on
// loopback: helper is hermes's way (hermes-model-openai started per call),
// inprocess the same openai-go client in this process (what a long-lived
// helper would cost at best). The difference is the process per call.
func BenchmarkModelCall(b *testing.B) {
	srv := testmodel.New(b)
	srv.Key = "sk-test-key"
	srv.SetDefault(testmodel.Reply{Text: "a short answer of a few words", ChunkSize: 8})
	s, err := model.Parse(map[string]any{"base_url": srv.URL, "default": "test-model"})
	if err != nil {
		b.Fatal(err)
	}
	s.APIKey = "sk-test-key"
	req := model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}}
	ctx := context.Background()
	b.Run("helper", func(b *testing.B) {
		c := model.New(s, testbin.Path(b, model.Binary), os.Environ())
		for b.Loop() {
			if _, err := c.Chat(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("inprocess", func(b *testing.B) {
		c := openaichat.New(s, nil)
		for b.Loop() {
			if _, err := c.Chat(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
