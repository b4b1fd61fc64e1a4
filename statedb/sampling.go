package statedb

import (
	"context"
	"database/sql"
	"fmt"
)

// samplingDDL creates the host's mcp_sampling_usage table: one row per
// sampling request a server was granted, with when and how many tokens it
// used (its reservation while the call runs), so that the limits hold
// across every hermes process of a $HERMES_HOME. Rows older than a day
// are deleted by the next take.
const samplingDDL = `CREATE TABLE IF NOT EXISTS mcp_sampling_usage (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	server TEXT NOT NULL,
	at REAL NOT NULL,
	tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS idx_mcp_sampling_usage ON mcp_sampling_usage (server, at)`

// The windows of the sampling limits, in seconds.
const (
	SamplingMinute = 60
	SamplingDay    = 86400
)

// EnsureSampling creates the mcp_sampling_usage table when it is missing
// (db must be writable).
func EnsureSampling(ctx context.Context, db Execer) error {
	if _, err := db.ExecContext(ctx, samplingDDL); err != nil {
		return fmt.Errorf("create mcp_sampling_usage: %w", err)
	}
	return nil
}

// SamplingLimits bound one server's sampling requests; each is at least 1.
type SamplingLimits struct {
	// PerMinute and PerDay bound the requests in the last 60 s and the
	// last 24 h.
	PerMinute, PerDay int
	// TokensPerDay bounds the tokens of the last 24 h, the requests still
	// running counted at what they reserved.
	TokensPerDay int64
}

// Reached names the limit of lim that one more request reserving reserve
// tokens would pass after u (LimitPerMinute, LimitPerDay or
// LimitTokensPerDay), "" when none: the one rule of every counter.
func (lim SamplingLimits) Reached(u SamplingUsage, reserve int64) string {
	switch {
	case u.LastMinute >= lim.PerMinute:
		return LimitPerMinute
	case u.LastDay >= lim.PerDay:
		return LimitPerDay
	case u.TokensDay+reserve > lim.TokensPerDay:
		return LimitTokensPerDay
	}
	return ""
}

// SamplingUsage is what a server used in the windows ending at a moment.
type SamplingUsage struct {
	LastMinute int   `json:"requests_last_minute"`
	LastDay    int   `json:"requests_last_day"`
	TokensDay  int64 `json:"tokens_last_day"`
}

// The limits a take can hit, as SamplingLimitError.Limit names them.
const (
	LimitPerMinute    = "per_minute"
	LimitPerDay       = "per_day"
	LimitTokensPerDay = "tokens_per_day"
)

// SamplingLimitError is a take refused because a limit is reached.
type SamplingLimitError struct {
	// Limit is LimitPerMinute, LimitPerDay or LimitTokensPerDay.
	Limit string
	// Usage is what the server had used; Reserve what the request asked.
	Usage   SamplingUsage
	Reserve int64
}

func (e *SamplingLimitError) Error() string {
	return fmt.Sprintf("sampling limit %s reached (%d requests in the last minute, %d in the last day, %d tokens in the last day, %d more asked)",
		e.Limit, e.Usage.LastMinute, e.Usage.LastDay, e.Usage.TokensDay, e.Reserve)
}

// TakeSampling grants server (its state key) one sampling request at now
// (float seconds since the epoch) within lim, reserving reserve tokens,
// and returns the new row's id (for SettleSampling) and the usage before
// it. Counting and inserting are one transaction on db, a writable
// connection whose transactions begin IMMEDIATE (a Writer's DB): of the
// processes taking at once, each sees the others' rows, so together they
// never pass a limit. A limit reached is a *SamplingLimitError.
func TakeSampling(ctx context.Context, db *sql.DB, server string, now float64, lim SamplingLimits, reserve int64) (int64, SamplingUsage, error) {
	if err := EnsureSampling(ctx, db); err != nil {
		return 0, SamplingUsage{}, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, SamplingUsage{}, fmt.Errorf("count the sampling of %s: %w", server, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "DELETE FROM mcp_sampling_usage WHERE at <= ?", now-SamplingDay); err != nil {
		return 0, SamplingUsage{}, fmt.Errorf("count the sampling of %s: %w", server, err)
	}
	u, err := SamplingUsageOf(ctx, tx, server, now)
	if err != nil {
		return 0, u, err
	}
	if limit := lim.Reached(u, reserve); limit != "" {
		// The pruning is kept: it is right whatever the answer.
		if err := tx.Commit(); err != nil {
			return 0, u, fmt.Errorf("count the sampling of %s: %w", server, err)
		}
		return 0, u, &SamplingLimitError{Limit: limit, Usage: u, Reserve: reserve}
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO mcp_sampling_usage (server, at, tokens) VALUES (?, ?, ?)", server, now, reserve)
	if err != nil {
		return 0, u, fmt.Errorf("count the sampling of %s: %w", server, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, u, fmt.Errorf("count the sampling of %s: %w", server, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, u, fmt.Errorf("count the sampling of %s: %w", server, err)
	}
	return id, u, nil
}

// SettleSampling replaces the reservation of the request id (of
// TakeSampling) with the tokens it used.
func SettleSampling(ctx context.Context, db *sql.DB, id, tokens int64) error {
	if _, err := db.ExecContext(ctx, "UPDATE mcp_sampling_usage SET tokens = ? WHERE id = ?", tokens, id); err != nil {
		return fmt.Errorf("record the tokens of sampling request %d: %w", id, err)
	}
	return nil
}

// SamplingUsageOf returns what server (its state key) used in the minute
// and the day up to now. A database without the table has no usage.
func SamplingUsageOf(ctx context.Context, q Queryer, server string, now float64) (SamplingUsage, error) {
	var u SamplingUsage
	cols, err := Columns(ctx, q, "mcp_sampling_usage")
	if err != nil || len(cols) == 0 {
		return u, err
	}
	err = q.QueryRowContext(ctx,
		`SELECT COALESCE(SUM(at > ?), 0), COUNT(*), COALESCE(SUM(tokens), 0)
		 FROM mcp_sampling_usage WHERE server = ? AND at > ?`,
		now-SamplingMinute, server, now-SamplingDay).Scan(&u.LastMinute, &u.LastDay, &u.TokensDay)
	if err != nil {
		return u, fmt.Errorf("read the sampling of %s: %w", server, err)
	}
	return u, nil
}
