// Package elicit answers a server's elicitation/create: the host asking a
// person for input on a server's behalf. Form mode reads the requested
// schema into typed fields (strings with their formats and lengths,
// numbers and integers with their bounds, booleans, enums as a choice of
// one or several, defaults, required fields) and asks each on the terminal
// the CLI provides (Prompter), within the server's elicitation.timeout. URL
// mode shows the URL, escaped, with the server's name and asks before
// opening it. Without a person to ask it declines. Everything in a request
// is the server's and hostile: bounded (schema.go) and escaped before it is
// shown. The package knows nothing of terminals: the Prompter does.
package elicit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/fields"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// DefaultTimeout is how long a person has to answer one request
// (elicitation.timeout).
const DefaultTimeout = 300 * time.Second

// Settings are a server's elicitation: block.
type Settings struct {
	// Enabled false declines every request without asking (enabled).
	Enabled bool
	// Timeout bounds the wait for the person's answer (timeout, seconds);
	// past it the request is cancelled.
	Timeout time.Duration
}

// DefaultSettings are the settings of a server without an elicitation:
// block.
func DefaultSettings() Settings { return Settings{Enabled: true, Timeout: DefaultTimeout} }

// ParseSettings reads a server's elicitation: block (as config.Server
// keeps it: ${VAR}s resolved, values as YAML gave them). A wrong value is
// an error naming the key.
func ParseSettings(server string, raw map[string]any) (Settings, error) {
	s := DefaultSettings()
	key := func(k string) string { return fmt.Sprintf("mcp_servers.%s.elicitation.%s", server, k) }
	for k, v := range raw {
		switch k {
		case "enabled":
			b, ok := boolish(v)
			if !ok {
				return s, fmt.Errorf("%s: want true or false, got %s; fix config.yaml", key(k), shown(v))
			}
			s.Enabled = b
		case "timeout":
			d, ok := seconds(v)
			if !ok {
				return s, fmt.Errorf("%s: want a number of seconds above 0, got %s; fix config.yaml", key(k), shown(v))
			}
			s.Timeout = d
		}
	}
	return s, nil
}

func shown(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%q", termsafe.Escape(s))
}

func boolish(v any) (bool, bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "yes", "on", "1":
			return true, true
		case "false", "no", "off", "0":
			return false, true
		}
	}
	return false, false
}

// maxTimeout bounds elicitation.timeout (a day).
const maxTimeout = 24 * time.Hour

func seconds(v any) (time.Duration, bool) {
	f, ok := fields.Seconds(v)
	if !ok || !(f > 0) || f > maxTimeout.Seconds() {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// ErrNoPerson is what a Prompter returns when nobody can answer (no
// terminal): the request is declined.
var ErrNoPerson = errors.New("no person to ask: not on a terminal")

// Prompter is the person's side, which the CLI provides: a terminal.
type Prompter interface {
	// Converse gives fn the terminal to itself once the conversations
	// before it ended (requests of several servers, or of one tool call's
	// parallel input requests, are asked one after the other). It returns
	// ErrNoPerson when no person can answer, and ctx's error when ctx ends
	// before the terminal is free.
	Converse(ctx context.Context, fn func(t Terminal) error) error
}

// Terminal is a line-based conversation with the person. Text given to it
// is already escaped; it prints it as given.
type Terminal interface {
	// Say prints lines of text.
	Say(text string)
	// Ask prints prompt and returns the line typed (without its newline).
	// It returns io.EOF when the input ended, and ctx's error when ctx
	// ends first.
	Ask(ctx context.Context, prompt string) (string, error)
}

// Opener opens a URL in the person's browser; an error says it could
// not (no browser here), and the URL is then shown to be opened by hand.
type Opener func(ctx context.Context, rawURL string) error

// Handler answers one server's elicitation requests (session.Elicitor).
type Handler struct {
	// Server is the server's name, shown with every request.
	Server   string
	Settings Settings
	// Prompter asks the person; nil declines every request.
	Prompter Prompter
	// Open opens URL-mode pages; nil only shows them.
	Open   Opener
	Logger hclog.Logger
}

// New returns the handler of server's requests.
func New(server string, s Settings, p Prompter, open Opener, log hclog.Logger) *Handler {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Handler{Server: server, Settings: s, Prompter: p, Open: open, Logger: log}
}

// Capability is what the handler offers: form and URL mode.
func (h *Handler) Capability() mcpvalue.ElicitationCapability {
	return mcpvalue.ElicitationCapability{Form: true, URL: true}
}

func result(action string, content map[string]any) mcpvalue.ElicitationResult {
	return mcpvalue.ElicitationResult{Action: action, Content: content}
}

// errDeclined and errCancelled end a conversation with that answer.
var (
	errDeclined  = errors.New("declined")
	errCancelled = errors.New("cancelled")
)

// Elicit answers one request: accept with the person's answers, decline
// (the person said no, nobody can be asked, elicitation is disabled) or
// cancel (the person dismissed it, or gave no answer within the timeout).
// A request past a bound, or with a schema that is not a form, is refused
// with an error (a JSON-RPC error to the server), and the person is told.
func (h *Handler) Elicit(ctx context.Context, p mcpvalue.ElicitationRequest) (mcpvalue.ElicitationResult, error) {
	var none mcpvalue.ElicitationResult
	if !h.Settings.Enabled {
		h.Logger.Info("elicitation declined: disabled for the server (elicitation.enabled)", "server", h.Server)
		return result(mcpvalue.ElicitationDecline, nil), nil
	}
	if len(p.Message) > MaxMessageBytes {
		return none, h.refuse(ctx, &LimitError{Server: h.Server, What: "message", Got: len(p.Message), Limit: MaxMessageBytes, Unit: "bytes"})
	}
	if h.Prompter == nil {
		h.Logger.Info("elicitation declined: no person to ask", "server", h.Server)
		return result(mcpvalue.ElicitationDecline, nil), nil
	}
	timeout := h.Settings.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	switch p.Mode {
	case "", mcpvalue.ElicitationModeForm:
		fields, err := h.parseSchema(p.RequestedSchema)
		if err != nil {
			return none, h.refuse(ctx, err)
		}
		return h.converse(ctx, timeout, func(tctx context.Context, t Terminal) (mcpvalue.ElicitationResult, error) {
			return h.form(tctx, t, p.Message, fields)
		})
	case mcpvalue.ElicitationModeURL:
		u, err := h.checkURL(p.URL)
		if err != nil {
			return none, h.refuse(ctx, err)
		}
		return h.converse(ctx, timeout, func(tctx context.Context, t Terminal) (mcpvalue.ElicitationResult, error) {
			return h.openURL(tctx, t, p.Message, u)
		})
	default:
		return none, h.refuse(ctx, &SchemaError{Server: h.Server, Reason: fmt.Sprintf("unknown mode %s", shown(p.Mode))})
	}
}

// parseSchema reads a form's requestedSchema as the server wrote it
// (ParseSchema); none, or JSON that cannot be read, is not a form.
func (h *Handler) parseSchema(raw json.RawMessage) ([]Field, error) {
	var schema any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &schema); err != nil {
			return nil, &SchemaError{Server: h.Server, Reason: "its requestedSchema is not a JSON object"}
		}
	}
	return ParseSchema(h.Server, schema)
}

