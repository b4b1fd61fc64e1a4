package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/sdk"
)

// An Open started before the host asks for it (sdk.EarlyOpenFDEnv). A host
// that knows, when it starts a transport plugin, which server the plugin
// will connect to first (a one-shot 'hermes mcp call') writes that Open's
// config to a pipe the plugin inherits. The plugin opens the connection at
// once (for the stdio plugin: starts the server), so that the server's
// start overlaps the plugin's own handshake and the host's dispense; the
// first Open whose config is byte for byte the one written takes the
// connection, and any other Open (or none, at shutdown) closes it. Nothing
// else differs: the connection is the one Open would have made, its errors
// are that Open's, and what it tells the host before it is taken waits.

// maxEarlyConfig bounds the config read from the pipe; a longer one is not
// opened early (the host's Open then opens as usual).
const maxEarlyConfig = 4 << 20

// earlyOpen is the connection opened from the pipe's config.
type earlyOpen struct {
	// read is closed once raw is known (nil: nothing to open).
	read chan struct{}
	raw  []byte
	// done is closed once the opening ended, with conn or err.
	done chan struct{}
	conn Conn
	err  error
	host *earlyHost
	log  hclog.Logger

	taken atomic.Bool
}

// startEarly reads the config from the pipe sdk.EarlyOpenFDEnv names, if
// any, and opens it with open in the background; nil when the host passed
// no pipe.
func startEarly(open Opener, log hclog.Logger) *earlyOpen {
	fd, err := strconv.Atoi(os.Getenv(sdk.EarlyOpenFDEnv))
	if err != nil || fd < 3 || open == nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "hermes-early-open")
	if f == nil {
		return nil
	}
	e := &earlyOpen{read: make(chan struct{}), done: make(chan struct{}), host: &earlyHost{}, log: log}
	go func() {
		defer close(e.done)
		raw, err := io.ReadAll(io.LimitReader(f, maxEarlyConfig+1))
		f.Close()
		var cfg Config
		if err == nil && len(raw) > 0 && len(raw) <= maxEarlyConfig && json.Unmarshal(raw, &cfg) == nil {
			e.raw = raw
		}
		close(e.read)
		if e.raw == nil {
			log.Debug("no early open: the host's config could not be read", "bytes", len(raw))
			return
		}
		ctx := context.Background()
		if cfg.ConnectTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, cfg.ConnectTimeout)
			defer cancel()
		}
		e.conn, e.err = open(ctx, cfg, e.host)
	}()
	return e
}

// take returns, to the first Open only, the early connection when its
// config is raw: that Open's outcome (ok is true), with host as the host
// the connection speaks to from now on; ctx is that Open's, and its end
// fails the Open as it would have failed its own opening. Otherwise (another config, a
// second Open, nothing opened) ok is false and an early connection is
// closed in the background.
func (e *earlyOpen) take(ctx context.Context, raw []byte, host Host) (conn Conn, err error, ok bool) {
	if e == nil || !e.taken.CompareAndSwap(false, true) {
		return nil, nil, false
	}
	<-e.read
	if e.raw == nil || !bytes.Equal(raw, e.raw) {
		if e.raw != nil {
			e.log.Debug("the connection opened ahead is closed: the host's Open has another config")
		}
		go e.discard()
		return nil, nil, false
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		// The Open was cancelled or ran out of time: as an Open of its
		// own would have, it fails, and the connection goes.
		go e.discard()
		return nil, ctx.Err(), true
	}
	e.log.Debug("the host's Open takes the connection opened ahead", "failed", e.err != nil)
	e.host.attach(host)
	return e.conn, e.err, true
}

// discard closes the early connection once it is open (nothing took it).
func (e *earlyOpen) discard() {
	if e == nil {
		return
	}
	e.taken.Store(true)
	<-e.done
	if e.conn != nil {
		_ = e.conn.Close()
	}
}

// shutdown closes the early connection if no Open took it.
func (e *earlyOpen) shutdown() {
	if e != nil && e.taken.CompareAndSwap(false, true) {
		e.discard()
	}
}

// earlyHost is the Host of an early connection: what the connection asks
// before an Open took it waits for that Open's host, and its warnings are
// kept (the last maxEarlyWarnings) and handed on then.
type earlyHost struct {
	mu       sync.Mutex
	host     Host
	ready    chan struct{}
	warnings []*sdk.Error
}

// maxEarlyWarnings bounds the warnings kept before an Open takes the
// connection.
const maxEarlyWarnings = 16

// attach hands the host's own Host to the early connection.
func (h *earlyHost) attach(host Host) {
	h.mu.Lock()
	h.host = host
	warnings := h.warnings
	h.warnings = nil
	if h.ready != nil {
		close(h.ready)
	}
	h.mu.Unlock()
	for _, w := range warnings {
		host.Warn(w)
	}
}

// wait returns the host once an Open took the connection.
func (h *earlyHost) wait(ctx context.Context) (Host, error) {
	h.mu.Lock()
	if h.host != nil {
		defer h.mu.Unlock()
		return h.host, nil
	}
	if h.ready == nil {
		h.ready = make(chan struct{})
	}
	ready := h.ready
	h.mu.Unlock()
	select {
	case <-ready:
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.host, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Headers waits for the host, then asks it.
func (h *earlyHost) Headers(ctx context.Context, req HeadersRequest) (map[string]string, error) {
	host, err := h.wait(ctx)
	if err != nil {
		return nil, errNotTaken(err)
	}
	return host.Headers(ctx, req)
}

// Challenge waits for the host, then hands it the challenge.
func (h *earlyHost) Challenge(ctx context.Context, c ChallengeRequest) (ChallengeAnswer, error) {
	host, err := h.wait(ctx)
	if err != nil {
		return ChallengeAnswer{}, errNotTaken(err)
	}
	return host.Challenge(ctx, c)
}

// Warn hands the warning on, or keeps it until an Open takes the
// connection.
func (h *earlyHost) Warn(w *sdk.Error) {
	h.mu.Lock()
	host := h.host
	if host == nil {
		if len(h.warnings) == maxEarlyWarnings {
			h.warnings = h.warnings[1:]
		}
		h.warnings = append(h.warnings, w)
	}
	h.mu.Unlock()
	if host != nil {
		host.Warn(w)
	}
}

// errNotTaken is what an early connection's question gets when it ended
// before any Open took the connection.
func errNotTaken(err error) error {
	return sdk.NewError(sdk.CodeClosed, "the connection was opened ahead of the host's Open, which has not come: %v", err)
}
