#!/usr/bin/env python3
"""Writes the state.db fixtures of the store's tests with Python's sqlite3,
the way the agent writes them.

    make_state_db.py current PATH   the current schema, WAL mode
    make_state_db.py march PATH     the March 2026 schema (no session_key, no active)
    make_state_db.py minimal PATH   the agent's minimal test database (ISO TEXT timestamps)
    make_state_db.py append PATH SESSION_ID N
                                    appends N user messages, one commit each, in WAL mode
    make_state_db.py huge PATH SESSION_ID BYTES
                                    appends one user message of BYTES characters
"""

import json
import sqlite3
import sys

JSON_PREFIX = "\x00json:"  # the agent's marker of structured content

CURRENT = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
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
CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
  effect_disposition TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT,
  reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT, codex_reasoning_items TEXT,
  codex_message_items TEXT, platform_message_id TEXT, observed INTEGER DEFAULT 0,
  active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0);
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE INDEX idx_sessions_source ON sessions(source);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX idx_messages_session_active ON messages(session_id, active, timestamp);
CREATE INDEX idx_sessions_session_key ON sessions(session_key, started_at DESC);
CREATE VIRTUAL TABLE messages_fts USING fts5(content);
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content)
  VALUES (new.id, COALESCE(new.content,'') || ' ' || COALESCE(new.tool_name,'') || ' ' || COALESCE(new.tool_calls,''));
  INSERT INTO messages_fts_trigram(rowid, content)
  VALUES (new.id, COALESCE(new.content,'') || ' ' || COALESCE(new.tool_name,'') || ' ' || COALESCE(new.tool_calls,''));
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  DELETE FROM messages_fts WHERE rowid = old.id;
  DELETE FROM messages_fts_trigram WHERE rowid = old.id;
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages BEGIN
  DELETE FROM messages_fts WHERE rowid = old.id;
  DELETE FROM messages_fts_trigram WHERE rowid = old.id;
  INSERT INTO messages_fts(rowid, content)
  VALUES (new.id, COALESCE(new.content,'') || ' ' || COALESCE(new.tool_name,'') || ' ' || COALESCE(new.tool_calls,''));
  INSERT INTO messages_fts_trigram(rowid, content)
  VALUES (new.id, COALESCE(new.content,'') || ' ' || COALESCE(new.tool_name,'') || ' ' || COALESCE(new.tool_calls,''));
END;
"""

MARCH = """
CREATE TABLE sessions (
  id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT, system_prompt TEXT,
  parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
  message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
  input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
  cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0,
  billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, estimated_cost_usd REAL, actual_cost_usd REAL,
  cost_status TEXT, cost_source TEXT, pricing_version TEXT, title TEXT);
CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
  timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT,
  reasoning TEXT, reasoning_details TEXT, codex_reasoning_items TEXT);
CREATE INDEX idx_sessions_source ON sessions(source);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
"""

MINIMAL = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL, message_count INTEGER);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT, content TEXT, timestamp TEXT);
"""

# Times of the fixtures, float seconds since the epoch (2026-03-29).
T0 = 1774785600.0


def multipart(parts):
    return JSON_PREFIX + json.dumps(parts)


