package policy

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// specRules are the rules of SPEC §11's example.
var specRules = []Rule{
	{Effect: Allow, Groups: []string{"dev"}, Tools: []string{"mcp_github_*", "mcp_everything_*"}},
	{Effect: Deny, Subjects: []string{"bob"}, Tools: []string{"*_delete_*"}},
	{Effect: Allow, Scopes: []string{"tools.read"}, Tools: []string{"*"}, When: `claims.department == "ops"`},
}

func mustCompile(t testing.TB, rules []Rule) *Policy {
	t.Helper()
	p, err := Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecide(t *testing.T) {
	p := mustCompile(t, specRules)
	ops := map[string]any{"department": "ops"}
	for _, c := range []struct {
		name   string
		r      Request
		allow  bool
		rule   int
		reason string
	}{
		{"a developer calls github", Request{Subject: "alice", Groups: []string{"ops", "dev"}, Server: "github", Tool: "mcp_github_create_issue"},
			true, 0, `rule 0 allows: group "dev" matches "dev", tool "mcp_github_create_issue" matches "mcp_github_*"`},
		{"a developer's allow comes first, even for bob", Request{Subject: "bob", Groups: []string{"dev"}, Server: "github", Tool: "mcp_github_delete_repo"},
			true, 0, `rule 0 allows`},
		{"bob outside dev is denied delete", Request{Subject: "bob", Scopes: []string{"tools.read"}, Claims: ops, Server: "fs", Tool: "mcp_fs_delete_file"},
			false, 1, `rule 1 denies: subject "bob" matches "bob", tool "mcp_fs_delete_file" matches "*_delete_*"`},
		{"ops with the scope", Request{Subject: "carol", Scopes: []string{"openid", "tools.read"}, Claims: ops, Server: "fs", Tool: "mcp_fs_read"},
			true, 2, `rule 2 allows: scope "tools.read" matches "tools.read", tool "mcp_fs_read" matches "*", when "claims.department == \"ops\"" holds`},
		{"ops without the scope", Request{Subject: "carol", Claims: ops, Server: "fs", Tool: "mcp_fs_read"},
			false, -1, DefaultDenyReason},
		{"the scope, another department", Request{Subject: "dave", Scopes: []string{"tools.read"}, Claims: map[string]any{"department": "sales"}, Server: "fs", Tool: "mcp_fs_read"},
			false, -1, DefaultDenyReason},
		{"the scope, no department claim: an allow's failed condition does not match", Request{Subject: "erin", Scopes: []string{"tools.read"}, Server: "fs", Tool: "mcp_fs_read"},
			false, -1, DefaultDenyReason},
		{"nobody", Request{}, false, -1, DefaultDenyReason},
	} {
		d := p.Decide(c.r)
		if d.Allow != c.allow || d.Rule != c.rule || !strings.HasPrefix(d.Reason, c.reason) {
			t.Errorf("%s: %+v; want allow %v by rule %d, reason %q", c.name, d, c.allow, c.rule, c.reason)
		}
		if p.Allowed(c.r) != c.allow {
			t.Errorf("%s: Allowed disagrees with Decide", c.name)
		}
	}
}

func TestConditionVariables(t *testing.T) {
	r := Request{
		Subject: "alice", Groups: []string{"dev"}, Scopes: []string{"a", "b"},
		Claims: map[string]any{"email": "alice@example.com", "level": float64(3), "teams": []any{"x", "y"}, "org": map[string]any{"id": "o1"}},
		Server: "github", Tool: "mcp_github_list",
		Annotations: HintsOf(mcpvalue.Annotations{ReadOnly: new(true)}),
	}
	for when, want := range map[string]bool{
		`subject == "alice" && "dev" in groups && "b" in scopes`:       true,
		`server == "github" && tool.startsWith("mcp_github_")`:         true,
		`annotations.read_only && !annotations.destructive`:            true,
		`annotations.open_world && !annotations.idempotent`:            true,
		`claims.email.endsWith("@example.com") && claims.level >= 3.0`: true,
		`"y" in claims.teams && claims.org.id == "o1"`:                 true,
		`has(claims.department)`:                                       false,
		`size(groups) == 1 && scopes.exists(s, s == "a")`:              true,
		`claims.email.matches("^[a-z]+@example[.]com$")`:               true,
		`claims.level > 5.0 || subject.contains("bob")`:                false,
	} {
		p := mustCompile(t, []Rule{{Effect: Allow, When: when}})
		if d := p.Decide(r); d.Allow != want {
			t.Errorf("%s: %+v, want allow %v", when, d, want)
		}
	}
}

// A deny rule whose condition fails to evaluate applies: an error never
// lets through a call a rule meant to stop.
func TestDenyFailsClosed(t *testing.T) {
	p := mustCompile(t, []Rule{
		{Effect: Deny, Tools: []string{"*"}, When: `claims.contractor == true`},
		{Effect: Allow, Tools: []string{"*"}},
	})
	d := p.Decide(Request{Subject: "alice", Tool: "mcp_fs_read"})
	if d.Allow || d.Rule != 0 || !strings.Contains(d.Reason, "could not be evaluated") || !strings.Contains(d.Reason, "contractor") {
		t.Fatalf("missing claim: %+v", d)
	}
	if d := p.Decide(Request{Subject: "alice", Tool: "mcp_fs_read", Claims: map[string]any{"contractor": false}}); !d.Allow || d.Rule != 1 {
		t.Fatalf("contractor false: %+v", d)
	}
}

// A condition that would take unbounded work stops at the cost limit.
func TestConditionCostLimit(t *testing.T) {
	big := make([]any, 5000)
	for i := range big {
		big[i] = fmt.Sprint(i)
	}
	p := mustCompile(t, []Rule{
		{Effect: Deny, Tools: []string{"*"}, When: `claims.items.all(x, claims.items.all(y, x != "" && y != ""))`},
		{Effect: Allow, Tools: []string{"*"}},
	})
	d := p.Decide(Request{Tool: "mcp_a_b", Claims: map[string]any{"items": big}})
	if d.Allow || !strings.Contains(d.Reason, "cost") {
		t.Fatalf("%+v", d)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		rules []Rule
		want  string
	}{
		{[]Rule{{Effect: Allow, Tools: []string{"*"}}, {Effect: Allow, Tools: []string{"*"}, When: `claims.x ==`}}, "policy rule 1: when: 1:12: Syntax error"},
		{[]Rule{{Effect: Allow, When: `nosuch == 1`}}, "policy rule 0: when: 1:1: undeclared reference to 'nosuch'"},
		{[]Rule{{Effect: Allow, When: `subject`}}, `policy rule 0: when: "subject" is of type string; a condition must be true or false`},
		{[]Rule{{Effect: Allow, When: strings.Repeat("true && ", 1000) + "true"}}, "policy rule 0: when: 8004 bytes"},
		{[]Rule{{Effect: Allow, When: strings.Repeat("(", 200) + "true" + strings.Repeat(")", 200)}}, "policy rule 0: when:"},
		{[]Rule{{Effect: Allow}}, "policy rule 0: it names nothing to match"},
		{[]Rule{{Tools: []string{"*"}}}, "policy rule 0: the effect must be allow or deny"},
		{[]Rule{{Effect: Allow, Tools: []string{"mcp_*", ""}}}, "policy rule 0: tools[1]: an empty pattern"},
		{[]Rule{{Effect: Allow, Groups: []string{strings.Repeat("g", 600)}}}, "policy rule 0: groups[0]: a pattern of 600 bytes"},
		{make([]Rule, MaxRules+1), "more than the 1000 allowed"},
	} {
		_, err := Compile(c.rules)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want one line with %q", err, c.want)
		}
	}
}

