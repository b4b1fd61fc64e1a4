package tools

import (
	"encoding/json"
	"fmt"
)

// Instructions is the server instructions text of hermes mcp serve, as the
// original sent it in its initialize result.
const Instructions = "Hermes Agent messaging bridge. Use these tools to interact with " +
	"conversations across Telegram, Discord, Slack, WhatsApp, Signal, " +
	"Matrix, and other connected platforms."

// ServerName is the MCP server name of hermes mcp serve.
const ServerName = "hermes"

// The names of the ten tools.
const (
	ConversationsList   = "conversations_list"
	ConversationGet     = "conversation_get"
	MessagesRead        = "messages_read"
	AttachmentsFetch    = "attachments_fetch"
	EventsPoll          = "events_poll"
	EventsWait          = "events_wait"
	MessagesSend        = "messages_send"
	ChannelsList        = "channels_list"
	PermissionsListOpen = "permissions_list_open"
	PermissionsRespond  = "permissions_respond"
)

// Defaults and clamps of the integer parameters, as in the original.
const (
	DefaultListLimit   = 50  // conversations_list and messages_read limit
	MaxListLimit       = 200 // their upper clamp
	DefaultEventsLimit = 20  // events_poll limit
	MaxEventsLimit     = 200
	MaxCursor          = 1_000_000_000_000_000_000 // after_cursor upper clamp, 10**18
	DefaultTimeoutMS   = 30000                     // events_wait timeout_ms
	MaxTimeoutMS       = 300000                    // five minutes
	// MaxContentChars is how many characters of a message's text
	// messages_read returns.
	MaxContentChars = 2000
)

// Tool is the MCP definition of one tool. InputSchema and OutputSchema are
// JSON Schema objects (type "object").
type Tool struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
}

// Definitions returns the ten tools in the original's order. The
// descriptions are the original's docstrings, dedented.
func Definitions() []Tool {
	out := make([]Tool, 0, len(definitions))
	for _, d := range definitions {
		out = append(out, Tool{
			Name:         d.name,
			Description:  d.description,
			InputSchema:  mustJSON(d.name, d.input),
			OutputSchema: mustJSON(d.name, d.output),
		})
	}
	return out
}

func mustJSON(name string, v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("schema of %s: %v", name, err))
	}
	return data
}

type schema = map[string]any

type definition struct {
	name, description string
	input, output     schema
}

// Schema helpers.
func obj(props schema, required ...string) schema {
	s := schema{"type": "object", "properties": props}
	if required == nil {
		required = []string{}
	}
	s["required"] = required
	return s
}

func str(desc string) schema { return schema{"type": "string", "description": desc} }

func optStr(desc string) schema {
	return schema{"anyOf": []schema{{"type": "string"}, {"type": "null"}}, "default": nil, "description": desc}
}

func integer(desc string, def, minimum, maximum int64) schema {
	return schema{"type": "integer", "default": def, "minimum": minimum, "maximum": maximum, "description": desc}
}

func list(items schema) schema { return schema{"type": "array", "items": items} }

var (
	tStr     = schema{"type": "string"}
	tInt     = schema{"type": "integer"}
	tStrNull = schema{"type": []string{"string", "null"}}
	// A stored timestamp: float seconds, integer seconds or ISO text.
	tTimestamp = schema{"type": []string{"number", "string"}}
	// An event: cursor, type and session_key, then the type's own fields.
	tEvent = schema{
		"type": "object",
		"properties": schema{
			"cursor":      tInt,
			"type":        schema{"type": "string", "description": "message, approval_requested or approval_resolved"},
			"session_key": tStr,
		},
		"required":             []string{"cursor", "type", "session_key"},
		"additionalProperties": true,
	}
)

