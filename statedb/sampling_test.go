package statedb

import (
	"errors"
	"sync"
	"testing"
)

func limitOf(err error) string {
	var le *SamplingLimitError
	if errors.As(err, &le) {
		return le.Limit
	}
	return ""
}

// TestSamplingWindows: each limit is counted in its window (a minute, a
// day) per server key, a reservation counts until it is settled, and
// what is older than the day leaves the table.
func TestSamplingWindows(t *testing.T) {
	w := newWriter(t)
	db := w.DB()
	lim := SamplingLimits{PerMinute: 2, PerDay: 3, TokensPerDay: 1000}
	const t0 = 1_800_000_000.0
	take := func(server string, now float64, reserve int64) (int64, error) {
		t.Helper()
		id, _, err := TakeSampling(ctx, db, server, now, lim, reserve)
		return id, err
	}
	for i := range 2 {
		if _, err := take("fs", t0+float64(i), 100); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := take("fs", t0+30, 100); limitOf(err) != LimitPerMinute {
		t.Fatalf("third in a minute: %v", err)
	}
	// Another key (a project's server of the same name) counts apart.
	if _, err := take("fs@0123456789ab", t0+30, 100); err != nil {
		t.Fatalf("another key: %v", err)
	}
	id, err := take("fs", t0+61, 100)
	if err != nil {
		t.Fatalf("a minute later: %v", err)
	}
	if _, err := take("fs", t0+200, 100); limitOf(err) != LimitPerDay {
		t.Fatalf("fourth in a day: %v", err)
	}
	u, err := SamplingUsageOf(ctx, db, "fs", t0+200)
	if err != nil || u != (SamplingUsage{LastMinute: 0, LastDay: 3, TokensDay: 300}) {
		t.Fatalf("usage %+v %v", u, err)
	}
	if err := SettleSampling(ctx, db, id, 7); err != nil {
		t.Fatal(err)
	}
	if u, _ := SamplingUsageOf(ctx, db, "fs", t0+200); u.TokensDay != 207 {
		t.Fatalf("settled usage %+v", u)
	}
	// Tokens: the reservation must fit in what is left of the day.
	if _, err := take("tokens", t0, 1001); limitOf(err) != LimitTokensPerDay {
		t.Fatalf("over the token budget: %v", err)
	}
	if _, err := take("tokens", t0, 1000); err != nil {
		t.Fatalf("the whole token budget: %v", err)
	}
	// A day later the old rows are gone and the server may sample again.
	if _, err := take("fs", t0+SamplingDay+100, 100); err != nil {
		t.Fatalf("a day later: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM mcp_sampling_usage WHERE at <= ?", t0+100).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows older than a day kept (%v)", n, err)
	}
}

// TestSamplingTakeRace: takers on connections of their own (as separate
// processes are) never grant more than the limit together.
func TestSamplingTakeRace(t *testing.T) {
	first := newWriter(t)
	const takers, limit = 8, 5
	lim := SamplingLimits{PerMinute: limit, PerDay: 100, TokensPerDay: 1 << 40}
	var wg sync.WaitGroup
	results := make(chan error, takers)
	for range takers {
		w, err := OpenWriter(ctx, first.Path())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := TakeSampling(ctx, w.DB(), "srv", 1_800_000_000, lim, 1)
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	granted := 0
	for err := range results {
		switch {
		case err == nil:
			granted++
		case limitOf(err) != LimitPerMinute:
			t.Fatalf("take: %v", err)
		}
	}
	if granted != limit {
		t.Fatalf("%d takes granted, want %d", granted, limit)
	}
}
