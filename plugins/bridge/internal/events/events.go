package events

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/store"
)

// Defaults of the watcher.
const (
	// QueueLimit is how many events the queue holds; the oldest are
	// dropped first.
	QueueLimit = 1000
	// PollInterval is how often the watcher checks the store when no file
	// notification arrived.
	PollInterval = 200 * time.Millisecond
	// DefaultPollLimit is the number of events Poll returns for a limit of
	// 0 or less.
	DefaultPollLimit = 20
	// ContentLimit is how many characters of a message an event carries.
	ContentLimit = 500
	// BatchSize is how many messages one read of the store returns.
	BatchSize = 500
	// StateFile is the watcher's state file in HERMES_HOME.
	StateFile = "mcp_events_state.json"
	// ApprovalSlack is how far before the latest approval change already
	// seen the watcher looks again, for writers whose clocks or commits
	// lag a little.
	ApprovalSlack = time.Minute
)

// recheck are the delays after a file notification at which the watcher
// looks again: a WAL commit is written before readers can see it.
var recheck = []time.Duration{time.Millisecond, 4 * time.Millisecond, 15 * time.Millisecond, 40 * time.Millisecond}

// Event types.
const (
	TypeMessage           = "message"
	TypeApprovalRequested = "approval_requested"
	TypeApprovalResolved  = "approval_resolved"
)

// ErrClosed is returned by Wait after Close.
var ErrClosed = errors.New("event watcher closed")

// Event is one event of the feed. Message events carry Role, Content,
// Timestamp and MessageID; approval_requested events ApprovalID, Kind and
// Description; approval_resolved events ApprovalID and Decision.
type Event struct {
	Cursor     int64  `json:"cursor"`
	Type       string `json:"type"`
	SessionKey string `json:"session_key"`

	Role      string `json:"role,omitempty"`
	Content   string `json:"content,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
	MessageID string `json:"message_id,omitempty"`

	ApprovalID  string `json:"approval_id,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Description string `json:"description,omitempty"`
	Decision    string `json:"decision,omitempty"`
}

// Options configure a Watcher; the zero value uses the defaults.
type Options struct {
	// StatePath is the state file; "" means StateFile in the store's home.
	StatePath string
	// PollInterval is the fallback poll period; 0 means PollInterval.
	PollInterval time.Duration
	// NoNotify disables file notifications, leaving only the poll.
	NoNotify bool
}

// Watcher turns changes of a store into events. Its methods are safe for
// concurrent use.
type Watcher struct {
	st       *store.Store
	statePth string
	poll     time.Duration

	mu      sync.Mutex
	queue   []Event
	changed chan struct{} // closed and replaced on every publish
	closed  bool

	// Owned by the run goroutine after New.
	state    state
	mark     store.Mark
	haveMark bool
	keys     map[string]string // session id -> session key

	notify *fsnotify.Watcher
	done   chan struct{}
	exited chan struct{}
}

