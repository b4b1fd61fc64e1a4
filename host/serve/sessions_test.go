package serve

import "testing"

// TestSessionIDsBounded: past MaxSessions the oldest live session ends,
// and past maxEnded the oldest ended id is forgotten.
func TestSessionIDsBounded(t *testing.T) {
	s := newSessionIDs()
	first := s.Generate()
	for range MaxSessions {
		s.Generate()
	}
	if ended, err := s.Validate(first); !ended || err != nil {
		t.Fatalf("the oldest session past the bound: ended=%v err=%v", ended, err)
	}
	if len(s.live) != MaxSessions {
		t.Fatalf("%d live sessions", len(s.live))
	}
	for range maxEnded {
		s.Terminate(s.Generate())
	}
	if _, err := s.Validate(first); err == nil {
		t.Fatal("an ended id past maxEnded is still remembered")
	}
	if len(s.ended) > maxEnded {
		t.Fatalf("%d ended ids remembered", len(s.ended))
	}
}
