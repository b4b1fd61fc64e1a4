package model

import (
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strings"
)

// Redacted is what a secret of the model endpoint becomes in an error.
const Redacted = "[REDACTED]"

// minEncodedSecret is the shortest secret whose encoded fragments
// (base64 at another alignment) are redacted too; shorter ones are
// redacted whole and in their URL-encoded and base64 forms only.
const minEncodedSecret = 8

// Secrets returns the literal values s sends the endpoint that must never
// be shown: the API key (model.api_key_env's value, from the environment
// or .env; it is the only value the client puts in a header).
func (s *Settings) Secrets() []string {
	if s == nil || s.APIKey == "" {
		return nil
	}
	return []string{s.APIKey}
}

// secretForms returns every form a secret may take in an endpoint's echo:
// as it is, URL-encoded (query and path), base64 (standard and URL
// alphabet, as in Basic auth, whole and at the three alignments it can
// have inside "user:secret"), longest first.
func secretForms(secrets []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, v := range secrets {
		if v == "" {
			continue
		}
		add(v)
		add(url.QueryEscape(v))
		add(url.PathEscape(v))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			add(enc.EncodeToString([]byte(v)))
			add(enc.EncodeToString([]byte(":" + v)))
			if len(v) < minEncodedSecret {
				continue
			}
			// Inside a longer base64 text the secret starts at one of
			// three alignments; keep the characters its bytes alone
			// decide.
			for pad := range 3 {
				e := enc.EncodeToString(append(make([]byte, pad), v...))
				e = e[[]int{0, 2, 3}[pad]:]
				e = strings.TrimRight(e, "=")
				if (pad+len(v))%3 != 0 {
					e = e[:len(e)-1]
				}
				add(e)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// Redact returns text with every form of s's secrets (Secrets) replaced
// by [REDACTED].
func (s *Settings) Redact(text string) string {
	for _, f := range secretForms(s.Secrets()) {
		text = strings.ReplaceAll(text, f, Redacted)
	}
	return text
}

// RedactError returns err with s's secrets taken out of everything it
// shows: an *Error keeps its kind and fields, its message and detail
// redacted and its cause replaced by a redacted copy; any other error
// becomes one whose text is redacted (errors.Is still matches what it
// wrapped, context.DeadlineExceeded for one). nil stays nil.
func (s *Settings) RedactError(err error) error {
	if err == nil || len(s.Secrets()) == 0 {
		return err
	}
	var me *Error
	if errors.As(err, &me) && me == err {
		c := *me
		c.Detail = s.Redact(c.Detail)
		c.Model = s.Redact(c.Model)
		c.BaseURL = s.Redact(c.BaseURL)
		c.msg = s.Redact(c.msg)
		if c.Cause != nil {
			c.Cause = &redactedError{msg: s.Redact(c.Cause.Error()), err: c.Cause}
		}
		return &c
	}
	return &redactedError{msg: s.Redact(err.Error()), err: err}
}

// redactedError shows a redacted text for err. It does not unwrap (the
// original's text is not reachable), but errors.Is matches what err
// matches.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

// Is reports whether err matches target.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }
