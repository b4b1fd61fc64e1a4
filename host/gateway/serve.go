package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// DefaultDrain is how long a stopping gateway lets the calls in flight
// finish when the config sets no bound (gateway.drain_seconds).
const DefaultDrain = 25 * time.Second

// Serve serves the gateway on ln until ctx ends. Then it stops accepting:
// /readyz answers 503 at once, the listener closes, and the requests in
// flight get up to drain to finish (a Kubernetes pod's
// terminationGracePeriodSeconds should exceed it) before what is left is
// cut.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener, drain time.Duration) error {
	if drain <= 0 {
		drain = DefaultDrain
	}
	srv := &http.Server{
		Handler:           g.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	g.draining.Store(true)
	end, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := srv.Shutdown(end)
	if err != nil {
		g.opts.Log.Warn("calls still in flight when the drain bound passed; cut", "drain", drain)
		_ = srv.Close()
	}
	_ = g.http.Shutdown(end)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return nil
}
