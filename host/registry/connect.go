package registry

import (
	"context"
	"errors"
	"fmt"

	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/mark3labs/mcp-go/mcp"
)

// retryable reports whether a failed connect is worth retrying with
// backoff: not for auth (a login only the user can do, above all), a
// missing executable or a bad config entry.
func retryable(err error) bool {
	var ce *session.ConnectError
	if errors.As(err, &ce) {
		switch ce.Code {
		case sdk.CodeAuth, sdk.CodeLoginNeeded, sdk.CodeNotFound, sdk.CodeConfig:
			return false
		}
		return true
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sdk.CodeAuth, sdk.CodeLoginNeeded, sdk.CodeNotFound, sdk.CodeConfig:
			return false
		}
	}
	var le *listError
	if errors.As(err, &le) {
		return true
	}
	// A config error from the entry itself, or a plugin that cannot be
	// found, will not fix itself.
	return !errors.Is(err, errConfig)
}

// failureCode returns the sdk error code of a failed connect and the
// challenge of the 401/403 behind it, when it had them.
func failureCode(err error) (code, challenge string) {
	var ce *session.ConnectError
	if errors.As(err, &ce) {
		return ce.Code, ce.Challenge
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		return se.Code, se.WWWAuthenticate
	}
	return "", ""
}

// errConfig marks an unusable server entry.
var errConfig = errors.New("config error")

// listError is a session that connected but could not list its tools; its
// error says so (see ListTools).
type listError struct{ err error }

func (e *listError) Error() string { return e.err.Error() }
func (e *listError) Unwrap() error { return e.err }

// connect opens a session and prepares it: log level, tools. A failure
// after the handshake closes the session.
func (s *server) connect() (*conn, error) {
	sess, err := session.Connect(s.ctx, s.cfg, s.deps())
	if err != nil {
		var ce *session.ConnectError
		var se *sdk.Error
		if !errors.As(err, &ce) && !errors.As(err, &se) && s.cfg.Err == nil && isPluginMissing(err) {
			return nil, fmt.Errorf("%w: %v", errConfig, err)
		}
		return nil, err
	}
	c := &conn{sess: sess, req: make(chan struct{})}
	caps := sess.Init.Capabilities
	if caps.Logging != nil {
		level := mcp.LoggingLevelInfo
		if s.log.IsDebug() {
			level = mcp.LoggingLevelDebug
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.m.timings.ProbeTimeout)
		if err := sess.Client.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: level}}); err != nil {
			s.log.Debug("logging/setLevel refused", "error", toolview.Redact(err.Error()))
		}
		cancel()
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
			s.storeTools(tools, caps)
		}
		s.listMu.Unlock()
		if err != nil {
			_ = sess.Close()
			return nil, &listError{err}
		}
	} else {
		s.listMu.Lock()
		s.storeTools(nil, caps)
		s.listMu.Unlock()
	}
	// On the 2026-07-28 revision list_changed notifications come only
	// on a stream the client opens.
	if !s.m.snapshot {
		sess.Listen(func(err error) {
			s.log.Debug("stream of notifications ended; opening it again", "error", redactErr(err))
		})
	}
	return c, nil
}

func redactErr(err error) string {
	if err == nil {
		return "closed by the server"
	}
	return toolview.Redact(err.Error())
}

// isPluginMissing reports whether Connect failed because the transport
// plugin binary does not exist (supervisor.Find).
func isPluginMissing(err error) bool {
	return err != nil && containsFold(err.Error(), "not found in")
}

// deps are the session dependencies of this server: the manager's, with
// notification and close handlers bound to this server.
func (s *server) deps() session.Deps {
	d := s.m.deps
	userNote, userClosed := d.OnNotification, d.OnClosed
	d.Logger = s.m.log
	d.OnNotification = func(name string, n mcp.JSONRPCNotification) {
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
