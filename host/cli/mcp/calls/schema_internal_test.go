package calls

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/toolview"
)

// TestToolSchemaForAPerson: required arguments first, then the rest by
// name; types (unions, arrays of, nested objects), defaults, choices and
// bounds on one line, the description under it; what the server wrote is
// escaped.
func TestToolSchemaForAPerson(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(`{
		"type": "object",
		"required": ["query"],
		"properties": {
			"limit": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100, "description": "how many"},
			"query": {"type": "string", "description": "what to look for\u001b[31m"},
			"mode": {"type": "string", "enum": ["fast", "exact"]},
			"tags": {"type": "array", "items": {"type": "string"}},
			"when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
			"filter": {"type": "object", "properties": {"owner": {"type": "string"}}, "required": ["owner"]}
		}
	}`), &schema); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WriteToolSchema(&b, toolview.ToolDef{Name: "mcp_s_search", OriginalName: "search", Description: "Searches.\nSecond line.", Parameters: schema})
	want := `search  (model name mcp_s_search)
  Searches.
  Second line.
  Arguments:
    query  string  required
        what to look for\x1b[31m
    filter  object
        owner  string  required
    limit  integer  default: 10  minimum: 1  maximum: 100
        how many
    mode  string  one of: "fast", "exact"
    tags  array of string
    when  string or null
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
