package sdktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/mcpgo"
	"github.com/hermes-agent/hermes/sdk/transport"
	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// CheckTimeout bounds each step of CheckTransport.
const CheckTimeout = 20 * time.Second

type roots struct{}

func (roots) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///sdktest", Name: "sdktest"}}}, nil
}

// CheckTransport runs the transport plugin binary at path through the
// contract against the reference server (NewReferenceServer) that cfg
// reaches: for a plugin that starts local servers, cfg's Command and Env
// from ReferenceCommand (and ServeReferenceIfAsked in TestMain); for a
// remote transport, cfg's URL. Each step is a subtest:
//
//   - open: the plugin connects and the MCP handshake completes;
//   - request: a tools/call travels there and back;
//   - server-request: a request of the server's own reaches the host and
//     the host's answer reaches the server;
//   - cancel: a cancelled request ends promptly, the server hears of it,
//     and the connection stays usable;
//   - server-exit (local servers only): the server exiting ends the
//     connection at once with a reason;
//   - close: the host closes the connection and the plugin answers.
func CheckTransport(t *testing.T, path string, cfg transport.Config) {
	t.Helper()
	local := cfg.URL == ""
	p := Start(t, path)

	var (
		c       *client.Client
		conn    *transport.ClientConn
		waiting = make(chan struct{}, 1)
	)
	ok := t.Run("open", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		tr, cc, err := p.Dial(ctx, cfg, mcpgo.DialOptions{})
		if err != nil {
			t.Fatalf("the plugin could not open a connection: %v (code %q). Opener must connect to the server cfg describes and return a Conn", err, sdk.ErrorCode(err))
		}
		conn = cc
		c = client.NewClient(tr, client.WithRootsHandler(roots{}), client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
		c.OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method == WaitingNotification {
				select {
				case waiting <- struct{}{}:
				default:
				}
			}
		})
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
			ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION,
			ClientInfo:      mcp.Implementation{Name: "sdktest", Version: "1"},
			Capabilities: mcp.ClientCapabilities{Roots: &struct {
				ListChanged bool `json:"listChanged,omitempty"`
			}{}},
		}}); err != nil {
			t.Fatalf("initialize through the plugin failed: %v. Write must deliver the host's message to the server and Read must return the server's answer", err)
		}
	})
	if !ok {
		return
	}
	call := func(ctx context.Context, name string, args map[string]any) (string, error) {
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
		if err != nil {
			return "", err
		}
		if len(res.Content) == 0 {
			return "", errors.New("empty result")
		}
		text, _ := res.Content[0].(mcp.TextContent)
		if res.IsError {
			return "", errors.New(text.Text)
		}
		return text.Text, nil
	}

	t.Run("request", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		msg := strings.Repeat("ü", 1000) + " end"
		got, err := call(ctx, "echo", map[string]any{"message": msg})
		if err != nil || got != msg {
			t.Fatalf("echo through the plugin = %q, %v; want the message back unchanged. Messages must travel as bytes, one per Read/Write", trim(got), err)
		}
	})

	t.Run("server-request", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		got, err := call(ctx, "roots", nil)
		if err != nil || !strings.Contains(got, "file:///sdktest") {
			t.Fatalf("a roots/list request from the server got %q, %v; want the host's roots. Read must return requests of the server's own, and Write must deliver the host's response to them", trim(got), err)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		wctx, wcancel := context.WithCancel(ctx)
		defer wcancel()
		errc := make(chan error, 1)
		go func() { _, err := call(wctx, "wait", nil); errc <- err }()
		select {
		case <-waiting:
		case <-ctx.Done():
			t.Fatal("a notification from the server never reached the host: Read must return the server's notifications")
		}
		wcancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("a cancelled call returned %v, want context.Canceled", err)
			}
		case <-ctx.Done():
			t.Fatal("a cancelled call did not return")
		}
		for {
			n, err := call(ctx, "cancellations", nil)
			if err != nil {
				t.Fatalf("after a cancel the connection is unusable: %v", err)
			}
			if n != "0" {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatal("the server never heard of the cancelled request: the host sends notifications/cancelled as a message and Write must deliver it (an HTTP transport ends the request's exchange when ctx ends)")
			case <-time.After(20 * time.Millisecond):
			}
		}
	})

	if local {
		t.Run("server-exit", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
			defer cancel()
			_, err := call(ctx, "exit", map[string]any{"code": 3})
			if err == nil {
				t.Fatal("the exit tool answered; want the connection to end")
			}
			select {
			case <-conn.Done():
			case <-ctx.Done():
				t.Fatal("the server exited but the connection did not end: Read must return an error once the server is gone")
			}
			if sdk.ErrorCode(conn.Err()) != sdk.CodeClosed {
				t.Fatalf("the connection ended with %v (code %q), want code %q", conn.Err(), sdk.ErrorCode(conn.Err()), sdk.CodeClosed)
			}
			if !errors.Is(err, mcptransport.ErrTransportClosed) && sdk.ErrorCode(err) == "" {
				t.Fatalf("the call in flight failed with %v, want a closed-connection error", err)
			}
		})
	}

	t.Run("close", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		tr, cc, err := p.Dial(ctx, cfg, mcpgo.DialOptions{})
		if err != nil {
			t.Fatalf("a second connection through the same plugin failed: %v", err)
		}
		c2 := client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
		if _, err := c2.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
			ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "sdktest", Version: "1"}}}); err != nil {
			t.Fatalf("initialize on a second connection: %v", err)
		}
		done := make(chan struct{})
		go func() { _ = cc.Close(ctx); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("Close did not return: Conn.Close must end the connection within its graces")
		}
		if _, err := c2.ListTools(ctx, mcp.ListToolsRequest{}); err == nil {
			t.Fatal("a request after Close succeeded")
		}
	})
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
