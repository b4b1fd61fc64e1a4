package policy

import (
	"strings"
	"testing"
)

// Prompts and resources are matched by their own keys; a rule naming only
// tools keeps meaning tools alone, and a rule naming none of the three
// applies to all of them.
func TestKinds(t *testing.T) {
	p := mustCompile(t, []Rule{
		{Effect: Allow, Groups: []string{"support"}, Tools: []string{"mcp_ts_echo"}},
		{Effect: Allow, Groups: []string{"support"}, Prompts: []string{"ts_greet"}, Resources: []string{"test://static/*"}},
		{Effect: Deny, Subjects: []string{"mallory"}},
		{Effect: Allow, Groups: []string{"dev"}, Servers: []string{"ts"}},
		{Effect: Allow, Groups: []string{"ops"}, When: `kind == "resource" && resource.startsWith("test://items/")`},
	})
	support, dev, ops := []string{"support"}, []string{"dev"}, []string{"ops"}
	for _, c := range []struct {
		name   string
		r      Request
		allow  bool
		rule   int
		reason string
	}{
		{"a tools-only rule does not match a prompt of the same name", Request{Groups: support, Server: "ts", Kind: KindPrompt, Name: "mcp_ts_echo"}, false, -1, DefaultDenyReason},
		{"a prompt by prompts:", Request{Groups: support, Server: "ts", Kind: KindPrompt, Name: "ts_greet"},
			true, 1, `rule 1 allows: group "support" matches "support", prompt "ts_greet" matches "ts_greet"`},
		{"another prompt", Request{Groups: support, Server: "ts", Kind: KindPrompt, Name: "ts_summarize"}, false, -1, DefaultDenyReason},
		{"a resource by resources:", Request{Groups: support, Server: "ts", Kind: KindResource, Name: "test://static/hello.txt"},
			true, 1, `rule 1 allows: group "support" matches "support", resource "test://static/hello.txt" matches "test://static/*"`},
		{"a rule of prompts and resources does not match a tool", Request{Groups: support, Server: "ts", Tool: "mcp_ts_add"}, false, -1, DefaultDenyReason},
		{"a tool as before", Request{Groups: support, Server: "ts", Tool: "mcp_ts_echo"}, true, 0, `rule 0 allows`},
		{"a rule naming no kind denies every kind", Request{Subject: "mallory", Groups: dev, Server: "ts", Kind: KindResource, Name: "test://static/hello.txt"}, false, 2, `rule 2 denies: subject "mallory" matches "mallory"`},
		{"servers: alone allows every kind", Request{Groups: dev, Server: "ts", Kind: KindPrompt, Name: "ts_summarize"}, true, 3, `rule 3 allows: group "dev" matches "dev", server "ts" matches "ts"`},
		{"a condition over the kind", Request{Groups: ops, Server: "ts", Kind: KindResource, Name: "test://items/7", Annotations: ReadHints}, true, 4, `rule 4 allows`},
		{"the condition does not hold for a tool", Request{Groups: ops, Server: "ts", Tool: "test://items/7"}, false, -1, DefaultDenyReason},
	} {
		d := p.Decide(c.r)
		if d.Allow != c.allow || d.Rule != c.rule || !strings.HasPrefix(d.Reason, c.reason) {
			t.Errorf("%s: %+v; want allow %v by rule %d, reason %q", c.name, d, c.allow, c.rule, c.reason)
		}
		if p.Allowed(c.r) != c.allow {
			t.Errorf("%s: Allowed disagrees with Decide", c.name)
		}
	}
	items := []Target{
		{Kind: KindPrompt, Server: "ts", Name: "ts_greet"},
		{Kind: KindPrompt, Server: "ts", Name: "ts_summarize"},
		{Kind: KindResource, Server: "ts", Name: "test://static/hello.txt"},
		{Kind: KindResource, Server: "ts", Name: "test://items/{id}"},
		{Server: "ts", Tool: "mcp_ts_echo"},
	}
	got := Filter(p, Request{Groups: support}, items, func(t Target) Target { return t })
	if len(got) != 3 || got[0].Name != "ts_greet" || got[1].Name != "test://static/hello.txt" || got[2].Tool != "mcp_ts_echo" {
		t.Fatalf("support's list: %+v", got)
	}
}