def current(path):
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(CURRENT)
    db.execute("INSERT INTO schema_version VALUES (21)")
    s = """INSERT INTO sessions (id, source, user_id, session_key, chat_id, chat_type, thread_id, display_name,
           origin_json, started_at, ended_at, input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"""
    origin = {"platform": "telegram", "chat_id": "123456", "chat_name": "Alice", "chat_type": "dm",
              "user_id": "123456", "user_name": "Alice", "thread_id": None, "chat_topic": None}
    db.execute(s, ("tg1", "telegram", "123456", "agent:main:telegram:dm:123456", "123456", "dm", None, None,
                   json.dumps(origin), T0, None, 50000, 2000))
    # Two rows of one discord key: the older is superseded by the newer one,
    # which has no origin_json (the origin is synthesised from its columns).
    db.execute(s, ("dc-old", "discord", "456", "agent:main:discord:group:789:456", "789", "group", None, "old",
                   None, T0 - 86400, None, 1, 1))
    db.execute(s, ("dc1", "discord", "456", "agent:main:discord:group:789:456", "789", "group", "t9", "#general",
                   None, T0 + 60, None, 10, 5))
    # An ended slack session and an ended terminal session (cli, no key): not
    # listed. (A terminal session that has not ended is listed under
    # agent:main:cli:dm:<id>; the store's tests add one.)
    db.execute(s, ("sl1", "slack", "U5678", "agent:main:slack:group:C1234:U5678", "C1234", "group", None, "eng",
                   None, T0, T0 + 10, 0, 0))
    db.execute(s, ("cli1", "cli", None, None, None, None, None, None, None, T0 + 500, T0 + 600, 0, 0))
    m = "INSERT INTO messages (session_id, role, content, timestamp, active) VALUES (?,?,?,?,?)"
    rows = [
        ("tg1", "system", "You are Hermes.", T0 + 1, 1),
        ("tg1", "user", "hello", T0 + 2, 1),
        ("tg1", "assistant", multipart([
            {"type": "text", "text": "here is the chart"},
            {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}},
            {"type": "text", "text": "MEDIA: files/report.pdf"},
            {"type": "file", "file": {"name": "a.csv"}},
        ]), T0 + 3, 1),
        ("tg1", "tool", "tool output", T0 + 4, 1),
        ("tg1", "user", "this was rewound", T0 + 5, 0),
        ("tg1", "assistant", "", T0 + 6, 1),
        ("tg1", "user", "thanks", T0 + 7.25, 1),
        ("dc1", "user", "hi discord", T0 + 100, 1),
        ("sl1", "user", "bye", T0 + 5, 1),
    ]
    db.executemany(m, rows)
    # A message stored with an ISO text timestamp, as older writers did.
    db.execute(m, ("dc1", "assistant", "iso reply", "2026-03-29T12:30:00", 1))
    db.commit()
    db.close()


def march(path):
    db = sqlite3.connect(path)
    db.executescript(MARCH)
    s = "INSERT INTO sessions (id, source, user_id, started_at, ended_at, input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?)"
    db.execute(s, ("20260329_120000_abc123", "telegram", "123456", T0, None, 50000, 2000))
    m = "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)"
    db.executemany(m, [
        ("20260329_120000_abc123", "user", "march hello", T0 + 1),
        ("20260329_120000_abc123", "assistant", multipart([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]), T0 + 2),
        ("20260329_120000_abc123", "tool", "{}", T0 + 3),
    ])
    db.commit()
    db.close()


def minimal(path):
    db = sqlite3.connect(path)
    db.executescript(MINIMAL)
    db.execute("INSERT INTO sessions VALUES (?,?,?,?)", ("20260329_120000_abc123", "telegram", T0, 3))
    m = "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)"
    db.executemany(m, [
        ("20260329_120000_abc123", "user", "Hello from Alice", "2026-03-29T12:00:00"),
        ("20260329_120000_abc123", "assistant", json.dumps([{"type": "text", "text": "Hi Alice"},
                                                            {"type": "image", "source": {"url": "https://example.com/a.png"}}]),
         "2026-03-29T12:00:05.500000"),
        ("20260329_120000_abc123", "system", "sys", "2026-03-29T12:00:06"),
    ])
    db.commit()
    db.close()


def append(path, session_id, n):
    db = sqlite3.connect(path, timeout=10)
    db.execute("PRAGMA journal_mode=WAL")
    for i in range(n):
        db.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
                   (session_id, "user", "append %d" % i, T0 + 1000 + i))
        db.commit()
    db.close()


def huge(path, session_id, size):
    db = sqlite3.connect(path, timeout=10)
    db.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
               (session_id, "user", "x" * size, T0 + 5000))
    db.commit()
    db.close()


def main(argv):
    if len(argv) >= 3 and argv[1] in ("current", "march", "minimal"):
        {"current": current, "march": march, "minimal": minimal}[argv[1]](argv[2])
    elif len(argv) == 5 and argv[1] == "append":
        append(argv[2], argv[3], int(argv[4]))
    elif len(argv) == 5 and argv[1] == "huge":
        huge(argv[2], argv[3], int(argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
