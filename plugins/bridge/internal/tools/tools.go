package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/send"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/store"
)

// Events is the bridge's event queue as the event tools use it. Each event
// is one JSON object: "cursor", "type" and "session_key" first, then the
// fields of its type (for a message: role, content of at most 500
// characters, timestamp as text, message_id), in the order the events layer
// writes them; the tools pass events through unchanged.
type Events interface {
	// Poll returns up to limit events with a cursor greater than after,
	// only those of sessionKey when it is not "", oldest first, and the
	// cursor of the last one returned (after when none).
	Poll(after int64, sessionKey string, limit int) (events []json.RawMessage, next int64)
	// Wait returns the first such event, waiting up to timeout for one;
	// a nil event and a nil error mean the timeout passed. It returns the
	// context's error when ctx ends first.
	Wait(ctx context.Context, after int64, sessionKey string, timeout time.Duration) (json.RawMessage, error)
}

// Recorder records a message messages_send delivered, into state.db, so it
// shows up in messages_read and as a message event. It is called after a
// complete delivery only; an error is passed to Tools.Logf and does not
// change the tool's result (the message was sent).
type Recorder interface {
	RecordSent(ctx context.Context, target, text string, res *send.Result) error
}

// Tools runs the ten tools. Store is required by every tool but the event
// tools and messages_send; a nil Sender makes messages_send answer "Send
// message tool not available"; nil Events make events_poll return no
// events and events_wait time out at once; Recorder and Logf are optional.
// A Tools is safe for concurrent use when its fields are.
type Tools struct {
	Store    *store.Store
	Sender   *send.Sender
	Events   Events
	Recorder Recorder
	// Logf receives problems that do not change a tool's result, such as
	// a failed Recorder; nil discards them.
	Logf func(format string, args ...any)
}

// Result is the outcome of a tool call.
type Result struct {
	// Text is the JSON text the original returned, the call's text
	// content.
	Text string
	// Structured is the same JSON as the call's structured content,
	// conforming to the tool's output schema; nil when IsError.
	Structured json.RawMessage
	// IsError is true for the original's error dicts ({"error": ...}).
	IsError bool
}

// ErrUnknownTool matches the error of Call for a name that is not one of
// the ten tools.
var ErrUnknownTool = errors.New("unknown tool")

