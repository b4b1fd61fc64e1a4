package pluginhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/rpc"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/bridge"
	"github.com/hermes-agent/hermes/sdk/internal/serve"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// echo is a Server: "echo" returns its arguments as text and structured
// content, "fail" a tool-level error, "block" waits for its context,
// "big" a result of n bytes, "array" structured content that is no object.
type echo struct {
	cfg     bridge.Config
	blocked chan struct{}
	closed  bool
}

func (e *echo) Call(ctx context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	switch name {
	case "echo":
		return bridge.Result{Text: string(args), Structured: args}, nil
	case "fail":
		return bridge.Result{Text: `{"error": "nope"}`, IsError: true}, nil
	case "block":
		close(e.blocked)
		<-ctx.Done()
		return bridge.Result{}, ctx.Err()
	case "big":
		return bridge.Result{Text: strings.Repeat("x", 2048)}, nil
	case "array":
		return bridge.Result{Text: "[]", Structured: json.RawMessage(`[1]`)}, nil
	case "env":
		return bridge.Result{Text: e.cfg.Env["TOKEN"] + "|" + e.cfg.Home}, nil
	}
	return bridge.Result{}, sdk.NewError(sdk.CodeConfig, "unknown tool %q", name)
}

func (e *echo) Close() error { e.closed = true; return nil }

var schema = json.RawMessage(`{"type":"object"}`)

func handle(t *testing.T, desc bridge.Description, open bridge.Opener) *pluginhost.Bridge {
	t.Helper()
	return sdktest.BridgeInProcess(t, desc, open)
}

