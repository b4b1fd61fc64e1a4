package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/store"
)

const stateVersion = 1

// Marks of an approval in the state.
const (
	openMark    = "open"
	decidedMark = "decided"
)

// state is what survives a restart: the next cursor, the last message id
// turned into events, and the approvals reported (id → open or decided)
// with the latest change time seen.
type state struct {
	Version           int               `json:"version"`
	NextCursor        int64             `json:"next_cursor"`
	LastMessageID     int64             `json:"last_message_id"`
	ApprovalWatermark float64           `json:"approval_watermark"`
	Approvals         map[string]string `json:"approvals"`
	// ChangedAt is the latest change time of each approval, for pruning.
	ChangedAt map[string]float64 `json:"approval_changed_at"`
}

// cursor hands out the next cursor.
func (s *state) cursor() int64 {
	c := s.NextCursor
	s.NextCursor++
	return c
}

func (s state) clone() state {
	c := s
	c.Approvals = make(map[string]string, len(s.Approvals))
	for k, v := range s.Approvals {
		c.Approvals[k] = v
	}
	c.ChangedAt = make(map[string]float64, len(s.ChangedAt))
	for k, v := range s.ChangedAt {
		c.ChangedAt[k] = v
	}
	return c
}

// seeApproval records a as reported.
func (s *state) seeApproval(a store.Approval) {
	if s.Approvals == nil {
		s.Approvals = map[string]string{}
	}
	if s.ChangedAt == nil {
		s.ChangedAt = map[string]float64{}
	}
	changed := math.Max(a.CreatedAt, a.DecidedAt)
	if a.Decision != "" {
		s.Approvals[a.ID] = decidedMark
	} else {
		s.Approvals[a.ID] = openMark
	}
	s.ChangedAt[a.ID] = changed
	if changed > s.ApprovalWatermark {
		s.ApprovalWatermark = changed
	}
}

// prune forgets decided approvals that ApprovalsSince no longer returns, so
// the state stays small.
func (s *state) prune() {
	limit := s.ApprovalWatermark - 2*ApprovalSlack.Seconds()
	for id, mark := range s.Approvals {
		if mark == decidedMark && s.ChangedAt[id] < limit {
			delete(s.Approvals, id)
			delete(s.ChangedAt, id)
		}
	}
}

// MaxStateBytes bounds the state file as it is read; a larger one is not
// one this package wrote and is started over.
const MaxStateBytes = 4 << 20

// loadState reads the state file at path; found is false when there is
// none (or an unreadable one, which is started over).
func loadState(path string) (st state, found bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return state{}, false, nil
		}
		return state{}, false, fmt.Errorf("read event state %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxStateBytes+1))
	if err != nil {
		return state{}, false, fmt.Errorf("read event state %s: %w", path, err)
	}
	if len(data) > MaxStateBytes {
		// Not a file this package wrote: start over.
		return state{}, false, nil
	}
	if err := json.Unmarshal(data, &st); err != nil || st.Version != stateVersion || st.NextCursor < 1 {
		// A corrupt or foreign file: keep the cursor when it is readable,
		// start over otherwise.
		return state{NextCursor: st.NextCursor}, false, nil
	}
	if st.Approvals == nil {
		st.Approvals = map[string]string{}
	}
	if st.ChangedAt == nil {
		st.ChangedAt = map[string]float64{}
	}
	return st, true, nil
}

// saveState writes st to path atomically: a temp file in the same folder,
// fsync, rename.
func saveState(path string, st state) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode event state %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write event state %s: %w", path, err)
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("write event state %s: %w", path, err)
	}
	return nil
}
