package sampling

import (
	"context"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/statedb"
)

// budget counts a server's sampling requests against its limits: take
// grants one request (reserving tokens) or refuses it, settle records the
// tokens it used.
type budget interface {
	take(ctx context.Context, key string, now time.Time, lim statedb.SamplingLimits, reserve int64) (int64, error)
	settle(ctx context.Context, id, tokens int64)
}

// dbBudget counts in $HERMES_HOME/state.db, so that the limits hold for
// every process of the home. The database is opened (and created) at the
// first take.
type dbBudget struct {
	path string
	log  interface{ Warn(string, ...any) }

	mu sync.Mutex
	w  *statedb.Writer
}

func (b *dbBudget) writer(ctx context.Context) (*statedb.Writer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		w, err := statedb.OpenWriter(ctx, b.path)
		if err != nil {
			return nil, err
		}
		b.w = w
	}
	return b.w, nil
}

func (b *dbBudget) take(ctx context.Context, key string, now time.Time, lim statedb.SamplingLimits, reserve int64) (int64, error) {
	w, err := b.writer(ctx)
	if err != nil {
		return 0, err
	}
	id, _, err := statedb.TakeSampling(ctx, w.DB(), key, statedb.UnixSeconds(now), lim, reserve)
	return id, err
}

func (b *dbBudget) settle(ctx context.Context, id, tokens int64) {
	w, err := b.writer(ctx)
	if err == nil {
		err = statedb.SettleSampling(ctx, w.DB(), id, tokens)
	}
	if err != nil {
		b.log.Warn("cannot record the tokens of a sampling request", "error", err.Error())
	}
}

func (b *dbBudget) close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return nil
	}
	err := b.w.Close()
	b.w = nil
	return err
}

// memBudget counts in memory, for a Host without a home (tests, embedders
// that keep nothing on disk): the same windows, within one process.
type memBudget struct {
	mu     sync.Mutex
	nextID int64
	rows   map[string][]memRow
}

type memRow struct {
	id     int64
	at     time.Time
	tokens int64
}

func (b *memBudget) take(_ context.Context, key string, now time.Time, lim statedb.SamplingLimits, reserve int64) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rows == nil {
		b.rows = map[string][]memRow{}
	}
	var u statedb.SamplingUsage
	kept := b.rows[key][:0]
	for _, r := range b.rows[key] {
		if now.Sub(r.at) >= statedb.SamplingDay*time.Second {
			continue
		}
		kept = append(kept, r)
		u.LastDay++
		u.TokensDay += r.tokens
		if now.Sub(r.at) < statedb.SamplingMinute*time.Second {
			u.LastMinute++
		}
	}
	b.rows[key] = kept
	if limit := lim.Reached(u, reserve); limit != "" {
		return 0, &statedb.SamplingLimitError{Limit: limit, Usage: u, Reserve: reserve}
	}
	b.nextID++
	b.rows[key] = append(b.rows[key], memRow{id: b.nextID, at: now, tokens: reserve})
	return b.nextID, nil
}

func (b *memBudget) settle(_ context.Context, id, tokens int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, rows := range b.rows {
		for i := range rows {
			if rows[i].id == id {
				rows[i].tokens = tokens
				return
			}
		}
	}
}

// Usage returns what the server with state key key (config.Server.StateKey)
// used of its limits in the minute and the day up to now, as counted in
// home's state.db by every process; none when there is no state.db yet.
func Usage(ctx context.Context, home, key string, now time.Time) (statedb.SamplingUsage, error) {
	db, err := statedb.OpenRead(homedir.Dir(home).StateDB())
	if errors.Is(err, statedb.ErrNoDatabase) {
		return statedb.SamplingUsage{}, nil
	}
	if err != nil {
		return statedb.SamplingUsage{}, err
	}
	defer db.Close()
	u, err := statedb.SamplingUsageOf(ctx, db, key, statedb.UnixSeconds(now))
	if err != nil {
		return u, fmt.Errorf("%s: %w", homedir.Dir(home).StateDB(), err)
	}
	return u, nil
}

// limitError is the refusal of a request over one of p's limits: which
// limit, and the key that raises it.
func limitError(server string, p Policy, le *statedb.SamplingLimitError) error {
	switch le.Limit {
	case statedb.LimitPerMinute:
		return errorf("Sampling rate limit exceeded for server '%s' (%d requests/minute); raise sampling.max_rpm in the server's sampling: block", server, p.MaxRPM)
	case statedb.LimitPerDay:
		return errorf("Sampling daily limit exceeded for server '%s' (%d requests/day); raise sampling.max_per_day in the server's sampling: block", server, p.MaxPerDay)
	default:
		return errorf("Sampling token limit exceeded for server '%s' (%d of %d tokens/day used, this request may use %d); raise sampling.max_tokens_per_day in the server's sampling: block", server, le.Usage.TokensDay, p.MaxTokensPerDay, le.Reserve)
	}
}
