package registry

import (
	"context"
	"errors"
	"os"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/offered"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/sdk"
)

// retryable reports whether a failed connect is worth retrying with
// backoff (failure.Retry): not for auth (a login only the user can do,
// above all), a missing executable or a bad config entry.
func retryable(err error) bool { return failure.Retry(err) }

// failureCode returns the sdk error code of a failed connect, and the
// HTTP status and challenge of the 401/403 behind it, when it had them.
func failureCode(err error) (code string, status int, challenge string) {
	var se *sdk.Error
	if errors.As(err, &se) {
		return se.Code, se.Status, se.WWWAuthenticate
	}
	return "", 0, ""
}

// listError is a session that connected but could not list its tools; its
// error says so (see ListTools).
type listError struct{ err error }

func (e *listError) Error() string { return e.err.Error() }
func (e *listError) Unwrap() error { return e.err }

// open is the server's supervisor.OpenFunc: a prepared session and the
// transport plugin process serving it.
func (s *server) open(ctx context.Context) (*conn, *supervisor.Plugin, error) {
	s.leaveIdle()
	c, err := s.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	return c, c.sess.Plugin, nil
}

// connect opens a session and prepares it: log level, tools. A failure
// after the handshake closes the session. The level's request and the
// listing are in flight together; the manager's one call may take the
// record instead of the listing (onecall.go).
func (s *server) connect(ctx context.Context) (*conn, error) {
	d := s.deps()
	rec := s.callRecord()
	sess, err := session.Connect(ctx, session.PlanFor(s.firstConnect(), d.Home, d.Environ), d)
	if err != nil {
		return nil, err
	}
	c := &conn{sess: sess, req: make(chan struct{})}
	caps := sess.Capabilities()
	levelSet := s.setLevel(ctx, sess)
	if r := recordOf(rec); r != nil && caps.Tools != nil {
		s.registerRecord(r, caps)
		// One round trip before the call all the same (the level's
		// answer, or a ping): a server that asks the host something once
		// initialized (server-filesystem asks for the roots, and answers
		// with its command line's folders until it has them) has asked by
		// then, and the host's answer reaches it before the call does.
		if caps.Logging != nil {
			levelSet()
		} else {
			pctx, cancel := context.WithTimeout(ctx, s.m.timings.ProbeTimeout)
			_ = sess.Ping(pctx)
			cancel()
		}
		return c, nil
	}
	if caps.Tools != nil {
		s.mu.Lock()
		if s.state == StateConnecting && s.err == "" {
			// What a status shows while the listing is pending.
			s.err = "initialized; waiting for the answer to tools/list"
		}
		s.mu.Unlock()
		s.listMu.Lock()
		tools, err := s.listTools(sess)
		if err == nil {
			s.reconciled(s.storeTools(tools, caps))
			s.offer(sess)
		}
		s.listMu.Unlock()
		if err != nil {
			_ = sess.Close()
			levelSet()
			return nil, &listError{err}
		}
	} else {
		s.listMu.Lock()
		s.reconciled(s.storeTools(nil, caps))
		s.offer(sess)
		s.listMu.Unlock()
	}
	levelSet()
	// On the 2026-07-28 revision list_changed notifications come only
	// on a stream the client opens.
	if !s.m.snapshot {
		sess.Listen(func(err error) {
			s.log.Debug("stream of notifications ended; opening it again", "error", redactErr(err))
		})
	}
	return c, nil
}

// recordOf waits for the record callRecord reads (nil channel: none).
func recordOf(ch <-chan *offered.Record) *offered.Record {
	if ch == nil {
		return nil
	}
	return <-ch
}

func redactErr(err error) string {
	if err == nil {
		return "closed by the server"
	}
	return toolview.Redact(err.Error())
}

// deps are the session dependencies of this server: the manager's, with
// notification and close handlers bound to this server.
func (s *server) deps() session.Deps {
	d := s.m.deps
	userNote, userClosed := d.OnNotification, d.OnClosed
	d.Logger = s.m.log
	if s.m.requests != nil {
		r := s.m.requests(s.cfg)
		if r.Sampling != nil {
			d.Sampling = r.Sampling
		}
		if r.Elicitation != nil {
			d.Elicitation = r.Elicitation
		}
		if r.Roots != nil {
			d.Roots = r.Roots
		}
	}
	d.OnNotification = func(name string, n mcpvalue.Notification) {
		s.onNotification(n)
		if userNote != nil {
			userNote(name, n)
		}
	}
	d.OnClosed = func(name string, err error) {
		if err != nil {
			s.log.Warn("connection ended", "error", toolview.Redact(oneLine(err.Error())))
		}
		if userClosed != nil {
			userClosed(name, err)
		}
	}
	return d
}

// firstConnect is the entry to connect with: s.cfg, or for a server's
// first start (never connected in this run, no record of what it offered
// in the store) whose entry does not set connect_timeout, a copy with
// config.FirstConnectTimeout, since a first start is the slowest (npx or
// uvx fetching the package). Later connects use the entry's timeout.
func (s *server) firstConnect() *config.Server {
	cfg := s.cfg
	if _, set := cfg.Raw["connect_timeout"]; set || cfg.ConnectTimeout != config.DefaultConnectTimeout {
		return cfg
	}
	s.mu.Lock()
	connected := s.connected
	s.mu.Unlock()
	st := s.m.off.store
	if connected || st == nil {
		return cfg
	}
	if _, err := os.Stat(st.RecordPath(cfg.StateKey())); err == nil {
		return cfg
	}
	first := *cfg
	first.ConnectTimeout = config.FirstConnectTimeout
	return &first
}
