package sampling_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// clock is a settable clock for the limits' windows.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// hostAt returns a Host of home asking srv, on clock c: one per process
// of that home.
func hostAt(t *testing.T, srv *testmodel.Server, home string, c *clock) *sampling.Host {
	t.Helper()
	s, err := model.Parse(map[string]any{"base_url": srv.URL, "default": "default-model", "max_retries": 0})
	if err != nil {
		t.Fatal(err)
	}
	mc := modelClient(t, s)
	h := sampling.New(sampling.Options{Home: home, Now: c.now, Model: func() (sampling.Chatter, error) { return mc, nil }})
	t.Cleanup(func() { h.Close() })
	return h
}

// The server's hint chooses the model only when allowed_models lists it;
// otherwise the person's model.default is asked.
func TestSamplingHintOnlyFromAllowedModels(t *testing.T) {
	srv := testmodel.New(t)
	h, _ := newHost(t, srv)
	req := ask("hi", 5)
	req.ModelPreferences = mcpvalue.ModelPreferences{Hints: []string{"o1-pro-most-expensive", "cheap"}}
	for _, tc := range []struct {
		block map[string]any
		want  string
	}{
		{nil, "default-model"},
		{map[string]any{"allowed_models": []any{"small"}}, "default-model"},
		{map[string]any{"model": "chosen"}, "chosen"},
		{map[string]any{"allowed_models": []any{"cheap"}}, "cheap"},
		{map[string]any{"model": "chosen", "allowed_models": []any{"o1-pro-most-expensive"}}, "o1-pro-most-expensive"},
	} {
		if _, err := handler(t, h, "srv", tc.block).Sample(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if got := srv.Last(t).Model(); got != tc.want {
			t.Errorf("sampling: %v: the endpoint was asked for %q, want %q", tc.block, got, tc.want)
		}
	}
}

// The limits hold across processes of one home (two Hosts over one
// state.db), per server state key: a project's server of the same name
// counts apart; the minute's window moves with the clock.
func TestSamplingLimitsAcrossProcesses(t *testing.T) {
	srv := testmodel.New(t)
	home := t.TempDir()
	c := &clock{t: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)}
	first, second := hostAt(t, srv, home, c), hostAt(t, srv, home, c)
	ctx := context.Background()
	block := map[string]any{"max_rpm": 3}
	user := &config.Server{Name: "fs", Sampling: block}
	project := &config.Server{Name: "fs", Sampling: block, Origin: config.Origin{Project: "/some/project", File: "/some/project/.hermes/mcp.yaml"}}
	if user.StateKey() == project.StateKey() {
		t.Fatalf("the project's server has the user's state key %q", user.StateKey())
	}
	for i := range 2 {
		if _, err := first.Handler(user).Sample(ctx, ask("hi", 5)); err != nil {
			t.Fatalf("first process, request %d: %v", i, err)
		}
	}
	if _, err := second.Handler(user).Sample(ctx, ask("hi", 5)); err != nil {
		t.Fatalf("second process, third request: %v", err)
	}
	_, err := second.Handler(user).Sample(ctx, ask("hi", 5))
	wantErr(t, err, "Sampling rate limit exceeded for server 'fs' (3 requests/minute); raise sampling.max_rpm in the server's sampling: block")
	if _, err := first.Handler(project).Sample(ctx, ask("hi", 5)); err != nil {
		t.Fatalf("the project's server shares the user's budget: %v", err)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("the endpoint received %d requests, want 4", n)
	}
	u, err := sampling.Usage(ctx, home, user.StateKey(), c.now())
	if err != nil || u.LastMinute != 3 || u.LastDay != 3 {
		t.Errorf("usage of %s: %+v %v", user.StateKey(), u, err)
	}
	c.add(61 * time.Second)
	if _, err := second.Handler(user).Sample(ctx, ask("hi", 5)); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
}

// The day's limits: requests and tokens, each naming its key.
func TestSamplingDailyLimits(t *testing.T) {
	srv := testmodel.New(t)
	srv.SetDefault(testmodel.Reply{Text: "ok", PromptTokens: 30, CompletionTokens: 10})
	home := t.TempDir()
	c := &clock{t: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)}
	h := hostAt(t, srv, home, c)
	ctx := context.Background()
	day := &config.Server{Name: "day", Sampling: map[string]any{"max_per_day": 2}}
	for range 2 {
		if _, err := h.Handler(day).Sample(ctx, ask("hi", 5)); err != nil {
			t.Fatal(err)
		}
		c.add(2 * time.Minute)
	}
	_, err := hostAt(t, srv, home, c).Handler(day).Sample(ctx, ask("hi", 5))
	wantErr(t, err, "Sampling daily limit exceeded for server 'day' (2 requests/day); raise sampling.max_per_day in the server's sampling: block")

	// 100 tokens a day: a request of 40 used leaves 60; one that may use
	// 80 more is refused, one of 50 fits.
	tok := &config.Server{Name: "tok", Sampling: map[string]any{"max_tokens_per_day": 100}}
	if _, err := h.Handler(tok).Sample(ctx, ask("hi", 50)); err != nil {
		t.Fatal(err)
	}
	_, err = h.Handler(tok).Sample(ctx, ask("hi", 80))
	wantErr(t, err, "Sampling token limit exceeded for server 'tok' (40 of 100 tokens/day used, this request may use 80); raise sampling.max_tokens_per_day in the server's sampling: block")
	if _, err := h.Handler(tok).Sample(ctx, ask("hi", 50)); err != nil {
		t.Fatalf("a request that fits: %v", err)
	}
	c.add(24 * time.Hour)
	if _, err := h.Handler(day).Sample(ctx, ask("hi", 5)); err != nil {
		t.Fatalf("a day later: %v", err)
	}
}
