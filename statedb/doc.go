// Package statedb is the one owner of the schema of $HERMES_HOME/state.db,
// the SQLite database the agent writes its conversations to and the
// messaging bridge of `hermes mcp serve` reads: the tables, columns and
// indexes (the sessions, messages and schema_version tables of the agent,
// the mcp_approvals and mcp_tool_grants tables of approvals, and the
// mcp_sampling_usage table that counts each server's sampling requests
// and tokens across processes), the
// encoding of message content (plain text, or the "\x00json:" prefix and a
// JSON list of typed parts), the timestamps as stored (float seconds,
// integers or ISO text), how a connection is opened (WAL, busy timeout,
// BEGIN IMMEDIATE writes) and the readers and decoders of what is stored.
//
// Both sides import it: the host (a Writer: sessions, messages, counts,
// approvals) and the bridge plugin (the readers: Messages, MessagesAfter,
// IndexSessions, the approvals, Respond). Nothing else belongs here: it
// does not shape tool results, talk to a terminal, read config.yaml or
// decide what a tool call may do.
//
// A database the original Python agent wrote stays readable and writable:
// CreateSchema creates the agent's tables only where they are missing (it
// never alters or indexes a table the agent made), and the readers and
// the Writer detect columns with PRAGMA table_info, so a column that is
// missing (the March 2026 schema, the minimal schema of the agent's tests)
// degrades a feature instead of failing a query.
//
// Writes are short BEGIN IMMEDIATE transactions on one connection that wait
// BusyTimeout for another process's lock; the database is in WAL mode, so
// a reader (the bridge) never blocks the writer and never sees half a
// transaction.
package statedb
