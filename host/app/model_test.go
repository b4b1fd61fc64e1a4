package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// The chat's rounds and the servers' sampling ask one model client, and so
// one model plugin process; /reload-mcp's ReloadModel replaces it and stops
// the old one's plugin.
func TestOneModelClientPerRun(t *testing.T) {
	t.Parallel()
	testbin.Path(t, model.Binary)
	ep := testmodel.New(t)
	ep.Key = "sk-app-test"
	ep.SetDefault(testmodel.Reply{Text: "hi"})
	home := t.TempDir()
	cfg := "model:\n  base_url: " + ep.URL + "\n  default: test-model\n  api_key_env: HERMES_TEST_MODEL_KEY\n  max_retries: 0\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	f := New(Options{
		Env:    []string{"HERMES_HOME=" + home, "HERMES_PLUGIN_PATH=" + testbin.Dir(t), "HERMES_TEST_MODEL_KEY=sk-app-test", "PATH=" + os.Getenv("PATH")},
		Stderr: &bytes.Buffer{},
	})
	t.Cleanup(func() { f.Close(false) })
	ctx := context.Background()
	c, err := f.Model()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := f.Model(); again != c {
		t.Fatal("the run built a second model client")
	}
	req := model.Request{Messages: []model.Message{{Role: "user", Text: "hello"}}}
	if _, err := c.Chat(ctx, req); err != nil {
		t.Fatalf("chat: %v", err)
	}
	if _, err := (samplingModel{f}).Chat(ctx, req); err != nil {
		t.Fatalf("sampling: %v", err)
	}
	if n := c.Starts(); n != 1 {
		t.Fatalf("a chat round and a sampling request started %d model processes, want 1", n)
	}
	next, err := f.ReloadModel()
	if err != nil || next == c {
		t.Fatalf("reload: %v (same client: %v)", err, next == c)
	}
	if _, err := c.Chat(ctx, req); err == nil {
		t.Fatal("the replaced client still answers: its plugin was not stopped")
	}
	if _, err := (samplingModel{f}).Chat(ctx, req); err != nil || next.Starts() != 1 {
		t.Fatalf("sampling after reload: %v, %d starts of the new client", err, next.Starts())
	}
}
