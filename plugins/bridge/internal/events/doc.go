// Package events is the bridge's event feed: new messages and approval
// changes of the session store, as cursor-numbered events for events_poll
// and events_wait.
//
// A Watcher starts from the moment it starts, not from the whole history:
// its baseline is the store's largest message id and the approvals present
// at start. It wakes on file change notifications (fsnotify on the folder
// of state.db, for the database, its -wal and its -journal file, so a
// database created or replaced later is seen) and re-checks shortly after
// a notification, because a WAL commit becomes visible to readers only
// after its last write; a poll every PollInterval is the fallback when
// notifications are unavailable or missed. A check costs one
// store.Changes; only when the mark moved does it read MessagesAfter in
// batches (user and assistant messages with text, of sessions in the
// session index) and the approvals changed since the last check.
//
// The queue holds the newest QueueLimit events; the oldest are dropped
// first.
//
// Cursors survive a restart of the plugin. The watcher keeps a small state
// file (StateFile in HERMES_HOME, written atomically: temp file, fsync,
// rename) with the next cursor, the last message id it turned into events
// and the approvals it has reported. The state is saved before a batch of
// events becomes visible, so a cursor is never handed out twice. A watcher
// started with a state file continues from it: cursors go on increasing
// (an after_cursor from before the restart stays meaningful: nothing it
// has seen is replayed) and the messages and approval changes committed
// while the plugin was down become events (nothing new is skipped, up to
// QueueLimit). The events themselves are not persisted: events emitted
// before the restart and not yet read are gone. A database whose largest
// message id fell below the saved one was replaced; the watcher then
// starts from its current state.
//
// The package does not shape tool results (limits, clamps, JSON of the
// tools) and never writes to state.db.
package events
