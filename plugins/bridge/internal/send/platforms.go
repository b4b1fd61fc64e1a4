package send

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// telegramAnswer is the Bot API's answer envelope.
type telegramAnswer struct {
	OK     bool `json:"ok"`
	Result struct {
		MessageID int64 `json:"message_id"`
	} `json:"result"`
	ErrorCode   int    `json:"error_code"`
	Description string `json:"description"`
	Parameters  struct {
		RetryAfter      *float64 `json:"retry_after"`
		MigrateToChatID int64    `json:"migrate_to_chat_id"`
	} `json:"parameters"`
}

// sendTelegram calls sendMessage. The General topic of a forum ("1") is
// addressed without message_thread_id, which the Bot API refuses for it; a
// topic the API does not find is dropped and the message sent to the chat.
func (p *platform) sendTelegram(ctx context.Context, s *Sender, t Target, text string) (string, time.Duration, error) {
	payload := map[string]any{"text": text}
	if id, err := strconv.ParseInt(t.ChatID, 10, 64); err == nil {
		payload["chat_id"] = id
	} else {
		payload["chat_id"] = t.ChatID
	}
	topic := t.ThreadID != "" && t.ThreadID != "1"
	if topic {
		if id, err := strconv.ParseInt(t.ThreadID, 10, 64); err == nil {
			payload["message_thread_id"] = id
		} else {
			payload["message_thread_id"] = t.ThreadID
		}
	}
	endpoint := p.base + "/bot" + url.PathEscape(p.token) + "/sendMessage"
	shown := p.base + "/bot<redacted>/sendMessage"
	r, err := s.post(ctx, p, endpoint, shown, nil, payload)
	if err != nil {
		return "", 0, fmt.Errorf("telegram: %w", err)
	}
	var a telegramAnswer
	jsonErr := json.Unmarshal(r.body, &a)
	if r.status == http.StatusTooManyRequests {
		wait, ok := retryAfterField(jsonErr, a.Parameters.RetryAfter)
		if !ok {
			if wait, ok = headerRetryAfter(r.header); !ok {
				wait = DefaultRetryAfter
			}
		}
		return "", wait, p.rateLimited(wait, a.Description)
	}
	if jsonErr == nil && a.OK && r.status/100 == 2 {
		return strconv.FormatInt(a.Result.MessageID, 10), 0, nil
	}
	if jsonErr != nil || a.OK {
		if r.status/100 == 2 {
			return "", 0, fmt.Errorf("telegram: %w: HTTP %d, not a Bot API answer: %s", ErrPlatform, r.status, p.bodyDetail(r))
		}
		return "", 0, p.httpError(r, "")
	}
	if topic && r.status == http.StatusBadRequest && strings.Contains(strings.ToLower(a.Description), "thread not found") {
		t.ThreadID = ""
		return p.sendTelegram(ctx, s, t, text)
	}
	if to := a.Parameters.MigrateToChatID; to != 0 {
		return "", 0, fmt.Errorf("telegram: %w: HTTP %d, %s: the group is now chat %d; send to telegram:%d", ErrPlatform, r.status, p.detail(a.Description), to, to)
	}
	if r.status/100 == 2 {
		r.status = a.ErrorCode
	}
	return "", 0, p.httpError(r, a.Description)
}

// retryAfterField reads a retry_after of a JSON answer, in seconds.
func retryAfterField(jsonErr error, secs *float64) (time.Duration, bool) {
	if jsonErr != nil || secs == nil {
		return 0, false
	}
	return seconds(*secs), true
}

// discordAnswer is a Discord API answer: a message, an error or a rate
// limit.
type discordAnswer struct {
	ID         string   `json:"id"`
	Message    string   `json:"message"`
	Code       int      `json:"code"`
	RetryAfter *float64 `json:"retry_after"`
}

// discordUserAgent is the User-Agent form Discord asks bots to send.
const discordUserAgent = "DiscordBot (https://github.com/hermes-agent/hermes, 1)"

