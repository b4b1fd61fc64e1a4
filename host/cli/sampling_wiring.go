package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/statedb"
)

// samplingHosts holds each run's sampling host (one per env: its rate
// windows, tool-round counts and metrics span the run's connections).
var samplingHosts sync.Map // *env → *sampling.Host

// samplingHost returns the run's sampling host. The model client is
// built at the first sampling request, from the model: block and the key
// it names.
func (e *env) samplingHost() *sampling.Host {
	if h, ok := samplingHosts.Load(e); ok {
		return h.(*sampling.Host)
	}
	h := sampling.New(sampling.Options{
		Home:   e.home,
		Logger: e.log,
		Model: func() (sampling.Chatter, error) {
			c, err := newModelClient(e)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
	actual, _ := samplingHosts.LoadOrStore(e, h)
	return actual.(*sampling.Host)
}

// forgetSampling drops the run's sampling host when the run ends, and
// closes its state.db connection.
func (e *env) forgetSampling() {
	if h, ok := samplingHosts.LoadAndDelete(e); ok {
		if err := h.(*sampling.Host).Close(); err != nil {
			e.log.Warn("closing the sampling counts", "error", err.Error())
		}
	}
}

// samplingUsage returns what the server with state key key used of p's
// limits (counted in state.db by every process) and the line that shows
// it.
func (e *env) samplingUsage(ctx context.Context, p sampling.Policy, key string) (statedb.SamplingUsage, string) {
	u, err := sampling.Usage(ctx, e.home, key, time.Now())
	if err != nil {
		return u, "sampling usage unreadable: " + oneLine(err.Error())
	}
	return u, fmt.Sprintf("%d/%d requests this minute (sampling.max_rpm), %d/%d today (sampling.max_per_day), %d/%d tokens today (sampling.max_tokens_per_day)",
		u.LastMinute, p.MaxRPM, u.LastDay, p.MaxPerDay, u.TokensDay, p.MaxTokensPerDay)
}

// withSampling adds each server's sampling handler (its sampling: policy)
// to what opts.Requests already gives; a server whose policy turns
// sampling off gets none, so the capability is not offered to it.
func (e *env) withSampling(opts registry.Options) registry.Options {
	prev := opts.Requests
	h := e.samplingHost()
	opts.Requests = func(srv *config.Server) registry.Requests {
		var r registry.Requests
		if prev != nil {
			r = prev(srv)
		}
		if r.Sampling == nil {
			if hd := h.Handler(srv); hd != nil {
				r.Sampling = hd
			}
		}
		return r
	}
	return opts
}

// withSamplingDeps sets srv's sampling handler in d, for a command that
// opens one session without the registry ('hermes mcp test').
func (e *env) withSamplingDeps(srv *config.Server, d session.Deps) session.Deps {
	if d.Sampling == nil {
		if hd := e.samplingHost().Handler(srv); hd != nil {
			d.Sampling = hd
		}
	}
	return d
}

// printSampling prints the Sampling: lines of 'hermes mcp test': srv's
// policy and the metrics saved for it.
func printSampling(e *env, srv *config.Server) {
	p, err := sampling.ParsePolicy(srv.Sampling)
	switch {
	case err != nil:
		e.p.Warn("Sampling: off, the sampling: block is wrong: %s", err)
		return
	case !p.Enabled:
		e.p.Line("Sampling: off (sampling.enabled is false)")
		return
	}
	modelName := p.Model
	if modelName == "" {
		modelName = "the server's hint, else model.default"
	}
	e.p.Line("Sampling: on (model: %s; max_tokens_cap %d, max_rpm %d, timeout %s, max_tool_rounds %d)",
		modelName, p.MaxTokensCap, p.MaxRPM, p.Timeout, p.MaxToolRounds)
	_, usage := e.samplingUsage(context.Background(), p, srv.StateKey())
	e.p.Line("Sampling limits: %s", usage)
	m := sampling.LoadMetrics(e.home)[srv.StateKey()]
	e.p.Line("Sampling requests: %d, errors: %d, tokens: %d, tool uses: %d", m.Requests, m.Errors, m.TokensUsed, m.ToolUseCount)
	if m.LastError != "" {
		e.p.Line("Last sampling error: %s", m.LastError)
	}
}
