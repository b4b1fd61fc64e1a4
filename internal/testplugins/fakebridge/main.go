// Command hermes-bridge-fake is a test bridge plugin (hermes mcp serve
// --bridge fake) whose tools let host tests drive every path of the
// bridge contract without a session store:
//
//	echo   returns its arguments as text and as structured content
//	env    returns the Env values it was opened with and its settings
//	pid    returns its process id
//	block  writes its pid to <home>/block.started, then waits for the
//	       call's context to end (a call in flight, to kill the plugin)
//	fail   returns a tool-level error
//	big    returns a text of settings.big_bytes bytes
//
// It asks for the variable FAKE_BRIDGE_TOKEN.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/bridge"
)

var object = json.RawMessage(`{"type":"object"}`)

func main() {
	desc := bridge.Description{
		Name:         "fake",
		Version:      "1.0.0",
		Instructions: "A fake bridge for tests.",
		Env:          []string{"FAKE_BRIDGE_TOKEN"},
	}
	for _, n := range []string{"echo", "env", "pid", "block", "fail", "big"} {
		desc.Tools = append(desc.Tools, bridge.Tool{Name: n, Description: "the " + n + " tool", InputSchema: object, OutputSchema: object, ReadOnly: n != "fail"})
	}
	bridge.Serve(desc, func(_ context.Context, cfg bridge.Config) (bridge.Server, error) {
		if cfg.Home == "" {
			return nil, sdk.NewError(sdk.CodeConfig, "no home folder")
		}
		return &fake{cfg: cfg}, nil
	})
}

type fake struct{ cfg bridge.Config }

func structured(v any) bridge.Result {
	raw, _ := json.Marshal(v)
	return bridge.Result{Text: string(raw), Structured: raw}
}

func (f *fake) Call(ctx context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	switch name {
	case "echo":
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		return bridge.Result{Text: string(args), Structured: args}, nil
	case "env":
		return structured(map[string]any{"env": f.cfg.Env, "settings": f.cfg.Settings, "home": f.cfg.Home}), nil
	case "pid":
		return structured(map[string]int{"pid": os.Getpid()}), nil
	case "block":
		path := filepath.Join(f.cfg.Home, "block.started")
		if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return bridge.Result{}, err
		}
		<-ctx.Done()
		return bridge.Result{}, ctx.Err()
	case "fail":
		return bridge.Result{Text: `{"error": "it failed"}`, IsError: true}, nil
	case "big":
		n, _ := f.cfg.Settings["big_bytes"].(float64)
		return bridge.Result{Text: strings.Repeat("x", int(n))}, nil
	}
	return bridge.Result{}, fmt.Errorf("unknown tool %q", name)
}
