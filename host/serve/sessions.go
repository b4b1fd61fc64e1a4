package serve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
)

// Bounds of the HTTP server's session table.
const (
	// MaxSessions bounds the live sessions; past it the oldest is ended.
	MaxSessions = 1000
	// maxEnded bounds the ended session ids remembered (answered 404
	// "Session terminated"); older ones are forgotten (then answered 404 as
	// unknown).
	maxEnded = 1000
)

// errUnknownSession is Validate's error for an id this server never gave
// out (or forgot): the client gets 404 and must initialize again.
var errUnknownSession = errors.New("unknown session id")

// sessionIDs is the streamable HTTP server's session table (mcp-go's
// SessionIdManager): it gives out random ids, knows which are live, and
// refuses an ended one, which mcp-go's default manager does not (it checks
// the form of an id only, so a session a client ended with DELETE went on
// being served). Both sets are bounded.
type sessionIDs struct {
	mu        sync.Mutex
	live      map[string]bool
	liveOrder []string
	ended     map[string]bool
	endOrder  []string
}

func newSessionIDs() *sessionIDs {
	return &sessionIDs{live: map[string]bool{}, ended: map[string]bool{}}
}

// Generate gives out a new session id.
func (s *sessionIDs) Generate() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "hermes-" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	// Forget ids already ended from the order list before counting.
	for len(s.liveOrder) > 0 && !s.live[s.liveOrder[0]] {
		s.liveOrder = s.liveOrder[1:]
	}
	if len(s.live) >= MaxSessions && len(s.liveOrder) > 0 {
		s.end(s.liveOrder[0])
		s.liveOrder = s.liveOrder[1:]
	}
	s.live[id] = true
	s.liveOrder = append(s.liveOrder, id)
	return id
}

// Validate says whether id is live, ended, or unknown (an error).
func (s *sessionIDs) Validate(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.live[id]:
		return false, nil
	case s.ended[id]:
		return true, nil
	}
	return false, errUnknownSession
}

// Terminate ends id (a client's DELETE, or the idle sweeper).
func (s *sessionIDs) Terminate(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[id] {
		s.end(id)
	}
	return false, nil
}

// end moves a live id to the ended ones; s.mu is held.
func (s *sessionIDs) end(id string) {
	delete(s.live, id)
	s.ended[id] = true
	s.endOrder = append(s.endOrder, id)
	if len(s.endOrder) > maxEnded {
		delete(s.ended, s.endOrder[0])
		s.endOrder = s.endOrder[1:]
	}
}
