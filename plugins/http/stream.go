package main

import (
	"context"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/sdk"
)

// gate is a channel closed once.
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// streamWait bounds how long the end of the handshake waits for the GET
// stream.
const streamWait = 2 * time.Second

// initialized is called when initialize succeeded. It waits, within
// streamWait, until the Streamable HTTP GET stream has been answered (mcp-go
// opens it once initialize succeeded): servers send what is not tied to a
// request (list_changed, roots or sampling requests right after the
// handshake) only on that stream, and drop it while there is none; so the
// host completes the handshake only once the stream is there.
func (t *httpTransport) initialized(ctx context.Context) {
	if t.streamAnswered == nil {
		return
	}
	timer := time.NewTimer(streamWait)
	defer timer.Stop()
	select {
	case <-t.streamAnswered.ch:
	case <-timer.C:
		t.log.Debug("GET stream not answered yet; completing the handshake anyway", "url", t.shownURL)
	case <-ctx.Done():
	}
}

// streamLost is called when the SSE transport's event stream ends. Without
// the stream no response can arrive, so the connection is over: the host
// hears it at once (Done) and reconnects.
func (t *httpTransport) streamLost(err error) {
	if t.closed.Load() {
		return
	}
	msg := "stream ended"
	if err != nil {
		msg = t.scrub(err.Error())
	}
	t.log.Warn("SSE stream lost", "url", t.shownURL, "error", msg)
	t.finish(sdk.NewError(sdk.CodeClosed, "the SSE stream of MCP server '%s' at %s was lost (%s); reconnecting", t.cfg.Server, t.shownURL, msg))
}

func (t *httpTransport) finish(err error) {
	t.doneOnce.Do(func() {
		t.err = err
		close(t.done)
	})
}

// Done is closed when the connection ended on its own (mcpgo.Watched): an
// SSE stream that broke. A Streamable HTTP connection has no such signal;
// its GET stream reconnects by itself and requests report their own
// failures.
func (t *httpTransport) Done() <-chan struct{} { return t.done }

// Err says why the connection ended, or nil while it has not.
func (t *httpTransport) Err() error {
	select {
	case <-t.done:
		return t.err
	default:
		return nil
	}
}