func TestDescribeOpenCall(t *testing.T) {
	e := &echo{blocked: make(chan struct{})}
	desc := bridge.Description{Name: "hermes", Instructions: "use it", Env: []string{"TOKEN"},
		Tools: []bridge.Tool{{Name: "echo", Description: "echoes", InputSchema: schema, OutputSchema: schema, ReadOnly: true}}}
	h := handle(t, desc, func(_ context.Context, cfg bridge.Config) (bridge.Server, error) {
		e.cfg = cfg
		return e, nil
	})
	ctx := context.Background()
	got, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "hermes" || got.Instructions != "use it" || len(got.Tools) != 1 || !got.Tools[0].ReadOnly || string(got.Tools[0].OutputSchema) != `{"type":"object"}` || got.Env[0] != "TOKEN" {
		t.Fatalf("description = %+v", got)
	}
	c, err := h.Open(ctx, bridge.Config{Home: "/h", Env: map[string]string{"TOKEN": "s3cret"}}, pluginhost.BridgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Open(ctx, bridge.Config{Home: "/h"}, pluginhost.BridgeOptions{}); sdk.ErrorCode(err) != sdk.CodeContract {
		t.Fatalf("second open: %v", err)
	}
	r, err := c.Call(ctx, "echo", json.RawMessage(`{"a":1}`))
	if err != nil || r.Text != `{"a":1}` || string(r.Structured) != `{"a":1}` || r.IsError {
		t.Fatalf("echo = %+v, %v", r, err)
	}
	if r, err := c.Call(ctx, "env", nil); err != nil || r.Text != "s3cret|/h" {
		t.Fatalf("env = %+v, %v", r, err)
	}
	if r, err := c.Call(ctx, "fail", nil); err != nil || !r.IsError {
		t.Fatalf("fail = %+v, %v", r, err)
	}
	if _, err := c.Call(ctx, "nope", nil); sdk.ErrorCode(err) != sdk.CodeConfig || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown tool: %v", err)
	}
	if _, err := c.Call(ctx, "array", nil); sdk.ErrorCode(err) != sdk.CodeContract {
		t.Fatalf("array structured content: %v", err)
	}
	if r, err := c.Call(ctx, "big", nil); err != nil || len(r.Text) != 2048 {
		t.Fatalf("big under the default limit: %d bytes, %v", len(r.Text), err)
	}
	// The limit is an option of Open, like every kind's host settings.
	small, err := handle(t, desc, func(context.Context, bridge.Config) (bridge.Server, error) { return &echo{}, nil }).
		Open(ctx, bridge.Config{}, pluginhost.BridgeOptions{MaxResultBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := small.Call(ctx, "big", nil); sdk.ErrorCode(err) != sdk.CodeTooLarge || !strings.Contains(err.Error(), "mcp_serve.max_result_mb") {
		t.Fatalf("big: %v", err)
	}
}

// TestCancel: when the host's context ends, the plugin's call context
// ends too and the call returns.
func TestCancel(t *testing.T) {
	e := &echo{blocked: make(chan struct{})}
	h := handle(t, bridge.Description{}, func(context.Context, bridge.Config) (bridge.Server, error) { return e, nil })
	c, err := h.Open(context.Background(), bridge.Config{}, pluginhost.BridgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-e.blocked; cancel() }()
	if _, err := c.Call(ctx, "block", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("blocked call: %v", err)
	}
	// The plugin's side returned as well: the next call is served.
	if _, err := c.Call(context.Background(), "echo", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
}

func TestBridgeOpenError(t *testing.T) {
	h := handle(t, bridge.Description{}, func(context.Context, bridge.Config) (bridge.Server, error) {
		return nil, sdk.NewError(sdk.CodeConfig, "no home")
	})
	if _, err := h.Open(context.Background(), bridge.Config{}, pluginhost.BridgeOptions{}); sdk.ErrorCode(err) != sdk.CodeConfig {
		t.Fatalf("open: %v", err)
	}
}

// TestDescriptionChecked: a hostile description is refused by the host.
func TestDescriptionChecked(t *testing.T) {
	many := make([]bridge.Tool, pluginhost.MaxBridgeTools+1)
	for i := range many {
		many[i] = bridge.Tool{Name: strings.Repeat("t", i%100+1) + string(rune('a'+i%26)), InputSchema: schema}
	}
	for name, d := range map[string]bridge.Description{
		"no name":       {Tools: []bridge.Tool{{InputSchema: schema}}},
		"twice":         {Tools: []bridge.Tool{{Name: "a", InputSchema: schema}, {Name: "a", InputSchema: schema}}},
		"bad input":     {Tools: []bridge.Tool{{Name: "a", InputSchema: json.RawMessage(`[]`)}}},
		"missing input": {Tools: []bridge.Tool{{Name: "a"}}},
		"bad output":    {Tools: []bridge.Tool{{Name: "a", InputSchema: schema, OutputSchema: json.RawMessage(`"x"`)}}},
		"null input":    {Tools: []bridge.Tool{{Name: "a", InputSchema: json.RawMessage(` null`)}}},
		"cut input":     {Tools: []bridge.Tool{{Name: "a", InputSchema: json.RawMessage(`{"type":`)}}},
		"two objects":   {Tools: []bridge.Tool{{Name: "a", InputSchema: json.RawMessage(`{} {}`)}}},
		"too many":      {Tools: many},
	} {
		h := handle(t, d, nil)
		if _, err := h.Describe(context.Background()); sdk.ErrorCode(err) != sdk.CodeContract {
			t.Errorf("%s: describe error = %v", name, err)
		}
	}
	spaced := bridge.Description{Tools: []bridge.Tool{{Name: "a", InputSchema: json.RawMessage(" \n{\"type\": \"object\"}\t")}}}
	if _, err := handle(t, spaced, nil).Describe(context.Background()); err != nil {
		t.Errorf("a schema with white space around it: %v", err)
	}
}

// handleOnSocket serves desc and open in this process with one end of a
// connected pair standing for the socket a plugin process inherits, and
// returns the host's handle and the other end, the host's.
func handleOnSocket(t *testing.T, desc bridge.Description, open bridge.Opener) (*pluginhost.Bridge, net.Conn) {
	t.Helper()
	hostEnd, pluginEnd := net.Pipe()
	k := serve.InProcess[sdk.KindBridge](desc, open, pluginEnd)
	client, _ := plugin.TestPluginRPCConn(t, map[string]plugin.Plugin{sdk.KindBridge: joined{k.Plugin(), pluginhost.BridgePlugin{}}}, nil)
	t.Cleanup(func() { client.Close(); hostEnd.Close(); pluginEnd.Close() })
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		k.Shutdown(ctx)
	})
	raw, err := client.Dispense(sdk.KindBridge)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*pluginhost.Bridge), hostEnd
}