var definitions = []definition{
	{
		name: ConversationsList,
		description: `List active messaging conversations across connected platforms.

Returns conversations with their session keys (needed for messages_read),
platform, chat type, display name, and last activity time.

Args:
    platform: Filter by platform name (telegram, discord, slack, etc.)
    limit: Maximum number of conversations to return (default 50)
    search: Optional text to filter conversations by name`,
		input: obj(schema{
			"platform": optStr("Filter by platform name (telegram, discord, slack, etc.), case-insensitive"),
			"limit":    integer("Maximum number of conversations to return (default 50, clamped to 1..200)", DefaultListLimit, 1, MaxListLimit),
			"search":   optStr("Optional text to filter conversations by name: a case-insensitive substring of the display name, chat name or session key"),
		}),
		output: obj(schema{
			"count": tInt,
			"conversations": list(obj(schema{
				"session_key": tStr, "session_id": tStr, "platform": tStr, "chat_type": tStr,
				"display_name": tStr, "chat_name": tStr, "user_name": tStr, "updated_at": tStr,
			}, "session_key", "session_id", "platform", "chat_type", "display_name", "chat_name", "user_name", "updated_at")),
		}, "count", "conversations"),
	},
	{
		name: ConversationGet,
		description: `Get detailed info about one conversation by its session key.

Args:
    session_key: The session key from conversations_list`,
		input: obj(schema{"session_key": str("The session key from conversations_list")}, "session_key"),
		output: obj(schema{
			"session_key": tStr, "session_id": tStr, "platform": tStr, "chat_type": tStr,
			"display_name": tStr, "user_name": tStr, "chat_name": tStr, "chat_id": tStr,
			"thread_id": tStrNull, "updated_at": tStr, "created_at": tStr,
			"input_tokens": tInt, "output_tokens": tInt, "total_tokens": tInt,
		}, "session_key", "session_id", "platform", "chat_type", "display_name", "user_name", "chat_name",
			"chat_id", "thread_id", "updated_at", "created_at", "input_tokens", "output_tokens", "total_tokens"),
	},
	{
		name: MessagesRead,
		description: `Read recent messages from a conversation.

Returns the message history in chronological order with role, content,
and timestamp for each message.

Args:
    session_key: The session key from conversations_list
    limit: Maximum number of messages to return (default 50, most recent)`,
		input: obj(schema{
			"session_key": str("The session key from conversations_list"),
			"limit":       integer("Maximum number of messages to return (default 50, most recent; clamped to 1..200)", DefaultListLimit, 1, MaxListLimit),
		}, "session_key"),
		output: obj(schema{
			"session_key":      tStr,
			"count":            tInt,
			"total_in_session": tInt,
			"messages": list(obj(schema{
				"id":        tStr,
				"role":      schema{"type": "string", "enum": []string{"user", "assistant"}},
				"content":   schema{"type": "string", "maxLength": MaxContentChars},
				"timestamp": tTimestamp,
			}, "id", "role", "content", "timestamp")),
		}, "session_key", "count", "total_in_session", "messages"),
	},
	{
		name: AttachmentsFetch,
		description: `List non-text attachments for a message in a conversation.

Extracts images, media files, and other non-text content blocks
from the specified message.

Args:
    session_key: The session key from conversations_list
    message_id: The message ID from messages_read`,
		input: obj(schema{
			"session_key": str("The session key from conversations_list"),
			"message_id":  str("The message ID from messages_read"),
		}, "session_key", "message_id"),
		output: obj(schema{
			"message_id": tStr,
			"count":      tInt,
			"attachments": list(schema{
				"type": "object",
				"properties": schema{
					"type": schema{"type": "string", "description": "image (with url), media (with path), or the type of another non-text part (with data)"},
					"url":  tStr, "path": tStr, "data": schema{"type": "object"},
				},
				"required": []string{"type"},
			}),
		}, "message_id", "count", "attachments"),
	},
	{
		name: EventsPoll,
		description: `Poll for new conversation events since a cursor position.

Returns events that have occurred since the given cursor. Use the
returned next_cursor value for subsequent polls.

Event types: message, approval_requested, approval_resolved

Args:
    after_cursor: Return events after this cursor (0 for all)
    session_key: Optional filter to one conversation
    limit: Maximum events to return (default 20)`,
		input: obj(schema{
			"after_cursor": integer("Return events after this cursor (0 for all)", 0, 0, MaxCursor),
			"session_key":  optStr("Optional filter to one conversation"),
			"limit":        integer("Maximum events to return (default 20, clamped to 1..200)", DefaultEventsLimit, 1, MaxEventsLimit),
		}),
		output: obj(schema{"events": list(tEvent), "next_cursor": tInt}, "events", "next_cursor"),
	},
	{
		name: EventsWait,
		description: `Wait for the next conversation event (long-poll).

Blocks until a matching event arrives or the timeout expires.
Use this for near-real-time event delivery without polling.

Args:
    after_cursor: Wait for events after this cursor
    session_key: Optional filter to one conversation
    timeout_ms: Maximum wait time in milliseconds (default 30000)`,
		input: obj(schema{
			"after_cursor": integer("Wait for events after this cursor", 0, 0, MaxCursor),
			"session_key":  optStr("Optional filter to one conversation"),
			"timeout_ms":   integer("Maximum wait time in milliseconds (default 30000, at most 300000)", DefaultTimeoutMS, 0, MaxTimeoutMS),
		}),
		output: obj(schema{
			"event":  schema{"anyOf": []schema{tEvent, {"type": "null"}}},
			"reason": schema{"type": "string", "enum": []string{"timeout"}},
		}, "event"),
	},
	{
		name: MessagesSend,
		description: `Send a message to a platform conversation.

The target format is "platform:chat_id" — same format used by the
channels_list tool. You can also use human-friendly channel names
that will be resolved automatically.

Examples:
    target="telegram:6308981865"
    target="discord:#general"
    target="slack:#engineering"

Args:
    target: Platform target in "platform:identifier" format
    message: The message text to send`,
		input: obj(schema{
			"target":  str(`Platform target in "platform:identifier" format`),
			"message": str("The message text to send"),
		}, "target", "message"),
		output: obj(schema{
			"success": schema{"type": "boolean"}, "platform": tStr, "chat_id": tStr, "message_id": tStr,
		}, "success", "platform", "chat_id", "message_id"),
	},
	{
		name: ChannelsList,
		description: `List available messaging channels and targets across platforms.

Returns channels that you can send messages to. The target strings
returned here can be used directly with the messages_send tool.

Args:
    platform: Filter by platform name (telegram, discord, slack, etc.)`,
		input: obj(schema{"platform": optStr("Filter by platform name (telegram, discord, slack, etc.), case-insensitive")}),
		output: obj(schema{
			"count": tInt,
			"channels": list(obj(schema{"target": tStr, "platform": tStr, "name": tStr, "chat_type": tStr},
				"target", "platform", "name", "chat_type")),
		}, "count", "channels"),
	},
	{
		name: PermissionsListOpen,
		description: `List pending approval requests observed during this bridge session.

Returns exec and plugin approval requests that the bridge has seen
since it started. Approvals are live-session only — older approvals
from before the bridge connected are not included.`,
		input: obj(schema{}),
		output: obj(schema{
			"count": tInt,
			"approvals": list(obj(schema{
				"id": tStr, "kind": schema{"type": "string", "description": "exec or plugin"},
				"description": tStr, "session_key": tStr, "created_at": schema{"type": "number"},
			}, "id", "kind", "description", "session_key", "created_at")),
		}, "count", "approvals"),
	},
	{
		name: PermissionsRespond,
		description: `Respond to a pending approval request.

Args:
    id: The approval ID from permissions_list_open
    decision: One of "allow-once", "allow-always", or "deny"`,
		input: obj(schema{
			"id":       str("The approval ID from permissions_list_open"),
			"decision": schema{"type": "string", "enum": []string{"allow-once", "allow-always", "deny"}, "description": `One of "allow-once", "allow-always", or "deny"`},
		}, "id", "decision"),
		output: obj(schema{
			"resolved": schema{"type": "boolean"}, "approval_id": tStr,
			"decision": schema{"type": "string", "enum": []string{"allow-once", "allow-always", "deny"}},
		}, "resolved", "approval_id", "decision"),
	},
}