// Call runs the tool name with args, a JSON object (empty or null for no
// arguments). Failures the original reported as {"error": ...} are a
// Result with IsError; the error return is for an unknown tool, arguments
// that are not a JSON object, and a context that ended.
func (t *Tools) Call(ctx context.Context, name string, args json.RawMessage) (*Result, error) {
	a, err := parseArgs(args)
	if err != nil {
		return nil, fmt.Errorf("%s: arguments %.80q: %w", name, args, err)
	}
	var res *Result
	switch name {
	case ConversationsList:
		res, err = t.conversationsList(ctx, a)
	case ConversationGet:
		res, err = t.conversationGet(ctx, a)
	case MessagesRead:
		res, err = t.messagesRead(ctx, a)
	case AttachmentsFetch:
		res, err = t.attachmentsFetch(ctx, a)
	case EventsPoll:
		res, err = t.eventsPoll(a)
	case EventsWait:
		res, err = t.eventsWait(ctx, a)
	case MessagesSend:
		res, err = t.messagesSend(ctx, a)
	case ChannelsList:
		res, err = t.channelsList(ctx, a)
	case PermissionsListOpen:
		res, err = t.permissionsListOpen(ctx)
	case PermissionsRespond:
		res, err = t.permissionsRespond(ctx, a)
	default:
		return nil, fmt.Errorf("%w %q; the tools are %s", ErrUnknownTool, name, strings.Join(Names(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

// Names returns the names of the ten tools in the original's order.
func Names() []string {
	out := make([]string, len(definitions))
	for i, d := range definitions {
		out[i] = d.name
	}
	return out
}

// args are a call's arguments by name.
type args map[string]json.RawMessage

func parseArgs(raw json.RawMessage) (args, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return args{}, nil
	}
	var a args
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if a == nil {
		a = args{}
	}
	return a, nil
}

// str returns a string argument, a number as its text; absent, null and
// other values are "" (the original's None and falsy values).
func (a args) str(name string) string {
	var s string
	if json.Unmarshal(a[name], &s) == nil {
		return s
	}
	// A number where a string is expected ("message_id": 4) is its
	// decimal text, as the original's str() makes it; other types are "".
	d := json.NewDecoder(bytes.NewReader(a[name]))
	d.UseNumber()
	var n json.Number
	if d.Decode(&n) == nil {
		return n.String()
	}
	return ""
}

// coerceInt is the original's _coerce_int: the argument as Python's int()
// reads it (an integer, a float truncated toward zero, a bool, or a
// string of decimal digits with an optional sign, surrounding whitespace
// and single underscores between digits), def when int() would fail
// (absent, null, "abc", "3.5", objects), then clamped to [minimum,
// maximum].
func (a args) coerceInt(name string, def, minimum, maximum int64) int64 {
	v, ok := pyInt(a[name])
	if !ok {
		v = big.NewInt(def)
	}
	if v.Cmp(big.NewInt(minimum)) < 0 {
		return minimum
	}
	if v.Cmp(big.NewInt(maximum)) > 0 {
		return maximum
	}
	return v.Int64()
}

func pyInt(raw json.RawMessage) (*big.Int, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	switch raw[0] {
	case 't':
		return big.NewInt(1), string(raw) == "true"
	case 'f':
		return big.NewInt(0), string(raw) == "false"
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		return pyIntString(s)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		lit := string(raw)
		if !strings.ContainsAny(lit, ".eE") {
			n, ok := new(big.Int).SetString(lit, 10)
			return n, ok
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		n, _ := big.NewFloat(math.Trunc(f)).Int(nil)
		return n, true
	}
	return nil, false
}

// pyIntString reads s as Python's int(s) does for base 10.
func pyIntString(s string) (*big.Int, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	sign := ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[:1], s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return nil, false
	}
	digits := strings.ReplaceAll(s, "_", "")
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	n, ok := new(big.Int).SetString(sign+digits, 10)
	return n, ok
}

// success encodes v with indent=2, as the original's results.
func success(v any) (*Result, error) {
	text, err := dumps(v, 2)
	if err != nil {
		return nil, err
	}
	structured, err := dumps(v, 0)
	if err != nil {
		return nil, err
	}
	return &Result{Text: text, Structured: json.RawMessage(structured)}, nil
}

// failure is the original's simple error dict, dumped without indent.
func failure(msg string) (*Result, error) {
	text, err := dumps(object{{"error", msg}}, 0)
	if err != nil {
		return nil, err
	}
	return &Result{Text: text, IsError: true}, nil
}

// sessions returns the session index; like the original, an index that
// cannot be read is an empty one.
func (t *Tools) sessions(ctx context.Context) []store.Entry {
	if t.Store == nil {
		return nil
	}
	entries, _, err := t.Store.Sessions(ctx)
	if err != nil {
		t.logf("session index: %v", err)
		return nil
	}
	return entries
}

func (t *Tools) session(ctx context.Context, key string) (store.Entry, bool) {
	for _, e := range t.sessions(ctx) {
		if e.SessionKey == key {
			return e, true
		}
	}
	return store.Entry{}, false
}

func (t *Tools) logf(format string, args ...any) {
	if t.Logf != nil {
		t.Logf(format, args...)
	}
}

func platformOf(e store.Entry) string {
	if e.Platform != "" {
		return e.Platform
	}
	return e.Origin.Platform
}

func chatTypeOf(e store.Entry) string {
	if e.ChatType != "" {
		return e.ChatType
	}
	return e.Origin.ChatType
}

func (t *Tools) conversationsList(ctx context.Context, a args) (*Result, error) {
	limit := a.coerceInt("limit", DefaultListLimit, 1, MaxListLimit)
	platform, search := a.str("platform"), strings.ToLower(a.str("search"))
	type conv struct {
		updated string
		obj     object
	}
	var convs []conv
	for _, e := range t.sessions(ctx) {
		p := platformOf(e)
		if platform != "" && strings.ToLower(p) != strings.ToLower(platform) {
			continue
		}
		if search != "" && !strings.Contains(strings.ToLower(e.DisplayName), search) &&
			!strings.Contains(strings.ToLower(e.Origin.ChatName), search) &&
			!strings.Contains(strings.ToLower(e.SessionKey), search) {
			continue
		}
		convs = append(convs, conv{e.UpdatedAt, object{
			{"session_key", e.SessionKey},
			{"session_id", e.SessionID},
			{"platform", p},
			{"chat_type", chatTypeOf(e)},
			{"display_name", e.DisplayName},
			{"chat_name", e.Origin.ChatName},
			{"user_name", e.Origin.UserName},
			{"updated_at", e.UpdatedAt},
		}})
	}
	// Python's sort(reverse=True) is stable: equal keys keep their order.
	sort.SliceStable(convs, func(i, j int) bool { return convs[i].updated > convs[j].updated })
	if int64(len(convs)) > limit {
		convs = convs[:limit]
	}
	list := make([]any, len(convs))
	for i, c := range convs {
		list[i] = c.obj
	}
	return success(object{{"count", len(list)}, {"conversations", list}})
}

func (t *Tools) conversationGet(ctx context.Context, a args) (*Result, error) {
	key := a.str("session_key")
	e, ok := t.session(ctx, key)
	if !ok {
		return failure("Conversation not found: " + key)
	}
	var thread any
	if e.Origin.ThreadID != nil {
		thread = *e.Origin.ThreadID
	}
	return success(object{
		{"session_key", key},
		{"session_id", e.SessionID},
		{"platform", platformOf(e)},
		{"chat_type", chatTypeOf(e)},
		{"display_name", e.DisplayName},
		{"user_name", e.Origin.UserName},
		{"chat_name", e.Origin.ChatName},
		{"chat_id", e.Origin.ChatID},
		{"thread_id", thread},
		{"updated_at", e.UpdatedAt},
		{"created_at", e.CreatedAt},
		{"input_tokens", e.InputTokens},
		{"output_tokens", e.OutputTokens},
		{"total_tokens", e.TotalTokens},
	})
}

// loadMessages finds the session of key and reads its messages, or returns
// the original's error result.
func (t *Tools) loadMessages(ctx context.Context, key string) ([]store.Message, *Result, error) {
	e, ok := t.session(ctx, key)
	if !ok {
		res, err := failure("Conversation not found: " + key)
		return nil, res, err
	}
	if e.SessionID == "" {
		res, err := failure("No session ID for this conversation")
		return nil, res, err
	}
	if t.Store == nil {
		res, err := failure("Session database unavailable")
		return nil, res, err
	}
	msgs, err := t.Store.Messages(ctx, e.SessionID)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if errors.Is(err, store.ErrNoDatabase) {
			res, err := failure("Session database unavailable")
			return nil, res, err
		}
		res, err := failure("Failed to read messages: " + err.Error())
		return nil, res, err
	}
	return msgs, nil, nil
}

// truncate cuts s to at most n characters (code points, as Python slices).
func truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func (t *Tools) messagesRead(ctx context.Context, a args) (*Result, error) {
	limit := a.coerceInt("limit", DefaultListLimit, 1, MaxListLimit)
	key := a.str("session_key")
	msgs, res, err := t.loadMessages(ctx, key)
	if res != nil || err != nil {
		return res, err
	}
	filtered := []any{}
	for _, m := range msgs {
		if !m.Conversational() {
			continue
		}
		filtered = append(filtered, object{
			{"id", strconv.FormatInt(m.ID, 10)},
			{"role", m.Role},
			{"content", truncate(m.Text, MaxContentChars)},
			{"timestamp", m.Timestamp},
		})
	}
	last := filtered
	if int64(len(last)) > limit {
		last = last[int64(len(last))-limit:]
	}
	return success(object{
		{"session_key", key},
		{"count", len(last)},
		{"total_in_session", len(filtered)},
		{"messages", last},
	})
}

func (t *Tools) attachmentsFetch(ctx context.Context, a args) (*Result, error) {
	key, id := a.str("session_key"), a.str("message_id")
	msgs, res, err := t.loadMessages(ctx, key)
	if res != nil || err != nil {
		return res, err
	}
	var found *store.Message
	for i := range msgs {
		if strconv.FormatInt(msgs[i].ID, 10) == id {
			found = &msgs[i]
			break
		}
	}
	if found == nil {
		return failure("Message not found: " + id)
	}
	list := []any{}
	for _, att := range store.Attachments(*found) {
		o := object{{"type", att.Type}}
		switch {
		case att.Data != nil:
			o = append(o, member{"data", att.Data})
		case att.Type == "media":
			o = append(o, member{"path", att.Path})
		default:
			o = append(o, member{"url", att.URL})
		}
		list = append(list, o)
	}
	return success(object{{"message_id", id}, {"count", len(list)}, {"attachments", list}})
}

func (t *Tools) eventsPoll(a args) (*Result, error) {
	after := a.coerceInt("after_cursor", 0, 0, MaxCursor)
	limit := a.coerceInt("limit", DefaultEventsLimit, 1, MaxEventsLimit)
	key := a.str("session_key")
	events, next := []json.RawMessage(nil), after
	if t.Events != nil {
		events, next = t.Events.Poll(after, key, int(limit))
	}
	list := make([]any, len(events))
	for i, ev := range events {
		list[i] = ev
	}
	return success(object{{"events", list}, {"next_cursor", next}})
}

func (t *Tools) eventsWait(ctx context.Context, a args) (*Result, error) {
	after := a.coerceInt("after_cursor", 0, 0, MaxCursor)
	timeout := time.Duration(a.coerceInt("timeout_ms", DefaultTimeoutMS, 0, MaxTimeoutMS)) * time.Millisecond
	key := a.str("session_key")
	var ev json.RawMessage
	if t.Events != nil {
		var err error
		if ev, err = t.Events.Wait(ctx, after, key, timeout); err != nil {
			return nil, fmt.Errorf("wait for an event after cursor %d: %w", after, err)
		}
	}
	if ev == nil {
		// Not an error dict: the original dumps it with indent=2.
		return success(object{{"event", nil}, {"reason", "timeout"}})
	}
	return success(object{{"event", ev}})
}

func (t *Tools) messagesSend(ctx context.Context, a args) (*Result, error) {
	target, message := a.str("target"), a.str("message")
	if target == "" || message == "" {
		return failure("Both target and message are required")
	}
	if t.Sender == nil {
		return failure("Send message tool not available")
	}
	res, err := t.Sender.Send(ctx, target, message)
	if err != nil {
		return failure("Send failed: " + err.Error())
	}
	if t.Recorder != nil {
		if err := t.Recorder.RecordSent(ctx, target, message, res); err != nil {
			t.logf("record the message sent to %s: %v", target, err)
		}
	}
	// The original returned send_message_tool's JSON, dumped without
	// indent.
	v := object{{"success", true}, {"platform", res.Platform}, {"chat_id", res.ChatID}, {"message_id", res.MessageID()}}
	text, err := dumps(v, 0)
	if err != nil {
		return nil, err
	}
	return &Result{Text: text, Structured: json.RawMessage(text)}, nil
}

func (t *Tools) channelsList(ctx context.Context, a args) (*Result, error) {
	list := []any{}
	if t.Store != nil {
		chans, err := t.Store.Channels(ctx, a.str("platform"))
		if err != nil {
			t.logf("channels: %v", err)
		}
		for _, c := range chans {
			list = append(list, object{{"target", c.Target}, {"platform", c.Platform}, {"name", c.Name}, {"chat_type", c.ChatType}})
		}
	}
	return success(object{{"count", len(list)}, {"channels", list}})
}

func (t *Tools) permissionsListOpen(ctx context.Context) (*Result, error) {
	list := []any{}
	if t.Store != nil {
		open, err := t.Store.OpenApprovals(ctx)
		if err != nil && !errors.Is(err, store.ErrNoDatabase) {
			t.logf("open approvals: %v", err)
		}
		for _, ap := range open {
			list = append(list, object{
				{"id", ap.ID}, {"kind", ap.Kind}, {"description", ap.Description},
				{"session_key", ap.SessionKey}, {"created_at", ap.CreatedAt},
			})
		}
	}
	return success(object{{"count", len(list)}, {"approvals", list}})
}

func (t *Tools) permissionsRespond(ctx context.Context, a args) (*Result, error) {
	id, decision := a.str("id"), a.str("decision")
	if err := store.ValidateDecision(decision); err != nil {
		return failure(err.Error())
	}
	var err error
	if t.Store == nil {
		err = &store.NotFoundError{ID: id}
	} else if _, err = t.Store.Respond(ctx, id, decision); errors.Is(err, store.ErrNoDatabase) {
		// No state.db, no approvals: the original found none to pop.
		err = &store.NotFoundError{ID: id}
	}
	var nf *store.NotFoundError
	switch {
	case err == nil:
		return success(object{{"resolved", true}, {"approval_id", id}, {"decision", decision}})
	case errors.As(err, &nf):
		// The original dumps this error dict with indent=2, unlike the
		// others: it comes from the bridge's respond_to_approval.
		text, err := dumps(object{{"error", nf.Error()}}, 2)
		if err != nil {
			return nil, err
		}
		return &Result{Text: text, IsError: true}, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return failure(fmt.Sprintf("Failed to record the decision: %v", err))
}
