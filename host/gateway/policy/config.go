package policy

import "github.com/hermes-agent/hermes/host/config"

// FromConfig returns the rules of the gateway block's policy: list, in
// order, for Compile.
func FromConfig(rules []config.GatewayRule) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		out[i] = Rule{
			Effect:   Deny,
			Subjects: r.Subjects, Groups: r.Groups, Scopes: r.Scopes, Servers: r.Servers, Tools: r.Tools,
			Prompts: r.Prompts, Resources: r.Resources,
			When:   r.When,
			Limits: Limits{CallsPerMinute: r.Limits.CallsPerMinute, Concurrent: r.Limits.Concurrent},
		}
		if r.Allow {
			out[i].Effect = Allow
		}
	}
	return out
}
