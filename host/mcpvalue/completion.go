package mcpvalue

// The kinds of reference a completion asks about (CompletionRef.Type).
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompletionRef is what a completion/complete request completes an
// argument of: a prompt (Type RefPrompt, Name its name) or a resource
// template (Type RefResource, URI the template as written).
type CompletionRef struct {
	Type, Name, URI string
}

// CompletionRequest is one completion/complete request: the argument being
// typed (Argument, its Value so far) of Ref, with the arguments already
// filled in (Context; nil: none).
type CompletionRequest struct {
	Ref             CompletionRef
	Argument, Value string
	Context         map[string]string
}

// Completion is a completion/complete result: the values offered (at most
// 100 by the protocol), how many there are in all (0: not said) and
// whether there are more than Values.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
}
