package toolview

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// Tool search (tools.search_over): when the registered tools are more than
// a person's threshold (a count, or an estimate of the tokens of their
// definitions), the model is not sent every definition on every turn.
// It gets two small tools instead: search_tools (a query → matching tool
// names and one-line descriptions, from the registered tools, which for a
// lazy server come from its record without starting it) and load_tools
// (names → their definitions are sent from the next turn on). A Search
// holds what one conversation loaded; the agent loop asks it, each turn,
// what to offer (Offer) and hands it the calls of its two tools (Call).

// Names of the two tools of tool search. They are host tools: no MCP
// tool can take them (mcp_ prefix).
const (
	SearchToolsName = "search_tools"
	LoadToolsName   = "load_tools"
)

// Bounds of tool search.
const (
	// DefaultSearchResults is how many matches search_tools returns when
	// the model does not say; MaxSearchResults is the most it returns.
	DefaultSearchResults = 10
	MaxSearchResults     = 50
	// MaxLoadPerCall bounds the names of one load_tools call.
	MaxLoadPerCall = 32
	// maxQueryLen bounds a query (runes); longer is cut.
	maxQueryLen = 500
	// summaryLen bounds a description in search results (runes).
	summaryLen = 160
)

// EstimateTokens is a rough count of the tokens defs cost a model as
// function definitions: the bytes of their JSON (name, description,
// parameters) over four, the usual size of a token of English and JSON.
func EstimateTokens(defs []ToolDef) int {
	n := 0
	for _, d := range defs {
		b, _ := json.Marshal(struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		}{d.Name, d.Description, d.Parameters})
		n += len(b)
	}
	return (n + 3) / 4
}

// Search is tool search for one conversation. Its zero value is off; it
// is safe for concurrent use.
type Search struct {
	overTools, overTokens int

	mu     sync.Mutex
	loaded map[string]bool
	// fixed are the estimated tokens of what every request carries
	// besides the definitions (SetFixedTokens).
	fixed int
}

// EstimateTextTokens is EstimateTokens for text sent with every request
// (a system message, the servers' instructions): its bytes over four.
func EstimateTextTokens(s string) int { return (len(s) + 3) / 4 }

// SetFixedTokens sets the estimated tokens of what every request carries
// besides the tool definitions (the system message with the servers'
// instructions, EstimateTextTokens): they count toward the token
// threshold, since they cost the model on every turn too.
func (s *Search) SetFixedTokens(n int) {
	s.mu.Lock()
	s.fixed = max(n, 0)
	s.mu.Unlock()
}

// Over returns the thresholds: a count of tools and a count of tokens (0:
// not used).
func (s *Search) Over() (tools, tokens int) {
	if s == nil {
		return 0, 0
	}
	return s.overTools, s.overTokens
}

// NewSearch returns tool search past overTools tools or overTokens
// estimated tokens of definitions (0: that bound is not used; both 0:
// off, every definition is offered).
func NewSearch(overTools, overTokens int) *Search {
	return &Search{overTools: overTools, overTokens: overTokens, loaded: map[string]bool{}}
}

// Active reports whether all is past the threshold: the model gets the
// two search tools and what it loaded instead of all.
func (s *Search) Active(all []ToolDef) bool {
	if s == nil {
		return false
	}
	switch {
	case s.overTools > 0 && len(all) > s.overTools:
		return true
	case s.overTokens > 0 && EstimateTokens(all)+s.fixedTokens() > s.overTokens:
		return true
	}
	return false
}

func (s *Search) fixedTokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fixed
}

// Offer returns the definitions to send the model this turn: all when
// search is not active; otherwise search_tools, load_tools and the tools
// loaded so far that are still registered, in all's order.
func (s *Search) Offer(all []ToolDef) []ToolDef {
	if !s.Active(all) {
		return all
	}
	out := SearchToolDefs()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range all {
		if s.loaded[d.Name] {
			out = append(out, d)
		}
	}
	return out
}

// Offers reports whether name is among the definitions Offer returns for
// all: a registered tool when search is not active, else one of the two
// search tools or a tool loaded so far. A call of any other name must not
// reach a server.
func (s *Search) Offers(all []ToolDef, name string) bool {
	if s.Handles(name) {
		return s.Active(all)
	}
	if !slices.ContainsFunc(all, func(d ToolDef) bool { return d.Name == name }) {
		return false
	}
	if !s.Active(all) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loaded[name]
}

// NotLoaded is what the model is told of a call of a tool it did not
// load.
func NotLoaded(name string) string {
	return fmt.Sprintf("tool %s is not loaded: call load_tools with its name first (search_tools finds names)", cut(name, 100))
}

// Handles reports whether name is one of tool search's own tools.
func (s *Search) Handles(name string) bool {
	return name == SearchToolsName || name == LoadToolsName
}

// Call runs search_tools or load_tools with the model's arguments over the
// registered tools all and returns the JSON text handed back to the model;
// err is set (and the text is an {"error": ...}) for bad arguments.
func (s *Search) Call(all []ToolDef, name string, args map[string]any) (string, error) {
	r, err := s.reply(all, name, args)
	return r.Text, err
}

