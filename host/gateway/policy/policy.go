package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// Effect is what a matching rule decides.
type Effect uint8

// The effects of a rule.
const (
	// Allow lets the person see and call the tool.
	Allow Effect = iota + 1
	// Deny hides the tool from the person and refuses their calls.
	Deny
)

func (e Effect) String() string {
	switch e {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	}
	return "effect(" + strconv.Itoa(int(e)) + ")"
}

// MaxRules bounds the rules of one policy.
const MaxRules = 1000

// Kind is what a request is about: a tool (the zero value), a prompt or a
// resource.
type Kind uint8

// The kinds of request.
const (
	// KindTool: a tool, named by its model-visible name (Request.Tool).
	KindTool Kind = iota
	// KindPrompt: a prompt, named by the name the gateway serves it under
	// (Request.Name).
	KindPrompt
	// KindResource: a resource, named by its URI, or a resource template
	// by its URI template as written (Request.Name).
	KindResource
)

func (k Kind) String() string {
	switch k {
	case KindTool:
		return "tool"
	case KindPrompt:
		return "prompt"
	case KindResource:
		return "resource"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Rule is one rule of a policy (one entry of the gateway block's policy:
// list). Each selector is a list of globs (`*` any run of characters, `?`
// one character, anything else itself); a selector left empty matches
// anything. A rule matches a request when every selector it has matches:
// Subjects the subject, Groups any one of the person's groups, Scopes any
// one of the token's scopes, Servers the server, Tools the model-visible
// tool name, Prompts the prompt's served name, Resources the resource's
// URI, and When (a CEL expression) evaluates to true. A rule must say at
// least one of them.
//
// Tools, Prompts and Resources also say which kinds of request a rule is
// about: a rule with none of them applies to tools, prompts and resources
// alike; a rule with any of them applies only to the kinds it names (a
// rule with only Tools never matches a prompt or a resource, as before
// prompts and resources were served).
type Rule struct {
	Effect   Effect
	Subjects []string
	Groups   []string
	Scopes   []string
	Servers  []string
	// Tools are globs over model-visible names, mcp_<server>_<tool>. A
	// server name may itself hold "_", so mcp_github_* also matches the
	// tools of a server named github_enterprise; name the server in
	// Servers to tell them apart.
	Tools []string
	// Prompts are globs over the names prompts are served under,
	// <server>_<prompt> with the server's name as in tool names.
	Prompts []string
	// Resources are globs over resource URIs as their servers give them,
	// and over resource templates' URI templates as written (a template
	// is listed when its text matches).
	Resources []string
	// When is a CEL expression of type bool over the variables claims
	// (map), subject (string), groups and scopes (lists of strings),
	// server, kind ("tool", "prompt" or "resource"), tool, prompt and
	// resource (strings; "" when the request is of another kind) and
	// annotations (a map with the bools read_only, destructive,
	// idempotent and open_world); "" for none.
	When string
	// Limits are the rate limits of the calls the rule allows, per
	// subject and tool; zero values leave the gateway's own limits.
	Limits Limits
}

// Limits are the rate limits a rule sets for the calls it allows; zero is
// no limit of the rule's own. The policy only carries them; the gateway
// enforces them.
type Limits struct {
	CallsPerMinute int
	Concurrent     int
}

// Annotations are a tool's behaviour hints with MCP's defaults applied (a
// tool that says nothing may be destructive and reach the open world).
type Annotations struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// HintsOf returns the hints a server gave for a tool with MCP's defaults
// for those it left out: readOnlyHint false, destructiveHint true,
// idempotentHint false, openWorldHint true. A read-only tool is never
// destructive, whatever it says, as for chat's approvals.
func HintsOf(a mcpvalue.Annotations) Annotations {
	h := Annotations{Destructive: true, OpenWorld: true}
	if a.ReadOnly != nil {
		h.ReadOnly = *a.ReadOnly
	}
	if a.Destructive != nil {
		h.Destructive = *a.Destructive
	}
	if a.Idempotent != nil {
		h.Idempotent = *a.Idempotent
	}
	if a.OpenWorld != nil {
		h.OpenWorld = *a.OpenWorld
	}
	if h.ReadOnly {
		h.Destructive = false
	}
	return h
}

// ReadHints are the hints of a prompts/get or a resources/read: a read,
// never destructive, the same twice, maybe of the open world.
var ReadHints = Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}

// Request is one question to the policy: may this person see or call this
// tool, see or get this prompt, see or read this resource.
type Request struct {
	// Subject, Groups, Scopes and Claims describe the person, as their
	// token says.
	Subject string
	Groups  []string
	Scopes  []string
	Claims  map[string]any
	// Kind is what is asked for (KindTool, the zero value, for a tool).
	Kind Kind
	// Server is the server's name; Tool the model-visible tool name
	// (mcp_<server>_<tool>) of a tool, Name the served name of a prompt
	// or the URI (or URI template) of a resource.
	Server string
	Tool   string
	Name   string
	// Annotations are the tool's hints (HintsOf); ReadHints for a prompt
	// or a resource.
	Annotations Annotations
}

// Decision is the policy's answer to one Request.
type Decision struct {
	// Allow is the answer.
	Allow bool
	// Rule is the index of the rule that decided, -1 when none matched.
	Rule int
	// Reason says in words why: which rule matched on what, or "no rule
	// matched: default deny".
	Reason string
	// Limits are the limits of the rule that allowed the call.
	Limits Limits
}

// DefaultDenyReason is the Reason of a decision no rule made.
const DefaultDenyReason = "no rule matched: default deny"

// Policy is a compiled list of rules, ready for decisions. It is immutable
// and safe for concurrent use.
type Policy struct {
	rules []compiled
}

// compiled is a Rule with its globs and condition prepared.
type compiled struct {
	effect                                                       Effect
	subjects, groups, scopes, servers, tools, prompts, resources globs
	when                                                         *condition
	limits                                                       Limits
}

// Compile checks rules and prepares them for decisions. An error names the
// rule by its index (0 for the first) and says what is wrong with it: a
// bad pattern, a condition CEL refuses (with CEL's message), or a rule that
// says nothing.
func Compile(rules []Rule) (*Policy, error) {
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("policy: %d rules, more than the %d allowed", len(rules), MaxRules)
	}
	p := &Policy{rules: make([]compiled, len(rules))}
	for i, r := range rules {
		c, err := compileRule(r)
		if err != nil {
			return nil, fmt.Errorf("policy rule %d: %w", i, err)
		}
		p.rules[i] = c
	}
	return p, nil
}

func compileRule(r Rule) (compiled, error) {
	c := compiled{effect: r.Effect, limits: r.Limits}
	if r.Effect != Allow && r.Effect != Deny {
		return c, fmt.Errorf("the effect must be allow or deny, not %v", r.Effect)
	}
	if r.Limits.CallsPerMinute < 0 || r.Limits.Concurrent < 0 {
		return c, fmt.Errorf("limits must not be negative")
	}
	var err error
	for _, f := range []struct {
		name string
		in   []string
		out  *globs
	}{
		{"subjects", r.Subjects, &c.subjects},
		{"groups", r.Groups, &c.groups},
		{"scopes", r.Scopes, &c.scopes},
		{"servers", r.Servers, &c.servers},
		{"tools", r.Tools, &c.tools},
		{"prompts", r.Prompts, &c.prompts},
		{"resources", r.Resources, &c.resources},
	} {
		if *f.out, err = compileGlobs(f.name, f.in); err != nil {
			return c, err
		}
	}
	if strings.TrimSpace(r.When) != "" {
		if c.when, err = compileCondition(r.When); err != nil {
			return c, fmt.Errorf("when: %w", err)
		}
	}
	if len(c.subjects)+len(c.groups)+len(c.scopes)+len(c.servers)+len(c.tools)+len(c.prompts)+len(c.resources) == 0 && c.when == nil {
		return c, fmt.Errorf("it names nothing to match; write tools: [\"*\"] for a rule over every tool")
	}
	return c, nil
}

// Len returns the number of rules.
func (p *Policy) Len() int { return len(p.rules) }

// Decide answers r: the first rule that matches decides, and with none the
// answer is no. A condition that fails to evaluate (a missing claim, the
// cost limit) does not match for an allow rule and matches for a deny rule:
// an error never lets a call through that a rule meant to stop.
func (p *Policy) Decide(r Request) Decision {
	for i := range p.rules {
		var m match
		if p.rules[i].matches(&r, &m) {
			d := Decision{Allow: p.rules[i].effect == Allow, Rule: i}
			if d.Allow {
				d.Limits = p.rules[i].limits
			}
			d.Reason = m.reason(i, &p.rules[i], &r)
			return d
		}
	}
	return Decision{Rule: -1, Reason: DefaultDenyReason}
}

// Allowed is Decide's answer alone, without the words: the cheaper call
// for a caller that only needs yes or no.
func (p *Policy) Allowed(r Request) bool {
	_, allow := p.first(&r, nil)
	return allow
}

// first returns the index of the rule that decides r and whether it
// allows; -1, false by default. identity, when not nil, holds for each
// rule whether its subject, group and scope selectors already matched.
func (p *Policy) first(r *Request, identity []bool) (int, bool) {
	for i := range p.rules {
		c := &p.rules[i]
		if identity != nil && !identity[i] {
			continue
		}
		if c.matchesTool(r, identity != nil, nil) {
			return i, c.effect == Allow
		}
	}
	return -1, false
}

// Target is what a listed item stands for, for Filter: a tool (Kind
// KindTool, Tool its model-visible name), a prompt or a resource (Name).
type Target struct {
	Kind         Kind
	Server, Tool string
	Name         string
	Annotations  Annotations
}

// Filter returns the items of a list that the person of who may see: those
// the policy allows, in their order. target says what each item is; the
// Server, Tool and Annotations of who are ignored. The person's part of
// each rule is matched once for the whole list.
func Filter[T any](p *Policy, who Request, items []T, target func(T) Target) []T {
	identity := make([]bool, len(p.rules))
	for i := range p.rules {
		identity[i] = p.rules[i].matchesIdentity(&who, nil)
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		t := target(it)
		who.Kind, who.Server, who.Tool, who.Name, who.Annotations = t.Kind, t.Server, t.Tool, t.Name, t.Annotations
		if _, ok := p.first(&who, identity); ok {
			out = append(out, it)
		}
	}
	return out
}

// match records which pattern of each selector matched, for the reason.
type match struct {
	subject, group, scope, server, tool int
	// object is the globs tool indexes: the rule's tools, prompts or
	// resources, by the request's kind.
	object               globs
	groupName, scopeName string
	whenErr              error
}

// matches reports whether c matches r, recording in m what matched.
func (c *compiled) matches(r *Request, m *match) bool {
	return c.matchesIdentity(r, m) && c.matchesTool(r, true, m)
}

// matchesIdentity matches the person's selectors: subjects, groups, scopes.
func (c *compiled) matchesIdentity(r *Request, m *match) bool {
	if m == nil {
		m = &match{}
	}
	m.subject, m.group, m.scope = -1, -1, -1
	if len(c.subjects) > 0 {
		if m.subject = c.subjects.first(r.Subject); m.subject < 0 {
			return false
		}
	}
	if len(c.groups) > 0 {
		if m.groupName, m.group = c.groups.firstOf(r.Groups); m.group < 0 {
			return false
		}
	}
	if len(c.scopes) > 0 {
		if m.scopeName, m.scope = c.scopes.firstOf(r.Scopes); m.scope < 0 {
			return false
		}
	}
	return true
}

// objects are the rule's globs over names of kind k, and whether the rule
// applies to that kind at all: a rule that names no tools, prompts or
// resources applies to every kind with no globs over their names; one
// that names some applies only to the kinds it names.
func (c *compiled) objects(k Kind) (globs, bool) {
	var gs globs
	switch k {
	case KindTool:
		gs = c.tools
	case KindPrompt:
		gs = c.prompts
	case KindResource:
		gs = c.resources
	default:
		return nil, false
	}
	if len(gs) > 0 {
		return gs, true
	}
	return nil, len(c.tools)+len(c.prompts)+len(c.resources) == 0
}

// name is what the request names: the tool's name, or the prompt's or the
// resource's.
func (r *Request) name() string {
	if r.Kind == KindTool {
		return r.Tool
	}
	return r.Name
}

// matchesTool matches the rest: servers, the tool, prompt or resource,
// and the condition; with identityDone false the person's selectors are
// matched first.
func (c *compiled) matchesTool(r *Request, identityDone bool, m *match) bool {
	if m == nil {
		m = &match{}
	}
	if !identityDone && !c.matchesIdentity(r, m) {
		return false
	}
	m.server, m.tool = -1, -1
	if len(c.servers) > 0 {
		if m.server = c.servers.first(r.Server); m.server < 0 {
			return false
		}
	}
	objects, applies := c.objects(r.Kind)
	if !applies {
		return false
	}
	if len(objects) > 0 {
		if m.tool = objects.first(r.name()); m.tool < 0 {
			return false
		}
		m.object = objects
	}
	if c.when == nil {
		return true
	}
	ok, err := c.when.eval(r)
	if err != nil {
		m.whenErr = err
		// Fail closed: a deny rule whose condition cannot be
		// evaluated applies, an allow rule does not.
		return c.effect == Deny
	}
	return ok
}

// maxReasonValue bounds each value quoted in a reason.
const maxReasonValue = 128

// reason says in words why rule i (c) matched r. It is written into one
// buffer: a decision's words cost two allocations.
func (m *match) reason(i int, c *compiled, r *Request) string {
	b := make([]byte, 0, 192)
	b = append(b, "rule "...)
	b = strconv.AppendInt(b, int64(i), 10)
	if c.effect == Allow {
		b = append(b, " allows: "...)
	} else {
		b = append(b, " denies: "...)
	}
	sep := ""
	on := func(what, value string, gs globs, at int) {
		if at < 0 {
			return
		}
		b = append(b, sep...)
		b = append(b, what...)
		b = append(b, ' ')
		b = strconv.AppendQuote(b, bound(value))
		b = append(b, " matches "...)
		b = strconv.AppendQuote(b, gs[at].pattern)
		sep = ", "
	}
	on("subject", r.Subject, c.subjects, m.subject)
	on("group", m.groupName, c.groups, m.group)
	on("scope", m.scopeName, c.scopes, m.scope)
	on("server", r.Server, c.servers, m.server)
	on(r.Kind.String(), r.name(), m.object, m.tool)
	if c.when != nil {
		b = append(b, sep...)
		if m.whenErr != nil {
			b = append(b, "its when could not be evaluated, so the deny applies: "...)
			b = append(b, bound(m.whenErr.Error())...)
		} else {
			b = append(b, "when "...)
			b = strconv.AppendQuote(b, bound(c.when.source))
			b = append(b, " holds"...)
		}
	}
	return string(b)
}

// bound cuts s to maxReasonValue bytes on a rune boundary.
func bound(s string) string {
	if len(s) <= maxReasonValue {
		return s
	}
	cut := maxReasonValue
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