// New starts a watcher of s. The baseline is taken before New returns:
// everything committed after that becomes an event, or, with a state file
// from an earlier run, everything after what that run reported.
func New(s *store.Store, opts Options) (*Watcher, error) {
	w := &Watcher{
		st:       s,
		statePth: opts.StatePath,
		poll:     opts.PollInterval,
		changed:  make(chan struct{}),
		keys:     map[string]string{},
		done:     make(chan struct{}),
		exited:   make(chan struct{}),
	}
	if w.statePth == "" {
		w.statePth = filepath.Join(s.Home(), StateFile)
	}
	if w.poll <= 0 {
		w.poll = PollInterval
	}
	ctx := context.Background()
	st, found, err := loadState(w.statePth)
	if err != nil {
		return nil, err
	}
	mark, err := s.Changes(ctx)
	dbOK := err == nil
	if err != nil && !errors.Is(err, store.ErrNoDatabase) {
		return nil, fmt.Errorf("event watcher of %s: %w", s.DBPath(), err)
	}
	if !found || (dbOK && mark.MaxMessageID < st.LastMessageID) {
		// First start, or a replaced database: start from now.
		next := st.NextCursor
		if next < 1 {
			next = 1
		}
		st = state{Version: stateVersion, NextCursor: next, LastMessageID: mark.MaxMessageID, Approvals: map[string]string{}}
		if dbOK {
			list, err := s.ApprovalsSince(ctx, 0)
			if err != nil {
				return nil, fmt.Errorf("event watcher of %s: %w", s.DBPath(), err)
			}
			for _, a := range list {
				st.seeApproval(a)
			}
		}
		if err := saveState(w.statePth, st); err != nil {
			return nil, err
		}
	}
	w.state = st
	if !opts.NoNotify {
		if nw, err := fsnotify.NewWatcher(); err == nil {
			if err := nw.Add(filepath.Dir(s.DBPath())); err == nil {
				w.notify = nw
			} else {
				nw.Close()
			}
		}
	}
	go w.run()
	return w, nil
}

// Close stops the watcher and wakes every Wait with ErrClosed. It does not
// close the store.
func (w *Watcher) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.done)
	<-w.exited
	if w.notify != nil {
		return w.notify.Close()
	}
	return nil
}

// Poll returns up to limit queued events with a cursor greater than
// afterCursor, of session sessionKey when it is not "", oldest first, and
// the cursor of the last one (afterCursor when there is none). A limit of
// 0 or less means DefaultPollLimit.
func (w *Watcher) Poll(afterCursor int64, sessionKey string, limit int) (events []Event, next int64) {
	if limit <= 0 {
		limit = DefaultPollLimit
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	events = []Event{}
	next = afterCursor
	for _, e := range w.queue[w.first(afterCursor):] {
		if sessionKey != "" && e.SessionKey != sessionKey {
			continue
		}
		events = append(events, e)
		next = e.Cursor
		if len(events) == limit {
			break
		}
	}
	return events, next
}

// Wait returns the first queued event with a cursor greater than
// afterCursor (of session sessionKey when it is not ""), waiting up to
// timeout for one. It returns nil, nil on timeout, nil and ctx's error when
// ctx ends first, and ErrClosed after Close. A timeout of 0 or less checks
// once.
func (w *Watcher) Wait(ctx context.Context, afterCursor int64, sessionKey string, timeout time.Duration) (*Event, error) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return nil, ErrClosed
		}
		for _, e := range w.queue[w.first(afterCursor):] {
			if sessionKey == "" || e.SessionKey == sessionKey {
				w.mu.Unlock()
				return &e, nil
			}
		}
		ch := w.changed
		w.mu.Unlock()
		if expired == nil {
			return nil, nil
		}
		select {
		case <-ch:
		case <-expired:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-w.done:
			return nil, ErrClosed
		}
	}
}

