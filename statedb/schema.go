package statedb

import (
	"context"
	"fmt"
)

// SchemaVersion is the version CreateSchema records in schema_version for
// a database it creates: the agent's schema of REFERENCE snapshot 21,
// whose tables and columns it creates.
const SchemaVersion = 21

// agentDDL creates the agent's tables and indexes in a new database, with
// the columns of the agent's schema version 21. It runs only when the
// sessions table does not exist: a table the agent made is its own to
// migrate. The agent's full-text tables (messages_fts) are not created;
// the agent adds them when it opens the database.
const agentDDL = `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
	id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT,
	session_key TEXT, chat_id TEXT, chat_type TEXT, thread_id TEXT, display_name TEXT, origin_json TEXT,
	expiry_finalized INTEGER DEFAULT 0, model TEXT, model_config TEXT, system_prompt TEXT,
	parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
	message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
	input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
	cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0,
	cwd TEXT, git_branch TEXT, git_repo_root TEXT,
	billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, estimated_cost_usd REAL, actual_cost_usd REAL,
	cost_status TEXT, cost_source TEXT, pricing_version TEXT, title TEXT, api_call_count INTEGER DEFAULT 0,
	handoff_state TEXT, handoff_platform TEXT, handoff_error TEXT,
	compression_failure_cooldown_until REAL, compression_failure_error TEXT,
	compression_fallback_streak INTEGER NOT NULL DEFAULT 0, rewind_count INTEGER NOT NULL DEFAULT 0,
	archived INTEGER NOT NULL DEFAULT 0,
	FOREIGN KEY (parent_session_id) REFERENCES sessions(id));
CREATE TABLE IF NOT EXISTS messages (
	id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
	role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
	effect_disposition TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT,
	reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT, codex_reasoning_items TEXT,
	codex_message_items TEXT, platform_message_id TEXT, observed INTEGER DEFAULT 0,
	active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_source_id ON sessions(source, id);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX IF NOT EXISTS idx_messages_session_active ON messages(session_id, active, timestamp);
CREATE INDEX IF NOT EXISTS idx_sessions_session_key ON sessions(session_key, started_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_gateway_peer ON sessions(source, user_id, chat_id, chat_type, thread_id, started_at DESC)`

// approvalsDDL creates the host's own tables: mcp_approvals (approvals
// asked for and their decisions; hermes mcp serve lists and decides them)
// and mcp_tool_grants (allow-always remembered per server and tool).
const approvalsDDL = `CREATE TABLE IF NOT EXISTS mcp_approvals (
	id TEXT PRIMARY KEY,
	kind TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	session_key TEXT NOT NULL DEFAULT '',
	created_at REAL NOT NULL,
	decision TEXT,
	decided_at REAL
);
CREATE INDEX IF NOT EXISTS idx_mcp_approvals_open ON mcp_approvals (decision, created_at);
CREATE TABLE IF NOT EXISTS mcp_tool_grants (
	server TEXT NOT NULL,
	tool TEXT NOT NULL,
	granted_at REAL NOT NULL,
	approval_id TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (server, tool)
)`

// CreateSchema makes db (writable) a state.db: the agent's tables and
// indexes when the database has no sessions table (a new database, with
// schema_version SchemaVersion), and the host's approval and sampling
// tables when they are missing. A database the agent made keeps its tables as they are.
// It runs in one transaction.
func CreateSchema(ctx context.Context, db interface {
	Execer
	Queryer
}) error {
	cols, err := Columns(ctx, db, "sessions")
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		if _, err := db.ExecContext(ctx, agentDDL); err != nil {
			return fmt.Errorf("create the tables of state.db: %w", err)
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_version").Scan(&n); err != nil {
			return fmt.Errorf("read schema_version: %w", err)
		}
		if n == 0 {
			if _, err := db.ExecContext(ctx, "INSERT INTO schema_version (version) VALUES (?)", SchemaVersion); err != nil {
				return fmt.Errorf("record schema_version: %w", err)
			}
		}
	}
	if err := EnsureApprovals(ctx, db); err != nil {
		return err
	}
	return EnsureSampling(ctx, db)
}
