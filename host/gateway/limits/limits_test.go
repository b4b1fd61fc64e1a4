package limits

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCallsPerMinute(t *testing.T) {
	s := New(Limits{CallsPerMinute: 3}, "gateway.limits", 0)
	now := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return now }
	for i := range 3 {
		release, err := s.Acquire("alice")
		if err != nil {
			t.Fatalf("call %d refused: %v", i, err)
		}
		release()
	}
	_, err := s.Acquire("alice")
	var r *Refusal
	if !errors.As(err, &r) || r.Limit != "calls_per_minute" || r.RetryAfter <= 0 || r.RetryAfter > 20*time.Second {
		t.Fatalf("fourth call in a minute: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "3 calls per minute (gateway.limits.calls_per_minute); retry after 20s") {
		t.Fatalf("message %q", msg)
	}
	if _, err := s.Acquire("bob"); err != nil {
		t.Fatalf("another person's call refused: %v", err)
	}
	now = now.Add(20 * time.Second)
	if _, err := s.Acquire("alice"); err != nil {
		t.Fatalf("after the retry time: %v", err)
	}
}

func TestConcurrent(t *testing.T) {
	s := New(Limits{Concurrent: 2}, "gateway.policy[1].limits", 0)
	r1, _ := s.Acquire("a")
	r2, _ := s.Acquire("a")
	if _, err := s.Acquire("a"); err == nil || !strings.Contains(err.Error(), "2 calls at once (gateway.policy[1].limits.concurrent)") {
		t.Fatalf("third call at once: %v", err)
	}
	r1()
	r1() // a second release changes nothing
	r3, err := s.Acquire("a")
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	if _, err := s.Acquire("a"); err == nil {
		t.Fatal("a double release freed two places")
	}
	r2()
	r3()
}

// The keys remembered are bounded; a key with a call in flight is never
// the one forgotten.
func TestKeysBounded(t *testing.T) {
	s := New(Limits{Concurrent: 1}, "gateway.limits", 10)
	busy, _ := s.Acquire("busy")
	for i := range 100 {
		release, err := s.Acquire(strings.Repeat("k", i+1))
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	if s.Len() > 10 {
		t.Fatalf("%d keys remembered, bound 10", s.Len())
	}
	if _, err := s.Acquire("busy"); err == nil {
		t.Fatal("the busy key was forgotten and its cap with it")
	}
	busy()
}

func TestNoLimits(t *testing.T) {
	var s *Set
	release, err := s.Acquire("x")
	if err != nil {
		t.Fatal(err)
	}
	release()
	none := New(Limits{}, "gateway.limits", 0)
	for range 5 {
		if _, err := none.Acquire("x"); err != nil {
			t.Fatal(err)
		}
	}
	if none.Len() != 0 {
		t.Fatal("a Set without limits remembers keys")
	}
}
