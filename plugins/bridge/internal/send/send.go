// Package send delivers a text message to a messaging platform through its
// HTTP API: Telegram (Bot API sendMessage), Discord (bot REST API, create
// message) and Slack (Web API chat.postMessage).
//
// It owns target parsing ("platform:chat_id", a thread, or a channel name
// looked up in a [Directory]), the platforms' length limits (a long text is
// split on line boundaries and sent as several messages, in order), their
// rate limits (429 with a retry-after, honoured within a bound) and the
// wording of their errors. Credentials come from the caller (the values of
// $HERMES_HOME/.env); a token is never logged nor put in an error.
//
// It does not read files, record the sent message anywhere or format
// markdown: the text is sent as plain text. It uses the standard library only.
package send

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The environment variables (keys of .env) holding each platform's bot token.
const (
	TelegramTokenVar = "TELEGRAM_BOT_TOKEN"
	DiscordTokenVar  = "DISCORD_BOT_TOKEN"
	SlackTokenVar    = "SLACK_BOT_TOKEN"
)

// The platforms' API base URLs, used when the Sender sets none.
const (
	DefaultTelegramBaseURL = "https://api.telegram.org"
	DefaultDiscordBaseURL  = "https://discord.com"
	DefaultSlackBaseURL    = "https://slack.com"
)

// Defaults of a zero Sender.
const (
	// DefaultTimeout bounds one HTTP request to a platform.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRetries is how many times one message is sent again after a
	// 429 answer.
	DefaultMaxRetries = 3
	// DefaultMaxRetryWait bounds the total time spent waiting out 429
	// answers for one message. A retry-after that would go past it is not
	// waited for: the send fails at once with [ErrRateLimited].
	DefaultMaxRetryWait = 30 * time.Second
	// DefaultRetryAfter is the wait after a 429 answer that names none.
	DefaultRetryAfter = time.Second
)

// MaxParts bounds how many messages one text may be split into; a longer
// text is refused before anything is sent, so one call cannot flood a chat.
const MaxParts = 20

// MaxResponseBytes bounds how much of a platform's answer is read.
const MaxResponseBytes = 1 << 20

// maxDetail bounds a platform's own error message quoted in an error.
const maxDetail = 300

// Errors of delivery. An error returned by [Sender.Send] wraps one of them
// (or a context error, or the transport's error) with the target that
// failed.
var (
	// ErrEmptyMessage: the message holds no text to send.
	ErrEmptyMessage = errors.New("message is empty")
	// ErrTooLong: the text would take more than MaxParts messages.
	ErrTooLong = errors.New("message too long")
	// ErrNoCredentials: .env holds no token for the platform; nothing was
	// sent.
	ErrNoCredentials = errors.New("no credentials")
	// ErrTokenRefused: the platform refused the token (HTTP 401, or Slack's
	// invalid_auth and the like).
	ErrTokenRefused = errors.New("token refused")
	// ErrForbidden: the token is valid but the bot may not post in that chat
	// (HTTP 403: blocked by the user, not a member, missing permission).
	ErrForbidden = errors.New("not allowed to post")
	// ErrRateLimited: the platform still answered 429 after the retries, or
	// asked for a wait past the bound.
	ErrRateLimited = errors.New("rate limited")
	// ErrPlatform: the platform refused the message for another reason; the
	// error quotes its message.
	ErrPlatform = errors.New("refused by the platform")
)

// Sender delivers messages. The zero value is not usable without Env; other
// fields have defaults. A Sender is safe for concurrent use once set up.
type Sender struct {
	// Env holds the credentials: the values of $HERMES_HOME/.env, read
	// under the keys TelegramTokenVar, DiscordTokenVar and SlackTokenVar.
	Env map[string]string
	// Directory resolves channel names in targets; nil accepts ids only.
	Directory Directory
	// TelegramBaseURL, DiscordBaseURL and SlackBaseURL override the
	// platforms' API addresses (tests point them at local fakes). Empty
	// means the Default…BaseURL.
	TelegramBaseURL, DiscordBaseURL, SlackBaseURL string
	// Client makes the requests; nil means a client with Timeout. Redirects
	// are never followed, whatever its CheckRedirect.
	Client *http.Client
	// Timeout bounds one request when Client is nil; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a message is sent again after a 429;
	// 0 means DefaultMaxRetries, a negative value none.
	MaxRetries int
	// MaxRetryWait bounds the total wait for 429s of one message; 0 means
	// DefaultMaxRetryWait.
	MaxRetryWait time.Duration
}

// Result describes a delivered message.
type Result struct {
	// Platform, ChatID and ThreadID are the target delivered to.
	Platform string `json:"platform"`
	ChatID   string `json:"chat_id"`
	ThreadID string `json:"thread_id,omitempty"`
	// MessageIDs are the platform's ids of the messages sent, in order: one
	// per part of a split text (Telegram message_id, Discord message id,
	// Slack ts).
	MessageIDs []string `json:"message_ids"`
}