// first returns the index of the first queued event with a cursor greater
// than after. Cursors in the queue increase, so it searches.
func (w *Watcher) first(after int64) int {
	lo, hi := 0, len(w.queue)
	for lo < hi {
		mid := (lo + hi) / 2
		if w.queue[mid].Cursor <= after {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// run is the watcher's loop: a check on every notification about the
// database files, rechecks shortly after, and one every poll period.
func (w *Watcher) run() {
	defer close(w.exited)
	ticker := time.NewTicker(w.poll)
	defer ticker.Stop()
	var notes <-chan fsnotify.Event
	var noteErrs <-chan error
	if w.notify != nil {
		notes, noteErrs = w.notify.Events, w.notify.Errors
	}
	base := filepath.Base(w.st.DBPath())
	names := map[string]bool{base: true, base + "-wal": true, base + "-journal": true}
	again := time.NewTimer(time.Hour)
	again.Stop()
	step := len(recheck)
	w.check()
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-notes:
			if !ok {
				notes = nil
				continue
			}
			if !names[filepath.Base(ev.Name)] {
				continue
			}
			// Coalesce what is already pending, then look.
			for drained := false; !drained; {
				select {
				case <-notes:
				default:
					drained = true
				}
			}
			w.check()
			step = 0
			again.Reset(recheck[0])
		case <-noteErrs:
			// A lost notification is caught by the rechecks and the poll.
		case <-again.C:
			w.check()
			step++
			if step < len(recheck) {
				again.Reset(recheck[step] - recheck[step-1])
			}
		case <-ticker.C:
			w.check()
		}
	}
}

// check reads what changed since the last mark and publishes it. Errors
// (a database that is missing or locked for long) are retried on the next
// tick.
func (w *Watcher) check() {
	ctx := context.Background()
	mark, err := w.st.Changes(ctx)
	if err != nil {
		return
	}
	if w.haveMark && mark == w.mark {
		return
	}
	var batch []Event
	st := w.state.clone()
	if mark.MaxMessageID < st.LastMessageID {
		// The database was replaced by one with fewer messages.
		st.LastMessageID = mark.MaxMessageID
	}
	for st.LastMessageID < mark.MaxMessageID {
		msgs, err := w.st.MessagesAfter(ctx, st.LastMessageID, BatchSize)
		if err != nil {
			return
		}
		if len(msgs) == 0 {
			break
		}
		reloaded := false
		for _, m := range msgs {
			st.LastMessageID = m.ID
			if !m.Conversational() {
				continue
			}
			key, ok := w.keys[m.SessionID]
			if !ok && !reloaded {
				w.loadKeys(ctx)
				reloaded = true
				key, ok = w.keys[m.SessionID]
			}
			if !ok || key == "" {
				continue
			}
			batch = append(batch, Event{
				Cursor:     st.cursor(),
				Type:       TypeMessage,
				SessionKey: key,
				Role:       m.Role,
				Content:    truncate(m.Text, ContentLimit),
				Timestamp:  m.Timestamp.String(),
				MessageID:  strconv.FormatInt(m.ID, 10),
			})
		}
	}
	approvals, err := w.st.ApprovalsSince(ctx, st.ApprovalWatermark-ApprovalSlack.Seconds())
	if err != nil {
		return
	}
	for _, a := range approvals {
		prev, seen := st.Approvals[a.ID]
		if !seen {
			batch = append(batch, Event{
				Cursor: st.cursor(), Type: TypeApprovalRequested, SessionKey: a.SessionKey,
				ApprovalID: a.ID, Kind: a.Kind, Description: a.Description,
			})
		}
		if a.Decision != "" && prev != decidedMark {
			batch = append(batch, Event{
				Cursor: st.cursor(), Type: TypeApprovalResolved, SessionKey: a.SessionKey,
				ApprovalID: a.ID, Decision: a.Decision,
			})
		}
		st.seeApproval(a)
	}
	st.prune()
	if len(batch) > 0 || st.LastMessageID != w.state.LastMessageID {
		// Save before publishing: a cursor handed out is never reused.
		if err := saveState(w.statePth, st); err != nil {
			return
		}
	}
	w.state = st
	w.mark, w.haveMark = mark, true
	if len(batch) > 0 {
		w.publish(batch)
	}
}

// loadKeys reloads the session id → session key map from the index.
func (w *Watcher) loadKeys(ctx context.Context) {
	entries, _, err := w.st.Sessions(ctx)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.SessionID != "" {
			w.keys[e.SessionID] = e.SessionKey
		}
	}
}

// publish appends batch to the queue, drops the oldest beyond QueueLimit
// and wakes the waiters.
func (w *Watcher) publish(batch []Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = append(w.queue, batch...)
	if n := len(w.queue) - QueueLimit; n > 0 {
		w.queue = append([]Event(nil), w.queue[n:]...)
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// truncate returns the first n characters of s, as Python's s[:n].
func truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