func TestFilter(t *testing.T) {
	p := mustCompile(t, []Rule{
		{Effect: Deny, Tools: []string{"*_delete_*"}},
		{Effect: Allow, Groups: []string{"dev"}, Servers: []string{"github"}},
		{Effect: Allow, Subjects: []string{"*@ops.example.com"}, Tools: []string{"*"}, When: `annotations.read_only`},
	})
	type tool struct {
		server, name string
		readOnly     bool
	}
	list := []tool{
		{"github", "mcp_github_list", true}, {"github", "mcp_github_delete_repo", false},
		{"fs", "mcp_fs_read", true}, {"fs", "mcp_fs_write", false},
	}
	target := func(x tool) Target {
		return Target{Server: x.server, Tool: x.name, Annotations: Annotations{ReadOnly: x.readOnly}}
	}
	names := func(ts []tool) string {
		var out []string
		for _, x := range ts {
			out = append(out, x.name)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		who  Request
		want string
	}{
		{Request{Subject: "alice", Groups: []string{"dev"}}, "mcp_github_list"},
		{Request{Subject: "op@ops.example.com"}, "mcp_github_list,mcp_fs_read"},
		{Request{Subject: "op@ops.example.com", Groups: []string{"dev"}}, "mcp_github_list,mcp_fs_read"},
		{Request{Subject: "mallory"}, ""},
	} {
		got := Filter(p, c.who, list, target)
		if names(got) != c.want {
			t.Errorf("%+v sees %q, want %q", c.who, names(got), c.want)
		}
		// The list and the calls agree.
		for _, x := range list {
			r := c.who
			tg := target(x)
			r.Server, r.Tool, r.Annotations = tg.Server, tg.Tool, tg.Annotations
			if listed := strings.Contains(","+names(got)+",", ","+x.name+","); listed != p.Decide(r).Allow {
				t.Errorf("%+v: %s listed %v, but Decide says %+v", c.who, x.name, listed, p.Decide(r))
			}
		}
	}
}

func TestHintsOf(t *testing.T) {
	if h := HintsOf(mcpvalue.Annotations{}); h != (Annotations{Destructive: true, OpenWorld: true}) {
		t.Errorf("no hints: %+v", h)
	}
	if h := HintsOf(mcpvalue.Annotations{ReadOnly: new(true), Destructive: new(true), Idempotent: new(true), OpenWorld: new(false)}); h != (Annotations{ReadOnly: true, Idempotent: true}) {
		t.Errorf("read-only: %+v", h)
	}
}

func TestDecideConcurrently(t *testing.T) {
	p := mustCompile(t, specRules)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 500 {
				r := Request{Subject: fmt.Sprint("u", i), Scopes: []string{"tools.read"}, Claims: map[string]any{"department": "ops"}, Tool: fmt.Sprint("mcp_s_t", j)}
				if d := p.Decide(r); !d.Allow || d.Rule != 2 {
					t.Errorf("%+v", d)
					return
				}
			}
		}()
	}
	wg.Wait()
}