// MessageID returns the id of the last message sent, the one the original
// tool reported as message_id, or "" when nothing was sent.
func (r *Result) MessageID() string {
	if r == nil || len(r.MessageIDs) == 0 {
		return ""
	}
	return r.MessageIDs[len(r.MessageIDs)-1]
}

// Send parses target (see [ParseTarget]) and delivers text there. See
// [Sender.SendTo].
func (s *Sender) Send(ctx context.Context, target, text string) (*Result, error) {
	t, err := ParseTarget(target, s.Directory)
	if err != nil {
		return nil, err
	}
	return s.SendTo(ctx, t, text)
}

// SendTo delivers text to t. A text longer than the platform's limit
// (TelegramMaxLength, DiscordMaxLength, SlackMaxLength) is split on line
// boundaries ([Split]) and sent as several messages, in order (more than
// MaxParts are refused with [ErrTooLong], nothing sent); it stops at
// the first part that fails, and then returns the parts already delivered
// in the Result along with the error. A Slack user id is first turned into
// the direct-message conversation with that user (conversations.open, which
// needs the im:write scope); the Result names that conversation. Without a token for the platform in
// Env it returns [ErrNoCredentials] and sends nothing.
func (s *Sender) SendTo(ctx context.Context, t Target, text string) (*Result, error) {
	if !known(t.Platform) {
		return nil, fmt.Errorf("target %s: %w %q; messages can be sent to %s", t, ErrUnknownPlatform, t.Platform, strings.Join(Platforms, ", "))
	}
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("send to %s: %w", t, ErrEmptyMessage)
	}
	p, err := s.platform(t.Platform)
	if err != nil {
		return nil, fmt.Errorf("send to %s: %w", t, err)
	}
	limit, size := maxLength(t.Platform)
	parts := Split(text, limit, size)
	if len(parts) > MaxParts {
		return nil, fmt.Errorf("send to %s: %w: %d characters would take %d %s messages of at most %d; the limit is %d messages",
			t, ErrTooLong, utf8.RuneCountInString(text), len(parts), t.Platform, limit, MaxParts)
	}
	if t.Platform == Slack && SlackUserID(t.ChatID) {
		dm, err := s.retrying(ctx, func() (string, time.Duration, error) { return p.openSlackDM(ctx, s, t.ChatID) })
		if err != nil {
			return nil, p.scrub(fmt.Errorf("send to %s: opening a direct message: %w", t, err))
		}
		t.ChatID = dm
	}
	res := &Result{Platform: t.Platform, ChatID: t.ChatID, ThreadID: t.ThreadID, MessageIDs: []string{}}
	for i, part := range parts {
		id, err := s.deliver(ctx, p, t, part)
		if err != nil {
			where := t.String()
			if len(parts) > 1 {
				where = fmt.Sprintf("%s (part %d of %d)", t, i+1, len(parts))
			}
			err = p.scrub(fmt.Errorf("send to %s: %w", where, err))
			if len(res.MessageIDs) == 0 {
				return nil, err
			}
			return res, err
		}
		res.MessageIDs = append(res.MessageIDs, id)
	}
	return res, nil
}

// deliver sends one message, waiting out 429 answers within the bounds.
func (s *Sender) deliver(ctx context.Context, p *platform, t Target, text string) (string, error) {
	return s.retrying(ctx, func() (string, time.Duration, error) { return p.send(ctx, s, t, text) })
}

// retrying makes a call until it does not fail with ErrRateLimited, waiting
// the retry-after it returns, within MaxRetries and MaxRetryWait.
func (s *Sender) retrying(ctx context.Context, call func() (string, time.Duration, error)) (string, error) {
	retries := s.MaxRetries
	if retries == 0 {
		retries = DefaultMaxRetries
	}
	budget := s.MaxRetryWait
	if budget <= 0 {
		budget = DefaultMaxRetryWait
	}
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		id, retryAfter, err := call()
		if err == nil || !errors.Is(err, ErrRateLimited) {
			return id, err
		}
		if attempt >= retries {
			return "", fmt.Errorf("%w; gave up after %d retries", err, max(retries, 0))
		}
		if waited+retryAfter > budget {
			return "", fmt.Errorf("%w; waiting %s more would pass the %s bound", err, retryAfter, budget)
		}
		if err := wait(ctx, retryAfter); err != nil {
			return "", fmt.Errorf("waiting %s to retry after HTTP 429: %w", retryAfter, err)
		}
		waited += retryAfter
	}
}

// wait returns after d, or with the context's error when it ends first.
func wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// platform is one platform's API as this Sender reaches it.
type platform struct {
	name     string
	tokenVar string
	token    string
	base     string
	send     func(ctx context.Context, s *Sender, t Target, text string) (id string, retryAfter time.Duration, err error)
}

