package send

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// The platforms this package delivers to, as written in a target.
const (
	Telegram = "telegram"
	Discord  = "discord"
	Slack    = "slack"
)

// Platforms lists the platforms this package delivers to, in the order they
// are named in errors.
var Platforms = []string{Telegram, Discord, Slack}

// MaxTargetLen bounds the length of a target in bytes; longer ones are
// malformed.
const MaxTargetLen = 512

// Errors of target parsing. Each error returned by [ParseTarget] wraps one of
// them together with the target that failed.
var (
	// ErrMalformedTarget: the target is not "platform:chat" in any form this
	// package reads.
	ErrMalformedTarget = errors.New("malformed target")
	// ErrUnknownPlatform: the platform part names no platform of [Platforms].
	ErrUnknownPlatform = errors.New("unknown platform")
	// ErrUnresolved: the target names a channel the directory does not know.
	ErrUnresolved = errors.New("channel not found")
)

// Directory resolves a channel name to a chat id: the channel directory
// (channel_directory.json) of the messaging gateway. Resolve gets the name as
// the user wrote it after "platform:" (for example "#general" or "Alice"), so
// it should match with or without a leading '#'. The chat id it returns may
// carry a thread as "chat_id:thread_id", in the forms [ParseTarget] reads.
type Directory interface {
	Resolve(platform, name string) (chatID string, ok bool)
}

// Target is where a message goes: a chat (channel, group or direct
// conversation) on a platform, optionally a thread in it.
type Target struct {
	// Platform is one of [Platforms].
	Platform string
	// ChatID is the platform's id of the chat: a Telegram chat id
	// ("123456", "-1001234567890"), a Discord channel snowflake, a Slack
	// conversation id ("C1234", "G…", "D…") or a Slack user id ("U…",
	// "W…": a direct message, see [SlackUserID]).
	ChatID string
	// ThreadID is empty, or a Telegram forum topic (message_thread_id), a
	// Discord thread (a channel id of its own) or a Slack thread's parent
	// timestamp (thread_ts).
	ThreadID string
	// Name is the channel name the target was resolved from through a
	// [Directory], or empty when the target named the chat by id.
	Name string
}

// String returns the target in the form ParseTarget reads by id:
// "platform:chat_id" or "platform:chat_id:thread_id".
func (t Target) String() string {
	if t.ThreadID != "" {
		return t.Platform + ":" + t.ChatID + ":" + t.ThreadID
	}
	return t.Platform + ":" + t.ChatID
}

// Compiled on first use, not when the plugin starts.
var (
	// Telegram chat ids are integers (negative for groups and channels);
	// ":topic" addresses a forum topic.
	telegramRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(-?[0-9]{1,20})(?::([0-9]{1,20}))?$`) })
	// Discord ids are snowflakes; ":thread" addresses a thread of the channel.
	discordRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]{1,20})(?::([0-9]{1,20}))?$`) })
	// Slack conversation ids: C (public channel), G (private channel or group
	// DM), D (direct message); ":ts" addresses the thread of that message.
	// A user id (U, or W in Enterprise Grid) is a direct message to that
	// user, opened when sending (see SlackUserID).
	slackRef = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([CGD][A-Z0-9]{1,30}|[UW][A-Z0-9]{1,30})(?::([0-9]{1,20}(?:\.[0-9]{1,20})?))?$`)
	})
)

// ParseTarget reads a delivery target:
//
//	telegram:123456             a chat by id
//	telegram:-1001234567890:17  a forum topic of a group
//	discord:987654321           a channel by id
//	discord:987654321:555       a thread of that channel
//	slack:C1234                 a conversation by id
//	slack:C1234:1712345678.0001 a thread of that conversation
//	slack:U0123ABCD             a direct message to a user
//	discord:#general            a channel by name, through dir
//
// The platform is case-insensitive. A part after "platform:" that is not an
// id of that platform is a channel name, resolved through dir (which may be
// nil: then names are not accepted). A bare "platform" (the original's home
// channel) is refused: the bridge has no home channel to send to.
func ParseTarget(target string, dir Directory) (Target, error) {
	if len(target) > MaxTargetLen {
		return Target{}, fmt.Errorf("target %.40q…: %w: longer than %d bytes", target, ErrMalformedTarget, MaxTargetLen)
	}
	trimmed := strings.TrimSpace(target)
	if trimmed == "" {
		return Target{}, fmt.Errorf("%w: empty target; want \"platform:chat_id\"", ErrMalformedTarget)
	}
	if strings.IndexFunc(trimmed, unicode.IsControl) >= 0 {
		return Target{}, fmt.Errorf("target %q: %w: it holds control characters", target, ErrMalformedTarget)
	}
	name, ref, hasRef := strings.Cut(trimmed, ":")
	platform := strings.ToLower(strings.TrimSpace(name))
	if platform == "" {
		return Target{}, fmt.Errorf("target %q: %w: no platform before ':'; want \"platform:chat_id\"", target, ErrMalformedTarget)
	}
	if !known(platform) {
		return Target{}, fmt.Errorf("target %q: %w %q; messages can be sent to %s", target, ErrUnknownPlatform, platform, strings.Join(Platforms, ", "))
	}
	ref = strings.TrimSpace(ref)
	if !hasRef || ref == "" {
		return Target{}, fmt.Errorf("target %q: %w: no chat; want \"%s:<chat_id>\" or \"%s:#<channel name>\"", target, ErrMalformedTarget, platform, platform)
	}
	if t, ok := parseRef(platform, ref); ok {
		return t, nil
	}
	if dir == nil {
		return Target{}, fmt.Errorf("target %q: %w: %q is not a %s chat id and there is no channel directory to look names up in", target, ErrUnresolved, ref, platform)
	}
	id, ok := dir.Resolve(platform, ref)
	if !ok {
		return Target{}, fmt.Errorf("target %q: %w: could not resolve %q on %s; channels_list shows the known targets", target, ErrUnresolved, ref, platform)
	}
	t, ok := parseRef(platform, strings.TrimSpace(id))
	if !ok {
		return Target{}, fmt.Errorf("target %q: %w: the channel directory maps %q to %q, which is not a %s chat id", target, ErrUnresolved, ref, id, platform)
	}
	t.Name = ref
	return t, nil
}

// parseRef reads the part after "platform:" as a chat id, with an optional
// thread, in the forms of the platform.
func parseRef(platform, ref string) (Target, bool) {
	var re *regexp.Regexp
	switch platform {
	case Telegram:
		re = telegramRef()
	case Discord:
		re = discordRef()
	case Slack:
		re = slackRef()
	default:
		return Target{}, false
	}
	m := re.FindStringSubmatch(ref)
	if m == nil {
		return Target{}, false
	}
	return Target{Platform: platform, ChatID: m[1], ThreadID: m[2]}, true
}

// SlackUserID reports whether id is a Slack user id (U…, W…) rather than a
// conversation id: chat.postMessage does not take one, so a message to it
// goes to the direct-message conversation that conversations.open returns.
func SlackUserID(id string) bool {
	return len(id) > 1 && (id[0] == 'U' || id[0] == 'W')
}

func known(platform string) bool {
	for _, p := range Platforms {
		if p == platform {
			return true
		}
	}
	return false
}
