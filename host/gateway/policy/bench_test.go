package policy

import (
	"fmt"
	"testing"
)

// benchRules is a policy of a team's size: nine rules of globs before the
// one that decides the benchmarks' request, as the last rule.
func benchRules(last Rule) []Rule {
	var rules []Rule
	for i := range 9 {
		rules = append(rules, Rule{Effect: Allow, Groups: []string{fmt.Sprint("team", i)}, Tools: []string{fmt.Sprintf("mcp_srv%d_*", i)}})
	}
	return append(rules, last)
}

var benchRequest = Request{
	Subject: "alice@example.com", Groups: []string{"staff", "dev"}, Scopes: []string{"openid", "tools.read"},
	Claims: map[string]any{"department": "ops", "email": "alice@example.com"},
	Server: "github", Tool: "mcp_github_create_issue",
}

func benchDecide(b *testing.B, last Rule) {
	p := mustCompile(b, benchRules(last))
	if d := p.Decide(benchRequest); !d.Allow || d.Rule != 9 {
		b.Fatalf("%+v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Decide(benchRequest)
	}
}

// BenchmarkDecide: the tenth rule decides on globs alone.
func BenchmarkDecide(b *testing.B) {
	benchDecide(b, Rule{Effect: Allow, Groups: []string{"dev"}, Tools: []string{"mcp_github_*"}})
}

// BenchmarkDecideWhen: the tenth rule decides with a CEL condition.
func BenchmarkDecideWhen(b *testing.B) {
	benchDecide(b, Rule{Effect: Allow, Groups: []string{"dev"}, Tools: []string{"mcp_github_*"}, When: `claims.department == "ops" && claims.email.endsWith("@example.com")`})
}

// BenchmarkAllowed: Decide's answer without the reason's words.
func BenchmarkAllowed(b *testing.B) {
	p := mustCompile(b, benchRules(Rule{Effect: Allow, Groups: []string{"dev"}, Tools: []string{"mcp_github_*"}, When: `claims.department == "ops"`}))
	b.ReportAllocs()
	for b.Loop() {
		if !p.Allowed(benchRequest) {
			b.Fatal("denied")
		}
	}
}

// BenchmarkFilter100: one person's list of 100 tools.
func BenchmarkFilter100(b *testing.B) {
	p := mustCompile(b, benchRules(Rule{Effect: Allow, Groups: []string{"dev"}, Tools: []string{"mcp_github_*"}, When: `claims.department == "ops"`}))
	tools := make([]Target, 100)
	for i := range tools {
		srv := "github"
		if i%2 == 1 {
			srv = "fs"
		}
		tools[i] = Target{Server: srv, Tool: fmt.Sprintf("mcp_%s_tool%d", srv, i)}
	}
	id := func(t Target) Target { return t }
	if n := len(Filter(p, benchRequest, tools, id)); n != 50 {
		b.Fatalf("%d tools listed", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		Filter(p, benchRequest, tools, id)
	}
}
