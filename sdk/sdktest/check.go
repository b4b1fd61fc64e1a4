package sdktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// CheckTimeout bounds each step of a check.
const CheckTimeout = 20 * time.Second

// CheckTransport runs the transport plugin binary at path through the
// contract against the reference server (ServeReference) that cfg reaches:
// for a plugin that starts local servers, cfg's Command and Env from
// ReferenceCommand (and ServeReferenceIfAsked in TestMain); for a remote
// transport, cfg's URL. Each step is a subtest:
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

	var s *Session
	ok := t.Run("open", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		var err error
		s, err = p.Dial(ctx, cfg)
		if err != nil {
			t.Fatalf("transport plugin: the plugin could not open a connection: %v (code %q). Opener must connect to the server cfg describes and return a Conn", err, sdk.ErrorCode(err))
		}
		if err := s.Initialize(ctx); err != nil {
			t.Fatalf("transport plugin: initialize through the plugin failed: %v. Write must deliver the host's message to the server and Read must return the server's answer", err)
		}
	})
	if !ok {
		return
	}

	t.Run("request", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		msg := strings.Repeat("ü", 1000) + " end"
		got, err := s.CallTool(ctx, "echo", map[string]any{"message": msg})
		if err != nil || got != msg {
			t.Fatalf("transport plugin: echo through the plugin = %q, %v; want the message back unchanged. Messages must travel as bytes, one per Read/Write", trim(got), err)
		}
	})

	t.Run("server-request", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		got, err := s.CallTool(ctx, "roots", nil)
		if err != nil || !strings.Contains(got, "file:///sdktest") {
			t.Fatalf("transport plugin: a roots/list request from the server got %q, %v; want the host's roots. Read must return requests of the server's own, and Write must deliver the host's response to them", trim(got), err)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		wctx, wcancel := context.WithCancel(ctx)
		defer wcancel()
		errc := make(chan error, 1)
		go func() { _, err := s.CallTool(wctx, "wait", nil); errc <- err }()
		for waiting := false; !waiting; {
			select {
			case n := <-s.Notifications:
				waiting = n == WaitingNotification
			case <-ctx.Done():
				t.Fatal("transport plugin: a notification from the server never reached the host: Read must return the server's notifications")
			}
		}
		wcancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("transport plugin: a cancelled call returned %v, want context.Canceled", err)
			}
		case <-ctx.Done():
			t.Fatal("transport plugin: a cancelled call did not return")
		}
		for {
			n, err := s.CallTool(ctx, "cancellations", nil)
			if err != nil {
				t.Fatalf("transport plugin: after a cancel the connection is unusable: %v", err)
			}
			if n != "0" {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatal("transport plugin: the server never heard of the cancelled request: the host sends notifications/cancelled as a message and Write must deliver it (an HTTP transport ends the request's exchange when ctx ends)")
			case <-time.After(20 * time.Millisecond):
			}
		}
	})

	if local {
		t.Run("server-exit", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
			defer cancel()
			_, err := s.CallTool(ctx, "exit", map[string]any{"code": 3})
			if err == nil {
				t.Fatal("transport plugin: the exit tool answered; want the connection to end")
			}
			select {
			case <-s.Conn().Done():
			case <-ctx.Done():
				t.Fatal("transport plugin: the server exited but the connection did not end: Read must return an error once the server is gone")
			}
			if sdk.ErrorCode(s.Conn().Err()) != sdk.CodeClosed {
				t.Fatalf("transport plugin: the connection ended with %v (code %q), want code %q: Read's error must say the connection is closed", s.Conn().Err(), sdk.ErrorCode(s.Conn().Err()), sdk.CodeClosed)
			}
		})
	}

	t.Run("close", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		s2, err := p.Dial(ctx, cfg)
		if err != nil {
			t.Fatalf("transport plugin: a second connection through the same plugin failed: %v", err)
		}
		if err := s2.Initialize(ctx); err != nil {
			t.Fatalf("transport plugin: initialize on a second connection: %v", err)
		}
		done := make(chan struct{})
		go func() { _ = s2.Conn().Close(ctx); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("transport plugin: Close did not return: Conn.Close must end the connection within its graces")
		}
		if _, err := s2.Request(ctx, "tools/list", nil); err == nil {
			t.Fatal("transport plugin: a request after Close succeeded")
		}
	})
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