// refuse tells the person (when there is one) and logs why a request was
// refused, and returns err for the server.
func (h *Handler) refuse(ctx context.Context, err error) error {
	h.Logger.Warn("elicitation request refused", "server", h.Server, "error", err)
	if h.Prompter != nil {
		nctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_ = h.Prompter.Converse(nctx, func(t Terminal) error {
			t.Say(termsafe.Escape(err.Error()))
			return nil
		})
	}
	return err
}

// converse runs ask on the terminal within timeout, turning the end of
// input into cancel and the timeout into cancel (and says so).
func (h *Handler) converse(ctx context.Context, timeout time.Duration, ask func(context.Context, Terminal) (mcpvalue.ElicitationResult, error)) (mcpvalue.ElicitationResult, error) {
	var none mcpvalue.ElicitationResult
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var res mcpvalue.ElicitationResult
	var askErr error
	err := h.Prompter.Converse(tctx, func(t Terminal) error {
		res, askErr = ask(tctx, t)
		switch {
		case errors.Is(askErr, errDeclined):
			t.Say("  Declined.")
		case errors.Is(askErr, errCancelled), errors.Is(askErr, io.EOF):
			t.Say("  Cancelled.")
		case askErr != nil && tctx.Err() != nil && ctx.Err() == nil:
			t.Say(fmt.Sprintf("  No answer within %s (mcp_servers.%s.elicitation.timeout): cancelled.", timeout, termsafe.Escape(h.Server)))
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrNoPerson):
		h.Logger.Info("elicitation declined: no person to ask (not on a terminal)", "server", h.Server)
		return result(mcpvalue.ElicitationDecline, nil), nil
	case err != nil && ctx.Err() != nil:
		return none, ctx.Err()
	case err != nil && tctx.Err() != nil:
		// The terminal stayed busy past the timeout.
		h.Logger.Info("elicitation cancelled: no answer within elicitation.timeout", "server", h.Server, "timeout", timeout)
		return result(mcpvalue.ElicitationCancel, nil), nil
	case err != nil:
		return none, err
	}
	switch {
	case askErr == nil:
		return res, nil
	case errors.Is(askErr, errDeclined):
		return result(mcpvalue.ElicitationDecline, nil), nil
	case errors.Is(askErr, errCancelled), errors.Is(askErr, io.EOF):
		return result(mcpvalue.ElicitationCancel, nil), nil
	case ctx.Err() != nil:
		return none, ctx.Err()
	case tctx.Err() != nil:
		h.Logger.Info("elicitation cancelled: no answer within elicitation.timeout", "server", h.Server, "timeout", timeout)
		return result(mcpvalue.ElicitationCancel, nil), nil
	}
	// The terminal failed: nobody can answer.
	h.Logger.Warn("elicitation declined: reading the answer failed", "server", h.Server, "error", askErr)
	return result(mcpvalue.ElicitationDecline, nil), nil
}

// header prints the server's message under a line naming the server.
func (h *Handler) header(t Terminal, what, message string) {
	t.Say("")
	t.Say(fmt.Sprintf("MCP server '%s' %s:", termsafe.Escape(h.Server), what))
	for _, l := range strings.Split(strings.TrimRight(termsafe.EscapeText(message), "\n"), "\n") {
		t.Say("  | " + l)
	}
}

// decide asks accept/decline/cancel; yes means go on.
func decide(ctx context.Context, t Terminal, question string) error {
	for {
		line, err := t.Ask(ctx, "  "+question+" [y]es, [n]o (decline), [c]ancel: ")
		if err != nil {
			return err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return nil
		case "n", "no", "d", "decline":
			return errDeclined
		case "c", "cancel":
			return errCancelled
		}
		t.Say("  Type y, n or c.")
	}
}

func (h *Handler) form(ctx context.Context, t Terminal, message string, fields []Field) (mcpvalue.ElicitationResult, error) {
	var none mcpvalue.ElicitationResult
	h.header(t, "asks for information", message)
	if len(fields) == 0 {
		if err := decide(ctx, t, "Agree?"); err != nil {
			return none, err
		}
		return result(mcpvalue.ElicitationAccept, map[string]any{}), nil
	}
	if err := decide(ctx, t, fmt.Sprintf("Answer (%d field(s); empty takes the [default]; ctrl-d cancels)?", len(fields))); err != nil {
		return none, err
	}
	content := map[string]any{}
	for i := range fields {
		f := &fields[i]
		v, ok, err := askField(ctx, t, f)
		if err != nil {
			return none, err
		}
		if ok {
			content[f.Name] = v
		}
	}
	return result(mcpvalue.ElicitationAccept, content), nil
}

// askField asks one field until the answer is valid; ok false leaves an
// optional field out.
func askField(ctx context.Context, t Terminal, f *Field) (any, bool, error) {
	label := termsafe.Escape(f.Label())
	if f.Description != "" {
		t.Say("  " + label + ": " + termsafe.Escape(f.Description))
	}
	hint := string(f.Kind)
	switch f.Kind {
	case KindString:
		hint = "text"
		if f.Format != "" {
			hint = f.Format
		}
	case KindBoolean:
		hint = "y/n"
	case KindChoice, KindChoices:
		for i, o := range f.Options {
			title := o.Value
			if o.Title != "" && o.Title != o.Value {
				title = o.Title + " (" + o.Value + ")"
			}
			t.Say(fmt.Sprintf("    %d) %s", i+1, termsafe.Escape(title)))
		}
		hint = "number"
		if f.Kind == KindChoices {
			hint = "numbers, comma-separated"
		}
	}
	req := ""
	if f.Required {
		req = ", required"
	}
	def := ""
	if f.Default != nil {
		def = " [" + termsafe.Escape(defaultText(f)) + "]"
	}
	prompt := fmt.Sprintf("  %s (%s%s)%s: ", label, hint, req, def)
	for {
		line, err := t.Ask(ctx, prompt)
		if err != nil {
			return nil, false, err
		}
		if strings.TrimSpace(line) == "" {
			switch {
			case f.Default != nil:
				return f.Default, true, nil
			case f.Required:
				t.Say("  A value is required.")
				continue
			default:
				return nil, false, nil
			}
		}
		v, err := f.Parse(line)
		if err != nil {
			t.Say("  " + termsafe.Escape(err.Error()))
			continue
		}
		return v, true, nil
	}
}

// defaultText shows a default as the person would type it.
func defaultText(f *Field) string {
	switch v := f.Default.(type) {
	case bool:
		if v {
			return "y"
		}
		return "n"
	case float64:
		return fmtNum(v)
	case int64:
		return fmt.Sprint(v)
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	}
	return fmt.Sprint(f.Default)
}

// checkURL accepts an absolute http(s) URL within MaxURLBytes.
func (h *Handler) checkURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURLBytes {
		return nil, &LimitError{Server: h.Server, What: "url", Got: len(raw), Limit: MaxURLBytes, Unit: "bytes"}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, &SchemaError{Server: h.Server, Reason: fmt.Sprintf("its url %s is not an http(s) URL", shown(raw))}
	}
	return u, nil
}

func (h *Handler) openURL(ctx context.Context, t Terminal, message string, u *url.URL) (mcpvalue.ElicitationResult, error) {
	h.header(t, "asks you to open a web page", message)
	t.Say("  URL:  " + termsafe.Escape(u.String()))
	t.Say("  Site: " + termsafe.Escape(u.Hostname()))
	if err := decide(ctx, t, "Open it in your browser?"); err != nil {
		return mcpvalue.ElicitationResult{}, err
	}
	if h.Open == nil || h.Open(ctx, u.String()) != nil {
		t.Say("  Open this URL in your browser: " + termsafe.Escape(u.String()))
	} else {
		t.Say("  Opened in your browser.")
	}
	return result(mcpvalue.ElicitationAccept, nil), nil
}
