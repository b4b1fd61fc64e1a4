package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/bridge"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/events"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/send"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/store"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/tools"
)

// The keys of the bridge's settings (config.yaml, mcp_serve.<bridge>) that
// override the platforms' API base URLs.
const (
	TelegramBaseURLKey = "telegram_base_url"
	DiscordBaseURLKey  = "discord_base_url"
	SlackBaseURLKey    = "slack_base_url"
)

// The tools' interfaces, as the plugin fills them.
var (
	_ tools.Events   = events.Feed{}
	_ tools.Recorder = (*store.Store)(nil)
	_ send.Directory = (*store.Store)(nil)
)

// errClosed is the error of a call after Close.
var errClosed = errors.New("the messaging bridge is shutting down; the host starts it again for the next call")

// opener returns the plugin's bridge.Opener, logging to log (nil discards).
func opener(log hclog.Logger) bridge.Opener {
	return func(ctx context.Context, cfg bridge.Config) (bridge.Server, error) {
		return open(ctx, cfg, log)
	}
}

// open builds the server of cfg, logging to log (nil discards). Only
// settings that cannot be used fail it:
// a HERMES_HOME or a state.db that is missing or unreadable leaves the
// tools answering without data, and each call tries again to open what
// was missing, so the bridge picks the agent's data up once it appears.
func open(_ context.Context, cfg bridge.Config, log hclog.Logger) (*server, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	sender, err := newSender(cfg)
	if err != nil {
		return nil, err
	}
	home := cfg.Home
	if home == "" {
		if home, err = store.Home(); err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "%v", err)
		}
	}
	s := &server{home: home, sender: sender, log: log, noted: map[string]string{}}
	s.tools()
	return s, nil
}

// newSender is the Sender of cfg: its bot tokens, and the API base URLs of
// its settings.
func newSender(cfg bridge.Config) (send.Sender, error) {
	s := send.Sender{Env: maps.Clone(cfg.Env)}
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	for _, b := range []struct {
		key string
		dst *string
		def string
	}{
		{TelegramBaseURLKey, &s.TelegramBaseURL, send.DefaultTelegramBaseURL},
		{DiscordBaseURLKey, &s.DiscordBaseURL, send.DefaultDiscordBaseURL},
		{SlackBaseURLKey, &s.SlackBaseURL, send.DefaultSlackBaseURL},
	} {
		v, present := cfg.Settings[b.key]
		if !present || v == nil {
			continue
		}
		str, ok := v.(string)
		if !ok {
			return send.Sender{}, sdk.NewError(sdk.CodeConfig,
				"bridge setting %s is a %s, not a URL; set it to the API's base URL, such as %s, or remove it", b.key, jsonKind(v), b.def)
		}
		if err := checkBaseURL(str); err != nil {
			return send.Sender{}, sdk.NewError(sdk.CodeConfig,
				"bridge setting %s %.200q %v; set it to the API's base URL, such as %s, or remove it", b.key, shownURL(str), err, b.def)
		}
		*b.dst = str
	}
	return s, nil
}

// checkBaseURL accepts an absolute http or https URL with a host, and
// without credentials, query or fragment (the sender appends the API's
// paths to it).
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("is not an http(s) URL")
	case u.Host == "":
		return errors.New("has no host")
	case u.User != nil:
		return errors.New("holds credentials, which belong in .env")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return errors.New("has a query or a fragment")
	}
	return nil
}

// shownURL is s for an error, its password masked.
func shownURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// jsonKind names the JSON type of a settings value.
func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case float64, int, int64:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	}
	return fmt.Sprintf("%T", v)
}

// server is the plugin's bridge.Server: the ten tools over the session
// store of one HERMES_HOME, its event watcher and the sender.
type server struct {
	home   string
	sender send.Sender // without a Directory: the store is it
	log    hclog.Logger

	mu     sync.Mutex
	st     *store.Store    // nil while HERMES_HOME is missing
	w      *events.Watcher // nil while it cannot be started
	t      *tools.Tools
	noted  map[string]string // the last problem logged, per part
	closed bool
}

// tools returns the tools over what is open, first trying again to open the
// store and start the watcher when they are missing.
func (s *server) tools() (*tools.Tools, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.t != nil && s.w != nil {
		return s.t, nil
	}
	changed := s.t == nil
	if s.st == nil {
		st, err := store.Open(s.home)
		if err != nil {
			s.note("session store", err)
		} else {
			s.st, changed = st, true
		}
	}
	if s.st != nil && s.w == nil {
		w, err := events.New(s.st, events.Options{})
		if err != nil {
			s.note("event feed", err)
		} else {
			s.w, changed = w, true
		}
	}
	if changed {
		t := &tools.Tools{Logf: s.logf}
		sender := s.sender
		if s.st != nil {
			t.Store, t.Recorder, sender.Directory = s.st, s.st, s.st
		}
		t.Sender = &sender
		if s.w != nil {
			t.Events = events.Feed{W: s.w}
		}
		s.t = t
	}
	return s.t, nil
}

// note logs a part that cannot be opened, once per distinct problem.
func (s *server) note(part string, err error) {
	msg := err.Error()
	if s.noted[part] == msg {
		return
	}
	s.noted[part] = msg
	s.log.Warn(part+" unavailable; the tools answer without it and try again on the next call", "error", msg)
}

// logf receives the tools' problems that do not change a result. Their
// text names targets, sessions and files, never a message's text or a
// token. A sent message without a conversation to record it in is
// ordinary, so it is logged at debug level.
func (s *server) logf(format string, args ...any) {
	level := hclog.Warn
	for _, a := range args {
		if err, ok := a.(error); ok && errors.Is(err, store.ErrNoSession) {
			level = hclog.Debug
		}
	}
	s.log.Log(level, fmt.Sprintf(format, args...))
}

// Call runs the tool name with args, a JSON object (empty or null for none).
func (s *server) Call(ctx context.Context, name string, args json.RawMessage) (bridge.Result, error) {
	// Checked here so that an error never quotes the arguments, which may
	// hold a message's text.
	if a := bytes.TrimSpace(args); len(a) > 0 && string(a) != "null" && (a[0] != '{' || !json.Valid(a)) {
		return bridge.Result{}, fmt.Errorf("the arguments of tool %.128q are not a JSON object; pass the tool's parameters as an object", name)
	}
	t, err := s.tools()
	if err != nil {
		return bridge.Result{}, err
	}
	res, err := t.Call(ctx, name, args)
	if err != nil {
		return bridge.Result{}, err
	}
	return bridge.Result{Text: res.Text, Structured: res.Structured, IsError: res.IsError}, nil
}

// Close stops the event watcher and closes the store; calls after it fail.
func (s *server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	w, st := s.w, s.st
	s.mu.Unlock()
	var errs []error
	if w != nil {
		errs = append(errs, w.Close())
	}
	if st != nil {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}
