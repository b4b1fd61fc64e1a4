// Package policy is the gateway's one decision point: who may see and call
// which tool, and see and get or read which prompt and resource (Kind).
// The same decision filters every list a person is shown (Filter) and
// gates every call they make (Decide), so a tool a person cannot call is
// never one they can see.
//
// A policy is an ordered list of rules. Each rule allows or denies, and
// names what it applies to with globs (see Rule): the subject, the groups
// and the scopes of the person asking, and the server and the model-visible
// tool name (mcp_<server>_<tool>) asked for, plus an optional condition
// written in CEL (cel.dev/cel-go) over the person's claims, the tool and its
// annotations. The first rule that matches decides; when none does, the
// answer is no (default deny).
//
// Conditions are compiled once, by Compile, and evaluated with a cost limit,
// so a decision costs a bounded amount of work whatever the claims hold. The
// package holds no state between decisions and is safe for concurrent use.
package policy
