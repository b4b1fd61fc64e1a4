package cmdkit

import (
	"context"
	"fmt"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/statedb"
)

// SamplingUsage returns what the server with state key key used of p's
// limits (counted in state.db by every process) and the line that shows
// it.
func SamplingUsage(e *Env, ctx context.Context, p sampling.Policy, key string) (statedb.SamplingUsage, string) {
	u, err := sampling.Usage(ctx, e.Home, key, time.Now())
	if err != nil {
		return u, "sampling usage unreadable: " + OneLine(err.Error())
	}
	return u, fmt.Sprintf("%d/%d requests this minute (sampling.max_rpm), %d/%d today (sampling.max_per_day), %d/%d tokens today (sampling.max_tokens_per_day)",
		u.LastMinute, p.MaxRPM, u.LastDay, p.MaxPerDay, u.TokensDay, p.MaxTokensPerDay)
}

// PrintSampling prints the Sampling: lines of 'hermes mcp test': srv's
// policy and the metrics saved for it.
func PrintSampling(e *Env, srv *config.Server) {
	p, err := sampling.ParsePolicy(srv.Sampling)
	switch {
	case err != nil:
		e.P.Warn("Sampling: off, the sampling: block is wrong: %s", err)
		return
	case !p.Enabled:
		e.P.Line("Sampling: off (sampling.enabled is false)")
		return
	}
	modelName := p.Model
	if modelName == "" {
		modelName = "the server's hint, else model.default"
	}
	e.P.Line("Sampling: on (model: %s; max_tokens_cap %d, max_rpm %d, timeout %s, max_tool_rounds %d)",
		modelName, p.MaxTokensCap, p.MaxRPM, p.Timeout, p.MaxToolRounds)
	_, usage := SamplingUsage(e, context.Background(), p, srv.StateKey())
	e.P.Line("Sampling limits: %s", usage)
	m := sampling.LoadMetrics(e.Home)[srv.StateKey()]
	e.P.Line("Sampling requests: %d, errors: %d, tokens: %d, tool uses: %d", m.Requests, m.Errors, m.TokensUsed, m.ToolUseCount)
	if m.LastError != "" {
		e.P.Line("Last sampling error: %s", m.LastError)
	}
}
