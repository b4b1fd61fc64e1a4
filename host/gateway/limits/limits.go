// Package limits owns the gateway's limits per person and per tool: a
// token bucket of calls per minute and a cap on calls at once, each keyed
// by who calls (and what), bounded in how many keys it remembers, and
// refusals a model can act on (which limit, and when to retry).
package limits

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits are the bounds of one key: CallsPerMinute (0: none) with a burst
// of as many, and Concurrent calls at once (0: none).
type Limits struct {
	CallsPerMinute int
	Concurrent     int
}

// DefaultMaxKeys bounds how many keys a Set remembers at once.
const DefaultMaxKeys = 100_000

// Refusal is a call a limit refused: which one, for whom, and when to try
// again (0 for a concurrency cap: when a call in flight ends).
type Refusal struct {
	Key        string
	Limit      string // "calls_per_minute" or "concurrent"
	Value      int
	RetryAfter time.Duration
	// Scope names the config key the limit is read from
	// ("gateway.limits" or "gateway.policy[N].limits").
	Scope string
}

func (r *Refusal) Error() string {
	if r.Limit == "concurrent" {
		return fmt.Sprintf("limit reached: %d calls at once (%s.concurrent); retry when one of them has finished", r.Value, r.Scope)
	}
	return fmt.Sprintf("limit reached: %d calls per minute (%s.calls_per_minute); retry after %ds", r.Value, r.Scope,
		int(math.Ceil(r.RetryAfter.Seconds())))
}

// Set holds the limits of many keys under the same Limits.
type Set struct {
	lim     Limits
	scope   string
	maxKeys int
	now     func() time.Time

	mu   sync.Mutex
	keys map[string]*entry
}

type entry struct {
	bucket   *rate.Limiter
	inFlight int
	used     time.Time
}

// New returns the Set of lim, read from config key scope, remembering up
// to maxKeys keys (DefaultMaxKeys when 0); the least recently used idle
// key is forgotten first, which only ever lets a forgotten key start with
// a full bucket.
func New(lim Limits, scope string, maxKeys int) *Set {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	return &Set{lim: lim, scope: scope, maxKeys: maxKeys, now: time.Now, keys: map[string]*entry{}}
}

// Acquire takes one call for key: a token of its bucket and a place among
// its calls at once. It returns the release to call when the call ends,
// or the Refusal. A refused call takes nothing.
func (s *Set) Acquire(key string) (release func(), err error) {
	if s == nil || (s.lim.CallsPerMinute <= 0 && s.lim.Concurrent <= 0) {
		return func() {}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e := s.keys[key]
	if e == nil {
		s.evict()
		e = &entry{}
		if n := s.lim.CallsPerMinute; n > 0 {
			e.bucket = rate.NewLimiter(rate.Limit(float64(n)/60), n)
		}
		s.keys[key] = e
	}
	e.used = now
	if s.lim.Concurrent > 0 && e.inFlight >= s.lim.Concurrent {
		return nil, &Refusal{Key: key, Limit: "concurrent", Value: s.lim.Concurrent, Scope: s.scope}
	}
	if e.bucket != nil {
		r := e.bucket.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			return nil, &Refusal{Key: key, Limit: "calls_per_minute", Value: s.lim.CallsPerMinute, RetryAfter: d, Scope: s.scope}
		}
	}
	e.inFlight++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			e.inFlight--
			s.mu.Unlock()
		})
	}, nil
}

// evict makes room for one more key when the Set is full: it forgets the
// least recently used key with no call in flight (and refills, for that
// key, what a full minute would have). With every key busy it keeps them
// all: a key with calls in flight is never forgotten.
func (s *Set) evict() {
	if len(s.keys) < s.maxKeys {
		return
	}
	var oldest string
	var at time.Time
	for k, e := range s.keys {
		if e.inFlight == 0 && (oldest == "" || e.used.Before(at)) {
			oldest, at = k, e.used
		}
	}
	if oldest != "" {
		delete(s.keys, oldest)
	}
}

// Len is how many keys the Set remembers.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}
