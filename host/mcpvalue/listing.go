package mcpvalue

// Resource is one resource a server lists (resources/list).
type Resource struct {
	URI, Name, Description, MIMEType string
}

// ResourceTemplate is one resource template a server lists
// (resources/templates/list): URITemplate is the template as written.
type ResourceTemplate struct {
	URITemplate, Name, Description, MIMEType string
}

// Prompt is one prompt a server lists (prompts/list).
type Prompt struct {
	Name, Description string
	Arguments         []PromptArgument
}

// PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	Name, Description string
	Required          bool
}

// PromptResult is a prompts/get result.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
}

// PromptMessage is one message of a prompt: its role ("user",
// "assistant") and one content block.
type PromptMessage struct {
	Role    string
	Content Content
}

// Notification is a notification a server sent: its method and its
// params (nil: none).
type Notification struct {
	Method string
	Params map[string]any
}

// Methods of the notifications the host acts on.
const (
	MethodToolsListChanged     = "notifications/tools/list_changed"
	MethodPromptsListChanged   = "notifications/prompts/list_changed"
	MethodResourcesListChanged = "notifications/resources/list_changed"
	MethodMessage              = "notifications/message"
	MethodProgress             = "notifications/progress"
)