// sendDiscord creates a message in the channel, or in the thread (a channel
// of its own) when the target names one.
func (p *platform) sendDiscord(ctx context.Context, s *Sender, t Target, text string) (string, time.Duration, error) {
	channel := t.ChatID
	if t.ThreadID != "" {
		channel = t.ThreadID
	}
	endpoint := p.base + "/api/v10/channels/" + url.PathEscape(channel) + "/messages"
	header := http.Header{
		"Authorization": {"Bot " + p.token},
		"User-Agent":    {discordUserAgent},
	}
	r, err := s.post(ctx, p, endpoint, endpoint, header, map[string]any{"content": text})
	if err != nil {
		return "", 0, fmt.Errorf("discord: %w", err)
	}
	var a discordAnswer
	jsonErr := json.Unmarshal(r.body, &a)
	if r.status == http.StatusTooManyRequests {
		wait, ok := retryAfterField(jsonErr, a.RetryAfter)
		if !ok {
			if wait, ok = headerRetryAfter(r.header); !ok {
				wait = DefaultRetryAfter
			}
		}
		return "", wait, p.rateLimited(wait, a.Message)
	}
	if r.status/100 == 2 {
		if jsonErr != nil || a.ID == "" {
			return "", 0, fmt.Errorf("discord: %w: HTTP %d, no message id in %s", ErrPlatform, r.status, p.bodyDetail(r))
		}
		return a.ID, 0, nil
	}
	msg := ""
	if jsonErr == nil && a.Message != "" {
		msg = a.Message
		if a.Code != 0 {
			msg = fmt.Sprintf("%s (code %d)", a.Message, a.Code)
		}
	}
	return "", 0, p.httpError(r, msg)
}

// slackAnswer is the Web API's answer envelope.
type slackAnswer struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// sendSlack calls chat.postMessage, in the thread when the target names one.
func (p *platform) sendSlack(ctx context.Context, s *Sender, t Target, text string) (string, time.Duration, error) {
	payload := map[string]any{"channel": t.ChatID, "text": text}
	if t.ThreadID != "" {
		payload["thread_ts"] = t.ThreadID
	}
	var out struct {
		TS string `json:"ts"`
	}
	wait, err := p.slackCall(ctx, s, "chat.postMessage", payload, &out)
	return out.TS, wait, err
}

// openSlackDM calls conversations.open for a user id and returns the id of
// the direct-message conversation with that user.
func (p *platform) openSlackDM(ctx context.Context, s *Sender, user string) (string, time.Duration, error) {
	var out struct {
		Channel struct {
			ID string `json:"id"`
		} `json:"channel"`
	}
	wait, err := p.slackCall(ctx, s, "conversations.open", map[string]any{"users": user}, &out)
	if err == nil && out.Channel.ID == "" {
		err = fmt.Errorf("slack: %w: conversations.open for %s named no conversation", ErrPlatform, user)
	}
	return out.Channel.ID, wait, err
}

// slackCall calls a Web API method and decodes a successful answer into out.
// Slack answers most errors with HTTP 200 and "ok": false.
func (p *platform) slackCall(ctx context.Context, s *Sender, method string, payload, out any) (time.Duration, error) {
	endpoint := p.base + "/api/" + method
	header := http.Header{"Authorization": {"Bearer " + p.token}}
	r, err := s.post(ctx, p, endpoint, endpoint, header, payload)
	if err != nil {
		return 0, fmt.Errorf("slack: %w", err)
	}
	var a slackAnswer
	jsonErr := json.Unmarshal(r.body, &a)
	if r.status == http.StatusTooManyRequests || (jsonErr == nil && a.Error == "ratelimited") {
		wait, ok := headerRetryAfter(r.header)
		if !ok {
			wait = DefaultRetryAfter
		}
		return wait, p.rateLimited(wait, a.Error)
	}
	if jsonErr != nil {
		if r.status/100 == 2 {
			return 0, fmt.Errorf("slack: %w: HTTP %d, not a Web API answer: %s", ErrPlatform, r.status, p.bodyDetail(r))
		}
		return 0, p.httpError(r, "")
	}
	if a.OK && r.status/100 == 2 {
		if err := json.Unmarshal(r.body, out); err != nil {
			return 0, fmt.Errorf("slack: %w: %s answer: %v", ErrPlatform, method, err)
		}
		return 0, nil
	}
	switch a.Error {
	case "invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive":
		r.status = http.StatusUnauthorized
	case "not_in_channel", "restricted_action", "missing_scope", "no_permission", "ekm_access_denied":
		r.status = http.StatusForbidden
	}
	if a.Error == "" {
		a.Error = "unknown error"
	}
	if r.status/100 == 2 {
		return 0, fmt.Errorf("slack: %w: Slack API error %s", ErrPlatform, p.detail(a.Error))
	}
	return 0, p.httpError(r, "Slack API error "+a.Error)
}