// platform returns the API of a platform, or ErrNoCredentials.
func (s *Sender) platform(name string) (*platform, error) {
	p := &platform{name: name}
	var base string
	switch name {
	case Telegram:
		p.tokenVar, base, p.send = TelegramTokenVar, or(s.TelegramBaseURL, DefaultTelegramBaseURL), p.sendTelegram
	case Discord:
		p.tokenVar, base, p.send = DiscordTokenVar, or(s.DiscordBaseURL, DefaultDiscordBaseURL), p.sendDiscord
	default:
		p.tokenVar, base, p.send = SlackTokenVar, or(s.SlackBaseURL, DefaultSlackBaseURL), p.sendSlack
	}
	p.token = strings.TrimSpace(s.Env[p.tokenVar])
	if p.token == "" {
		return nil, fmt.Errorf("%w for %s: add %s to $HERMES_HOME/.env", ErrNoCredentials, name, p.tokenVar)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s API base URL %q is not an http(s) URL", name, base)
	}
	p.base = strings.TrimRight(base, "/")
	return p, nil
}

func or(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return strings.TrimSpace(s)
}

// scrub removes the token from err's text, in case a platform or the
// transport echoed it; the error chain is kept for errors.Is.
func (p *platform) scrub(err error) error {
	msg := err.Error()
	clean := p.redact(msg)
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

func (p *platform) redact(s string) string {
	if p.token == "" {
		return s
	}
	s = strings.ReplaceAll(s, p.token, "<redacted>")
	if esc := url.PathEscape(p.token); esc != p.token {
		s = strings.ReplaceAll(s, esc, "<redacted>")
	}
	return s
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }

// Is keeps errors.Is working without an Unwrap that would hand out the
// unscrubbed text.
func (e *scrubbed) Is(target error) bool { return errors.Is(e.err, target) }

// response is a platform's answer, its body read up to MaxResponseBytes.
type response struct {
	status int
	header http.Header
	body   []byte
}

// post sends payload as JSON to endpoint. shown is the endpoint as it may
// appear in an error (without a token).
func (s *Sender) post(ctx context.Context, p *platform, endpoint, shown string, header http.Header, payload any) (*response, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("encoding the request to %s: %w", shown, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		// The error of NewRequest quotes the URL, which may hold the token.
		return nil, fmt.Errorf("building the request to %s failed", shown)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Accept", "application/json")
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "hermes-bridge-messaging")
	}
	resp, err := s.client().Do(req)
	if err != nil {
		// A *url.Error quotes the URL; keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("POST %s: %w", shown, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("POST %s: reading the answer (HTTP %d): %w", shown, resp.StatusCode, err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

func (s *Sender) client() *http.Client {
	var c http.Client
	if s.Client != nil {
		c = *s.Client
	} else {
		c.Timeout = s.Timeout
		if c.Timeout <= 0 {
			c.Timeout = DefaultTimeout
		}
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// detail quotes a platform's message, bounded, for an error.
func (p *platform) detail(msg string) string {
	msg = strings.TrimSpace(p.redact(msg))
	if len(msg) > maxDetail {
		cut := maxDetail
		for cut > 0 && !utf8RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return strconv.Quote(msg)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// bodyDetail quotes a non-JSON answer's body, bounded.
func (p *platform) bodyDetail(r *response) string {
	if len(bytes.TrimSpace(r.body)) == 0 {
		return "an empty answer"
	}
	return "answer " + p.detail(string(r.body))
}

// httpError words an answer that is not a success or a 429.
func (p *platform) httpError(r *response, msg string) error {
	what := p.bodyDetail(r)
	if msg != "" {
		what = p.detail(msg)
	}
	switch {
	case r.status == http.StatusUnauthorized:
		return fmt.Errorf("%s: %w (HTTP 401, %s): check %s in $HERMES_HOME/.env", p.name, ErrTokenRefused, what, p.tokenVar)
	case r.status == http.StatusForbidden:
		return fmt.Errorf("%s: %w in this chat (HTTP 403, %s)", p.name, ErrForbidden, what)
	case r.status >= 300 && r.status < 400:
		return fmt.Errorf("%s: %w: HTTP %d redirect to %q not followed; check the API base URL", p.name, ErrPlatform, r.status, p.redact(r.header.Get("Location")))
	default:
		return fmt.Errorf("%s: %w: HTTP %d, %s", p.name, ErrPlatform, r.status, what)
	}
}

// headerRetryAfter reads a Retry-After header: seconds, or an HTTP date.
func headerRetryAfter(h http.Header) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		return seconds(secs), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}

// seconds converts a retry-after in seconds, clamped to [0, 1 day].
func seconds(secs float64) time.Duration {
	if !(secs > 0) { // also NaN
		return 0
	}
	if secs > 86400 {
		secs = 86400
	}
	return time.Duration(secs * float64(time.Second))
}

// rateLimited words a 429 answer.
func (p *platform) rateLimited(retryAfter time.Duration, msg string) error {
	if msg != "" {
		return fmt.Errorf("%s: %w (HTTP 429, %s, retry after %s)", p.name, ErrRateLimited, p.detail(msg), retryAfter)
	}
	return fmt.Errorf("%s: %w (HTTP 429, retry after %s)", p.name, ErrRateLimited, retryAfter)
}
