package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/testmodel"
)

// Sampling spends what the person chose: a server's hint not in
// allowed_models is answered by model.default; the limit holds across
// separate runs of hermes (state.db), and 'hermes mcp get' shows what was
// used of it.
func TestSamplingLimitAcrossRuns(t *testing.T) {
	t.Parallel()
	srv := testmodel.New(t)
	srv.Key = "sk-key"
	home := modelHome(t, srv.URL, "sk-key", "mcp_servers:\n"+tsEntry(t, "ts", "    sampling:\n      max_rpm: 2\n      allowed_models: [cheap-model]\n"))

	runHermes(t, home, "mcp", "call", "ts", "sample", "--arg", "prompt=hi", "--arg", "model=o1-pro-most-expensive").must(t, 0)
	if m := srv.Last(t).Model(); m != "test-model" {
		t.Errorf("a hint not in allowed_models reached the endpoint as %q, want model.default test-model", m)
	}
	runHermes(t, home, "mcp", "call", "ts", "sample", "--arg", "prompt=hi", "--arg", "model=cheap-model").must(t, 0)
	if m := srv.Last(t).Model(); m != "cheap-model" {
		t.Errorf("an allowed hint reached the endpoint as %q, want cheap-model", m)
	}
	r := runHermes(t, home, "mcp", "call", "ts", "sample", "--arg", "prompt=hi")
	if !strings.Contains(r.stdout+r.stderr, "Sampling rate limit exceeded for server 'ts' (2 requests/minute); raise sampling.max_rpm") {
		t.Errorf("third run within the minute:\n%s%s", r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("the endpoint received %d requests, want 2", n)
	}

	r = runHermes(t, home, "mcp", "get", "ts").must(t, 0)
	if !strings.Contains(r.stdout, "Sampling:  2/2 requests this minute (sampling.max_rpm), 2/200 today (sampling.max_per_day)") {
		t.Errorf("mcp get:\n%s", r.stdout)
	}
	r = runHermes(t, home, "mcp", "get", "ts", "--json").must(t, 0)
	var rep struct {
		Sampling struct {
			Enabled    bool  `json:"enabled"`
			MaxRPM     int   `json:"max_rpm"`
			LastMinute int   `json:"requests_last_minute"`
			LastDay    int   `json:"requests_last_day"`
			MaxPerDay  int   `json:"max_per_day"`
			Tokens     int64 `json:"max_tokens_per_day"`
		} `json:"sampling"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if s := rep.Sampling; !s.Enabled || s.MaxRPM != 2 || s.LastMinute != 2 || s.LastDay != 2 || s.MaxPerDay != 200 || s.Tokens != 200000 {
		t.Errorf("mcp get --json sampling: %+v", s)
	}
}
