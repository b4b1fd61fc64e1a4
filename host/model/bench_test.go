package model_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/model/openaichat"
	"github.com/hermes-agent/hermes/internal/benchfloor"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// BenchmarkModelCall is one streamed completion of the scripted model on
// loopback: plugin is hermes's way (the model plugin hermes-model-openai,
// started once and kept, asked over go-plugin), inprocess the same
// openai-go client in this process (what a model client can cost at
// best). The difference is the plugin's hop: two processes, the text
// relayed as it streams.
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
	var plugin []time.Duration // per call, each run of plugin
	b.Run("plugin", func(b *testing.B) {
		c := client(b, s)
		// The plugin's start is the chat's, once: not a call's.
		if _, err := c.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
		n := 0
		for b.Loop() {
			if _, err := c.Chat(ctx, req); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if c.Starts() != 1 {
			b.Fatalf("%d model plugin processes for %d calls", c.Starts(), n+1)
		}
		plugin = append(plugin, b.Elapsed()/time.Duration(max(n, 1)))
	})
	b.Run("inprocess", func(b *testing.B) {
		c := openaichat.New(s, nil)
		n := 0
		for b.Loop() {
			n++
			if _, err := c.Chat(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
		// Against the median call of plugin's runs (-count runs all of
		// plugin's before inprocess's).
		if inproc := b.Elapsed() / time.Duration(max(n, 1)); len(plugin) > 0 && inproc > 0 {
			slices.Sort(plugin)
			benchfloor.Check(b, "model call: plugin process / in process (wall)", "plugin/inprocess", float64(plugin[len(plugin)/2])/float64(inproc), benchfloor.None)
		}
	})
}