// joined is go-plugin glue whose plugin side is the kind's and whose host
// side is sdk/pluginhost's.
type joined struct{ server, client plugin.Plugin }

func (j joined) Server(b *plugin.MuxBroker) (any, error) { return j.server.Server(b) }
func (j joined) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return j.client.Client(b, c)
}

// counted counts the bytes read from a connection.
type counted struct {
	net.Conn
	n atomic.Int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestCallsOnInheritedSocket: a host that passes the plugin's inherited
// socket gets its calls answered on it (not on go-plugin's multiplexer),
// with the same bound on a result and the same cancelling.
func TestCallsOnInheritedSocket(t *testing.T) {
	e := &echo{blocked: make(chan struct{})}
	h, hostEnd := handleOnSocket(t, bridge.Description{}, func(context.Context, bridge.Config) (bridge.Server, error) { return e, nil })
	ctx := context.Background()
	sock := &counted{Conn: hostEnd}
	c, err := h.Open(ctx, bridge.Config{}, pluginhost.BridgeOptions{MaxResultBytes: 1024, Stream: sock})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Call(ctx, "echo", json.RawMessage(`{"a":1}`)); err != nil || r.Text != `{"a":1}` || string(r.Structured) != `{"a":1}` {
		t.Fatalf("echo = %+v, %v", r, err)
	}
	if sock.n.Load() == 0 {
		t.Fatal("the reply did not come on the inherited socket")
	}
	if _, err := c.Call(ctx, "array", nil); sdk.ErrorCode(err) != sdk.CodeContract {
		t.Fatalf("array structured content: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { <-e.blocked; cancel() }()
	if _, err := c.Call(cctx, "block", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("blocked call: %v", err)
	}
	if _, err := c.Call(ctx, "big", nil); sdk.ErrorCode(err) != sdk.CodeTooLarge || !strings.Contains(err.Error(), "mcp_serve.max_result_mb") {
		t.Fatalf("big: %v", err)
	}
}

// TestInheritedSocketOfAnOlderPlugin: a plugin that does not serve on the
// inherited socket (one built before it could, or one without such a
// socket) is called on a broker stream, and the host's end is closed.
func TestInheritedSocketOfAnOlderPlugin(t *testing.T) {
	h := handle(t, bridge.Description{}, func(context.Context, bridge.Config) (bridge.Server, error) { return &echo{}, nil })
	hostEnd, other := net.Pipe()
	defer other.Close()
	c, err := h.Open(context.Background(), bridge.Config{}, pluginhost.BridgeOptions{Stream: hostEnd})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Call(context.Background(), "echo", json.RawMessage(`{}`)); err != nil || r.Text != `{}` {
		t.Fatalf("echo = %+v, %v", r, err)
	}
	if _, err := other.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the host's end of the unused socket: read %v, want it closed", err)
	}
}

// TestInheritedSocketNotAskedFor: a host that does not ask for the
// inherited socket (one built before it could) is answered on a broker
// stream, and the plugin closes its end.
func TestInheritedSocketNotAskedFor(t *testing.T) {
	h, hostEnd := handleOnSocket(t, bridge.Description{}, func(context.Context, bridge.Config) (bridge.Server, error) { return &echo{}, nil })
	c, err := h.Open(context.Background(), bridge.Config{}, pluginhost.BridgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Call(context.Background(), "echo", json.RawMessage(`{}`)); err != nil || r.Text != `{}` {
		t.Fatalf("echo = %+v, %v", r, err)
	}
	if _, err := hostEnd.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the plugin's end of the unused socket: read %v, want it closed", err)
	}
}
