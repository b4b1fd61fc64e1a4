package toolview

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/internal/benchfloor"
	"github.com/mark3labs/mcp-go/mcp"
)

// manyTools is what ten servers of forty tools look like to the model.
func manyTools(servers, each int) []ToolDef {
	var out []ToolDef
	for s := 0; s < servers; s++ {
		server := fmt.Sprintf("srv%d", s)
		for i := 0; i < each; i++ {
			t := mcp.NewTool(fmt.Sprintf("tool_%d", i),
				mcp.WithDescription(fmt.Sprintf("Does thing number %d of %s with care.\nSecond line of detail.", i, server)),
				mcp.WithString("path", mcp.Required(), mcp.Description("the path to work on")),
				mcp.WithNumber("count", mcp.Description("how many times")))
			out = append(out, convertTool(server, t))
		}
	}
	out = append(out,
		convertTool("files", mcp.NewTool("readFile", mcp.WithDescription("Read a file from disk"))),
		convertTool("weather", mcp.NewTool("get_forecast", mcp.WithDescription("Weather forecast for a city"))))
	return out
}

func TestSearchOffersTwoToolsPastThreshold(t *testing.T) {
	all := manyTools(10, 40)
	s := NewSearch(50, 0)
	offered := s.Offer(all)
	if len(offered) != 2 || offered[0].Name != SearchToolsName || offered[1].Name != LoadToolsName {
		t.Fatalf("offered %d tools: %v", len(offered), offered)
	}
	// Under the threshold every definition goes out as before.
	if got := NewSearch(1000, 0).Offer(all); len(got) != len(all) {
		t.Fatalf("under the threshold: %d of %d", len(got), len(all))
	}
	if got := NewSearch(0, 0).Offer(all); len(got) != len(all) {
		t.Fatal("search_over unset must offer everything")
	}
	if !NewSearch(0, 1000).Active(all) || NewSearch(0, EstimateTokens(all)).Active(all) {
		t.Fatal("token bound")
	}

	out, err := s.Call(all, SearchToolsName, map[string]any{"query": "weather forecast"})
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Matches []Match }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err, out)
	}
	if len(res.Matches) == 0 || res.Matches[0].Name != "mcp_weather_get_forecast" {
		t.Fatalf("best match: %s", out)
	}
	out, _ = s.Call(all, SearchToolsName, map[string]any{"query": "file", "limit": float64(3)})
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Matches[0].Name != "mcp_files_readFile" {
		t.Fatalf("camelCase name: %s", out)
	}
	out, _ = s.Call(all, SearchToolsName, map[string]any{"query": "srv3 tool_7"})
	_ = json.Unmarshal([]byte(out), &res)
	if res.Matches[0].Name != "mcp_srv3_tool_7" || strings.Contains(res.Matches[0].Description, "Second line") {
		t.Fatalf("server and name: %s", out)
	}

	out, err = s.Call(all, LoadToolsName, map[string]any{"names": []any{"mcp_weather_get_forecast", "mcp_nope_x"}})
	if err != nil || !strings.Contains(out, `"unknown":["mcp_nope_x"]`) {
		t.Fatalf("load: %s %v", out, err)
	}
	offered = s.Offer(all)
	if len(offered) != 3 || offered[2].Name != "mcp_weather_get_forecast" || offered[2].Parameters == nil {
		t.Fatalf("after load: %v", offered)
	}
	// A loaded tool whose server went away is no longer offered.
	if got := s.Offer(all[:len(all)-1]); len(got) != 2 {
		t.Fatalf("withdrawn tool still offered: %v", got)
	}
}

func TestSearchBadArguments(t *testing.T) {
	s := NewSearch(1, 0)
	all := manyTools(1, 3)
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{SearchToolsName, nil},
		{SearchToolsName, map[string]any{"query": "  "}},
		{LoadToolsName, map[string]any{}},
		{LoadToolsName, map[string]any{"names": make([]any, MaxLoadPerCall+1)}},
		{"other", nil},
	} {
		out, err := s.Call(all, c.name, c.args)
		if err == nil || !strings.Contains(out, `"error"`) {
			t.Errorf("%s %v: %s %v", c.name, c.args, out, err)
		}
	}
}

// BenchmarkToolSearchTokens reports the estimated tokens of tool
// definitions sent per turn for ten servers of forty tools, with every
// definition and with tool search (two tools plus three loaded).
func BenchmarkToolSearchTokens(b *testing.B) {
	all := manyTools(10, 40)
	s := NewSearch(50, 0)
	_, _ = s.Call(all, LoadToolsName, map[string]any{"names": []any{"mcp_srv1_tool_1", "mcp_srv2_tool_2", "mcp_weather_get_forecast"}})
	var without, with int
	for i := 0; i < b.N; i++ {
		without = EstimateTokens(all)
		with = EstimateTokens(s.Offer(all))
	}
	b.ReportMetric(float64(without), "tokens/turn-all")
	b.ReportMetric(float64(with), "tokens/turn-search")
	benchfloor.Check(b, "tool search: tokens per turn / every definition", "search/all", float64(with)/float64(without), benchfloor.None)
}

// Offers is exactly what Offer offers: past the threshold only the search
// tools and the loaded ones; under it every registered tool.
func TestSearchOffersOnlyWhatItOffered(t *testing.T) {
	all := manyTools(2, 40)
	s := NewSearch(10, 0)
	name := all[5].Name
	if s.Offers(all, name) || !s.Offers(all, LoadToolsName) || !s.Offers(all, SearchToolsName) || s.Offers(all, "mcp_nope_x") {
		t.Fatal("before loading")
	}
	if _, err := s.Call(all, LoadToolsName, map[string]any{"names": []any{name}}); err != nil {
		t.Fatal(err)
	}
	if !s.Offers(all, name) || s.Offers(all, all[6].Name) {
		t.Fatal("after loading")
	}
	for _, d := range s.Offer(all) {
		if !s.Offers(all, d.Name) {
			t.Fatalf("%s is offered but Offers says no", d.Name)
		}
	}
	off := NewSearch(1000, 0)
	if !off.Offers(all, all[6].Name) || off.Offers(all, LoadToolsName) {
		t.Fatal("under the threshold")
	}
	if got := NotLoaded(name); !strings.Contains(got, "tool "+name+" is not loaded: call load_tools with its name first") {
		t.Fatalf("NotLoaded: %q", got)
	}
}

// The system message and the servers' instructions cost tokens on every
// request too: they count toward the token threshold.
func TestSearchCountsFixedTokens(t *testing.T) {
	all := manyTools(1, 3)
	s := NewSearch(0, EstimateTokens(all)+10)
	if s.Active(all) {
		t.Fatal("active under the threshold")
	}
	s.SetFixedTokens(EstimateTextTokens(strings.Repeat("x", 44)))
	if !s.Active(all) {
		t.Fatal("the instructions' tokens do not count toward search_over")
	}
	if got := len(s.Offer(all)); got != 2 {
		t.Fatalf("offered %d, want the two search tools", got)
	}
}
