// Package store is the session store the bridge reads: state.db (the
// sessions and messages tables the agent writes, read-only), the
// sessions/sessions.json index the gateway writes, channel_directory.json,
// and the mcp_approvals table (read-write). Besides mcp_approvals it writes
// one thing: RecordSent adds a message the bridge delivered to its
// conversation, as the agent would (a messages row, the session's
// counters), and only into a conversation that exists.
//
// It reads what the original Python agent wrote as well as what Hermes
// writes: the current schema, the March 2026 schema (no session_key or
// origin_json columns, no active flag) and the minimal schema of the
// agent's tests, timestamps stored as float seconds, integers or ISO text,
// and message content stored as plain text or as a multipart JSON list.
// Columns are detected with PRAGMA table_info, so a column that is missing
// degrades a feature instead of failing a query.
//
// The store never creates state.db, reads it in WAL-safe read-only mode
// with a busy timeout, so the agent can keep writing while the bridge
// reads, and writes through a separate read-write connection in short
// BEGIN IMMEDIATE transactions that wait for the agent's (BusyTimeout). Every
// JSON file it parses is bounded (MaxIndexFileSize, MaxDirectoryFileSize)
// and malformed input yields an error or a skipped entry, never a panic.
//
// It does not shape tool results: truncation of content, limits, sorting
// for a tool and the JSON of the ten tools belong to the bridge's tool
// layer; turning changes into events belongs to its watcher, which uses
// Changes and MessagesAfter to notice new rows cheaply. Resolve serves the
// sender as its channel directory (a name to a chat id).
package store
