package main

import (
	"testing"

	"github.com/hermes-agent/hermes/internal/testmodel"
	sdkmodel "github.com/hermes-agent/hermes/sdk/model"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// The plugin keeps the model contract, checked as for any model plugin.
func TestContract(t *testing.T) {
	srv := testmodel.New(t)
	srv.Key = "sk-contract-key"
	srv.SetDefault(testmodel.Reply{Text: "hello there", ChunkSize: 2})
	sdktest.CheckModel(t, open, sdkmodel.Config{
		BaseURL: srv.URL, Default: "test-model", APIKey: "sk-contract-key",
		MaxResponseBytes: 1 << 20, MaxRetries: 0, MaxRetryDelay: 1e9, Timeout: 30e9,
	})
}
