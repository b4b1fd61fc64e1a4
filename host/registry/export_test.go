package registry

import (
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"time"

	"github.com/hermes-agent/hermes/host/session"
)

// DriftFromCache applies drift to tools of server name as lazy start from
// the store would (tests only).
func (m *Manager) DriftFromCache(name string, tools []mcpvalue.Tool) bool {
	return m.server(name).driftFromCache(tools)
}

// SessionOf returns the live session of a server, or nil (tests only).
func (m *Manager) SessionOf(name string) *session.Session {
	s := m.server(name)
	if s == nil {
		return nil
	}
	if c := s.current(); c != nil {
		return c.sess
	}
	return nil
}

// Probe exposes the keepalive probe to tests.
var Probe = probe

// NewTestBreaker returns a breaker with the given timings, driven by
// allow/success/failure (tests only).
func NewTestBreaker(t Timings) *TestBreaker { return &TestBreaker{b: newBreaker(t.withDefaults())} }

// TestBreaker wraps the unexported breaker for tests.
type TestBreaker struct{ b *breaker }

func (t *TestBreaker) Allow() (ok, probe bool, failures int) {
	ok, probe, failures, _ = t.b.allow()
	return
}
func (t *TestBreaker) Success() { t.b.success() }
func (t *TestBreaker) Failure() { t.b.failure() }
func (t *TestBreaker) Release() { t.b.release() }

// Backoff exposes the backoff schedule.
func Backoff(t Timings, n int) interface{ Seconds() float64 } {
	return t.withDefaults().backoff().Wait(max(n, 1))
}

// Retryable and FailureCode expose the connect-failure classifiers to tests.
var Retryable = retryable

// FailureCode is failureCode without the HTTP status (tests only).
func FailureCode(err error) (code, challenge string) {
	code, _, challenge = failureCode(err)
	return code, challenge
}

// FirstConnectTimeout is the connect timeout the next connect of server
// name would use (tests only).
func (m *Manager) FirstConnectTimeout(name string) time.Duration {
	return m.server(name).firstConnect().ConnectTimeout
}
