package registry

import (
	"time"

	"github.com/hermes-agent/hermes/host/supervisor"
)

// Defaults of the live registry's timing (SPEC §3, REFERENCE §1.2). Tests
// shorten them through Timings; nothing else should.
const (
	// DefaultInitialConnectAttempts is how many times a server's first
	// connect is tried before the server is given up until its next
	// parked retry. The waits between attempts start at InitialBackoff and
	// double (1 s, 2 s).
	DefaultInitialConnectAttempts = 3
	// DefaultMaxReconnects is how many reconnects in a row may fail after a
	// good connect before the server is parked.
	DefaultMaxReconnects = 5
	// DefaultInitialBackoff is the first wait after a failed attempt; it
	// doubles with every further failure.
	DefaultInitialBackoff = 1 * time.Second
	// DefaultMaxBackoff caps the doubling wait between reconnects.
	DefaultMaxBackoff = 60 * time.Second
	// DefaultParkedRetry is how often a parked (or failed) server is tried
	// again in the background.
	DefaultParkedRetry = 300 * time.Second
	// DefaultSessionWait is the longest a call waits for a session while the
	// transport is down (further bounded by the server's timeout).
	DefaultSessionWait = 5 * time.Second
	// DefaultReconnectWait is how long a call whose session expired waits
	// for a new session before its single retry.
	DefaultReconnectWait = 15 * time.Second
	// DefaultBreakerThreshold is the number of consecutive failed calls that
	// opens a server's circuit breaker.
	DefaultBreakerThreshold = 3
	// DefaultBreakerCooldown is how long an open breaker fails calls fast
	// before it lets one probe call through.
	DefaultBreakerCooldown = 60 * time.Second
	// DefaultDiscoveryTimeout bounds a whole parallel discovery.
	DefaultDiscoveryTimeout = 120 * time.Second
	// DefaultProbeTimeout bounds one keepalive probe (ping or tools/list).
	DefaultProbeTimeout = 30 * time.Second
	// DefaultShutdownWait is how long Close waits for one server to stop.
	DefaultShutdownWait = 10 * time.Second
	// MaxListPages caps the pages of one paginated tools/list.
	MaxListPages = 50
	// MaxServerLogLen caps the data of one server log line.
	MaxServerLogLen = 2000
)

// Timings are the intervals and limits of the live registry. The zero value
// of any field means its Default* constant.
type Timings struct {
	InitialConnectAttempts int
	MaxReconnects          int
	InitialBackoff         time.Duration
	MaxBackoff             time.Duration
	ParkedRetry            time.Duration
	SessionWait            time.Duration
	ReconnectWait          time.Duration
	BreakerThreshold       int
	BreakerCooldown        time.Duration
	DiscoveryTimeout       time.Duration
	ProbeTimeout           time.Duration
	ShutdownWait           time.Duration
	// Now is the clock of the circuit breaker and of the server log rate
	// limit; nil means time.Now.
	Now func() time.Time
}

// DefaultTimings returns the documented defaults.
func DefaultTimings() Timings {
	return Timings{}.withDefaults()
}

func (t Timings) withDefaults() Timings {
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	setInt(&t.InitialConnectAttempts, DefaultInitialConnectAttempts)
	setInt(&t.MaxReconnects, DefaultMaxReconnects)
	setInt(&t.BreakerThreshold, DefaultBreakerThreshold)
	setDur(&t.InitialBackoff, DefaultInitialBackoff)
	setDur(&t.MaxBackoff, DefaultMaxBackoff)
	setDur(&t.ParkedRetry, DefaultParkedRetry)
	setDur(&t.SessionWait, DefaultSessionWait)
	setDur(&t.ReconnectWait, DefaultReconnectWait)
	setDur(&t.BreakerCooldown, DefaultBreakerCooldown)
	setDur(&t.DiscoveryTimeout, DefaultDiscoveryTimeout)
	setDur(&t.ProbeTimeout, DefaultProbeTimeout)
	setDur(&t.ShutdownWait, DefaultShutdownWait)
	if t.Now == nil {
		t.Now = time.Now
	}
	return t
}

// backoff is the wait after the n-th consecutive failed connect (n >= 1):
// InitialBackoff doubled n-1 times, at most MaxBackoff.
func (t Timings) backoff() supervisor.Backoff {
	return supervisor.Backoff{First: t.InitialBackoff, Max: t.MaxBackoff}
}
