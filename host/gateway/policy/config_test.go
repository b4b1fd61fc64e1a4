package policy

import (
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
)

const teamConfig = `gateway:
  resource: https://mcp.example.com/mcp
  policy:
    - {allow: {groups: [dev], tools: ["mcp_github_*", "mcp_everything_*"]}}
    - {deny:  {subjects: [bob], tools: ["*_delete_*"]}}
    - {allow: {scopes: [tools.read], tools: ["*"], when: 'claims.department == "ops"', limits: {calls_per_minute: 10}}}
`

// The rules of a config file decide as written.
func TestFromConfig(t *testing.T) {
	g, err := config.ParseGateway("config.yaml", []byte(teamConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := mustCompile(t, FromConfig(g.Policy))
	d := p.Decide(Request{Subject: "carol", Scopes: []string{"tools.read"}, Claims: map[string]any{"department": "ops"}, Server: "fs", Tool: "mcp_fs_read"})
	if !d.Allow || d.Rule != 2 || d.Limits != (Limits{CallsPerMinute: 10}) {
		t.Fatalf("%+v", d)
	}
	if d := p.Decide(Request{Subject: "bob", Scopes: []string{"tools.read"}, Claims: map[string]any{"department": "ops"}, Tool: "mcp_fs_delete_file"}); d.Allow || d.Rule != 1 {
		t.Fatalf("%+v", d)
	}
	bad := strings.Replace(teamConfig, `claims.department == "ops"`, `claims.department = "ops"`, 1)
	g, err = config.ParseGateway("config.yaml", []byte(bad), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(FromConfig(g.Policy)); err == nil || !strings.HasPrefix(err.Error(), "policy rule 2: when: 1:") {
		t.Fatalf("error %v", err)
	}
}

// FuzzRuleLoader feeds config files through the loader and the compiler:
// neither may panic, a rule the loader accepts compiles or is refused with
// an error naming its index, and a compiled policy answers.
func FuzzRuleLoader(f *testing.F) {
	f.Add([]byte(teamConfig))
	f.Add([]byte("gateway:\n  resource: https://a/m\n  policy:\n    - deny: {tools: '*', when: 'tool.matches(\"^a+$\") || size(claims) > 2'}\n"))
	f.Add([]byte("gateway:\n  resource: https://a/m\n  policy: [{allow: {servers: [s?], subjects: ['*@x'], when: 'annotations.read_only'}}]\n"))
	f.Add([]byte("gateway:\n  resource: https://a/m\n  policy: [{allow: {groups: [a], when: '[1,2].all(x, x > 0)'}}, {deny: {scopes: '*'}}]\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		g, err := config.ParseGateway("fuzz.yaml", src, nil)
		if err != nil || g == nil {
			return
		}
		p, err := Compile(FromConfig(g.Policy))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "policy rule ") && !strings.HasPrefix(err.Error(), "policy: ") {
				t.Fatalf("error names no rule: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		for _, r := range []Request{
			{},
			{Subject: "bob", Groups: []string{"dev", "a"}, Scopes: []string{"tools.read"}, Claims: map[string]any{"department": "ops", "n": 1.0}, Server: "s1", Tool: "mcp_s1_delete_x"},
		} {
			d := p.Decide(r)
			if d.Allow != p.Allowed(r) || (d.Rule < 0) != (d.Reason == DefaultDenyReason) || (d.Allow && d.Rule < 0) || d.Rule >= p.Len() {
				t.Fatalf("%+v for %+v", d, r)
			}
		}
	})
}

// A rule's prompts: and resources: keys are read from the config.
func TestFromConfigPromptsAndResources(t *testing.T) {
	g, err := config.ParseGateway("config.yaml", []byte(`gateway:
  resource: https://mcp.example.com/mcp
  policy:
    - {allow: {groups: [support], prompts: ["ts_*"], resources: ["test://static/*"]}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := mustCompile(t, FromConfig(g.Policy))
	if !p.Allowed(Request{Groups: []string{"support"}, Kind: KindResource, Name: "test://static/a"}) ||
		!p.Allowed(Request{Groups: []string{"support"}, Kind: KindPrompt, Name: "ts_greet"}) ||
		p.Allowed(Request{Groups: []string{"support"}, Tool: "mcp_ts_echo"}) {
		t.Fatal("the rule's prompts and resources keys were not read as written")
	}
}