// Reply is Call with the model's arguments as it wrote them (decoded here,
// once) and the answer as a Reply.
func (s *Search) Reply(all []ToolDef, name string, raw json.RawMessage) (Reply, error) {
	var args map[string]any
	_ = json.Unmarshal(raw, &args)
	return s.reply(all, name, args)
}

func (s *Search) reply(all []ToolDef, name string, args map[string]any) (Reply, error) {
	switch name {
	case SearchToolsName:
		q, _ := args["query"].(string)
		if strings.TrimSpace(q) == "" {
			return Failure(missingParam("query")), fmt.Errorf("search_tools: missing query")
		}
		limit := DefaultSearchResults
		if f, ok := args["limit"].(float64); ok && f >= 1 {
			limit = min(int(f), MaxSearchResults)
		}
		matches := Find(all, q, limit)
		b, _ := json.Marshal(map[string]any{"matches": matches, "hint": "call load_tools with the names you need; their definitions come with the next turn"})
		return Reply{Text: string(b)}, nil
	case LoadToolsName:
		raw, _ := args["names"].([]any)
		if len(raw) == 0 {
			return Failure(missingParam("names")), fmt.Errorf("load_tools: missing names")
		}
		if len(raw) > MaxLoadPerCall {
			msg := fmt.Sprintf("load_tools takes at most %d names at a time; load fewer", MaxLoadPerCall)
			return Failure(msg), fmt.Errorf("%s", msg)
		}
		have := make(map[string]bool, len(all))
		for _, d := range all {
			have[d.Name] = true
		}
		loaded, unknown := []string{}, []string{}
		s.mu.Lock()
		for _, v := range raw {
			n, _ := v.(string)
			if !have[n] {
				unknown = append(unknown, cut(n, 100))
				continue
			}
			s.loaded[n] = true
			loaded = append(loaded, n)
		}
		s.mu.Unlock()
		out := map[string]any{"loaded": loaded}
		if len(unknown) > 0 {
			out["unknown"] = unknown
			out["hint"] = "unknown names are not registered tools; search_tools lists the names"
		}
		b, _ := json.Marshal(out)
		return Reply{Text: string(b)}, nil
	}
	return Failure("unknown tool " + cut(name, 100)), fmt.Errorf("tool search: unknown tool %q", cut(name, 100))
}

// Loaded returns the names loaded so far, sorted.
func (s *Search) Loaded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.loaded))
	for n := range s.loaded {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// SearchToolDefs returns the definitions of search_tools and load_tools.
func SearchToolDefs() []ToolDef {
	return []ToolDef{
		{
			Name: SearchToolsName, OriginalName: SearchToolsName,
			Description: "Search the tools available to you by what they do. Returns matching tool names and one-line descriptions; " +
				"call load_tools with the names you need, and their definitions are added from the next turn.",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"query": map[string]any{"type": "string", "description": "words describing what you want to do, or part of a tool's name"},
					"limit": map[string]any{"type": "integer", "description": fmt.Sprintf("most matches to return (default %d, at most %d)", DefaultSearchResults, MaxSearchResults)},
				},
				"required": []any{"query"},
			},
		},
		{
			Name: LoadToolsName, OriginalName: LoadToolsName,
			Description: "Add the definitions of the named tools (names from search_tools) to the next turn, so you can call them.",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"names": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": fmt.Sprintf("tool names, at most %d", MaxLoadPerCall)},
				},
				"required": []any{"names"},
			},
		},
	}
}

// Match is one result of search_tools.
type Match struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Find returns up to limit tools of all that match query best: each word
// of the query scores in a tool's name (most), its server and its
// description; ties keep all's order. Tools matching no word are left out.
func Find(all []ToolDef, query string, limit int) []Match {
	words := searchWords(cut(query, maxQueryLen))
	if len(words) == 0 || limit <= 0 {
		return []Match{}
	}
	type scored struct {
		i, score int
	}
	var hits []scored
	for i, d := range all {
		name := strings.ToLower(d.Name)
		nameWords := searchWords(d.OriginalName)
		desc := strings.ToLower(d.Description)
		score := 0
		for _, w := range words {
			switch {
			case slices.Contains(nameWords, w):
				score += 6
			case strings.Contains(name, w):
				score += 4
			}
			if strings.Contains(strings.ToLower(d.Server), w) {
				score += 2
			}
			if strings.Contains(desc, w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, scored{i, score})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	out := make([]Match, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		d := all[h.i]
		out = append(out, Match{Name: d.Name, Description: summary(d.Description)})
	}
	return out
}

// searchWords splits s into lower-case words at anything but letters and
// digits (so snake_case and camelCase names split too).
func searchWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range s {
		switch {
		case unicode.IsUpper(r) && prevLower:
			flush()
			cur = append(cur, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
		default:
			flush()
		}
		prevLower = unicode.IsLower(r)
	}
	flush()
	return out
}

// summary is the first line of a description, cut to summaryLen runes.
func summary(desc string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(desc), "\n")
	return cut(strings.TrimSpace(line), summaryLen)
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
