package tokenstore

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"time"

	"golang.org/x/oauth2"
)

// Token is the content of <stem>.json: a token response (RFC 6749 §5.1)
// plus what Hermes records about it. Times are Unix seconds, 0 when
// unknown. It prints and logs without its token values.
type Token struct {
	AccessToken  string // access_token; a stored token always has one
	TokenType    string // token_type, e.g. "Bearer"
	RefreshToken string // refresh_token, "" when the server gave none
	Scope        string // scope, space separated

	// ExpiresIn is the lifetime the server granted (expires_in). ExpiresAt
	// is when the access token expires (expires_at): Save sets it to the
	// write time + ExpiresIn when it is 0, as the original did; Load of a
	// legacy file without it uses the file's mtime + ExpiresIn. Both 0:
	// the expiry is unknown and the token never counts as expired.
	ExpiresIn int64
	ExpiresAt int64

	// ObtainedAt is when the grant was obtained (the login); Save sets it
	// when 0 and Merge keeps it across refreshes. LastRefresh is when the
	// access token was last refreshed (RefreshLocked sets it).
	ObtainedAt  int64
	LastRefresh int64

	// Account says who the token is for, when known (an id_token's sub or
	// email, or a field of the token response): a plain string, never a
	// token. Issuer is the authorization server the token came from and
	// Resource the protected resource it is for (RFC 8707).
	Account  string
	Issuer   string
	Resource string

	// Extra holds the file's fields this package does not know (an
	// id_token, the original's hermes_issuer, a newer version's fields);
	// Save writes them back unchanged. Keys of the fields above are
	// ignored here.
	Extra map[string]json.RawMessage
}

// tokenKeys are the JSON names of Token's fields.
var tokenKeys = []string{
	"access_token", "token_type", "refresh_token", "scope", "expires_in", "expires_at",
	"obtained_at", "last_refresh", "account", "issuer", "resource",
}

// decodeToken reads a token file's bytes; mtime is the file's modification
// time, used for a legacy file without expires_at (zero: not used). The
// problem it reports names fields, never values.
func decodeToken(data []byte, mtime time.Time) (*Token, string) {
	o, problem := parseObject(data)
	if problem != "" {
		return nil, problem
	}
	t := &Token{
		AccessToken:  o.str("access_token"),
		TokenType:    o.str("token_type"),
		RefreshToken: o.str("refresh_token"),
		Scope:        o.str("scope"),
		ExpiresIn:    o.num("expires_in"),
		ExpiresAt:    o.num("expires_at"),
		ObtainedAt:   o.num("obtained_at"),
		LastRefresh:  o.num("last_refresh"),
		Account:      o.str("account"),
		Issuer:       o.str("issuer"),
		Resource:     o.str("resource"),
	}
	if o.err != "" {
		return nil, o.err
	}
	if t.AccessToken == "" {
		return nil, `no "access_token"`
	}
	if t.Issuer == "" {
		// The original recorded the issuer as hermes_issuer (kept as is).
		t.Issuer = o.peekStr("hermes_issuer")
	}
	if t.ExpiresAt == 0 && t.ExpiresIn > 0 && !mtime.IsZero() {
		t.ExpiresAt = addSeconds(mtime.Unix(), t.ExpiresIn)
	}
	t.Extra = o.rest()
	return t, ""
}

// encode returns the file content of t.
func (t *Token) encode() ([]byte, error) {
	w := newWriter(t.Extra, tokenKeys...)
	w.str("access_token", t.AccessToken)
	w.str("token_type", t.TokenType)
	w.str("refresh_token", t.RefreshToken)
	w.str("scope", t.Scope)
	w.num("expires_in", t.ExpiresIn)
	w.num("expires_at", t.ExpiresAt)
	w.num("obtained_at", t.ObtainedAt)
	w.num("last_refresh", t.LastRefresh)
	w.str("account", t.Account)
	w.str("issuer", t.Issuer)
	w.str("resource", t.Resource)
	return w.bytes()
}

// MarshalJSON writes t in the token file's format (with its token values:
// it is what Save writes).
func (t Token) MarshalJSON() ([]byte, error) {
	b, err := t.encode()
	if err != nil {
		return nil, fmt.Errorf("tokenstore: token: %w", err)
	}
	return b, nil
}

// UnmarshalJSON reads the token file's format. A file without expires_at
// keeps ExpiresAt 0 here (only Load knows the file's mtime). Its errors
// wrap ErrCorrupt and never quote the input.
func (t *Token) UnmarshalJSON(data []byte) error {
	d, problem := decodeToken(data, time.Time{})
	if problem != "" {
		return fmt.Errorf("tokenstore: token: %w: %s", ErrCorrupt, problem)
	}
	*t = *d
	return nil
}

// Clone returns a deep copy of t (nil for nil).
func (t *Token) Clone() *Token {
	if t == nil {
		return nil
	}
	c := *t
	c.Extra = cloneExtra(t.Extra)
	return &c
}

// Expiry returns when the access token expires; the zero time when
// unknown.
func (t *Token) Expiry() time.Time {
	if t == nil || t.ExpiresAt == 0 {
		return time.Time{}
	}
	return time.Unix(t.ExpiresAt, 0)
}

// Expired reports whether t is unusable at now: nil, without an access
// token, or past its expiry once skew (clock skew and request latency)
// is added to now. A token whose expiry is unknown has not expired.
func (t *Token) Expired(now time.Time, skew time.Duration) bool {
	if t == nil || t.AccessToken == "" {
		return true
	}
	if t.ExpiresAt == 0 {
		return false
	}
	return !now.Add(skew).Before(t.Expiry())
}

// ExpiresSoon reports whether t is still valid at now but expires within
// the window: time to refresh ahead of need. It is false for a token
// already expired or without a known expiry.
func (t *Token) ExpiresSoon(now time.Time, within time.Duration) bool {
	if t.Expired(now, 0) || t.ExpiresAt == 0 {
		return false
	}
	return t.Expired(now, within)
}

// Merge returns the token to store after a refresh: fresh (the refresh
// response), with what the response may omit taken from old (RFC 6749
// §6: a server that sends no refresh_token leaves the old one valid; §5.1:
// no scope means the scope granted before), and Hermes' own fields
// (ObtainedAt, Account, Issuer, Resource, LastRefresh, Extra) kept unless
// fresh sets them. Expiry fields are fresh's only. When both name an
// issuer and they differ, fresh is a grant of another authorization server
// and nothing of old is kept: a refresh token must never reach an issuer
// other than the one that granted it. Neither argument is modified.
func Merge(old, fresh *Token) *Token {
	if fresh == nil {
		return old.Clone()
	}
	m := fresh.Clone()
	if old == nil || old.Issuer != "" && fresh.Issuer != "" && old.Issuer != fresh.Issuer {
		return m
	}
	keep := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	keep(&m.RefreshToken, old.RefreshToken)
	keep(&m.TokenType, old.TokenType)
	keep(&m.Scope, old.Scope)
	keep(&m.Account, old.Account)
	keep(&m.Issuer, old.Issuer)
	keep(&m.Resource, old.Resource)
	if m.ObtainedAt == 0 {
		m.ObtainedAt = old.ObtainedAt
	}
	if m.LastRefresh == 0 {
		m.LastRefresh = old.LastRefresh
	}
	if len(old.Extra) > 0 {
		extra := cloneExtra(old.Extra)
		for k, v := range m.Extra {
			extra[k] = v
		}
		m.Extra = extra
	}
	return m
}

// OAuth2 converts t for golang.org/x/oauth2 (nil for nil). Expiry comes
// from ExpiresAt; a scope is available as Extra("scope").
func (t *Token) OAuth2() *oauth2.Token {
	if t == nil {
		return nil
	}
	o := &oauth2.Token{
		AccessToken:  t.AccessToken,
		TokenType:    t.TokenType,
		RefreshToken: t.RefreshToken,
		Expiry:       t.Expiry(),
	}
	if t.Scope != "" {
		o = o.WithExtra(map[string]any{"scope": t.Scope})
	}
	return o
}

// FromOAuth2 converts a token from golang.org/x/oauth2 (nil for nil):
// ExpiresAt from its Expiry, ExpiresIn and the scope from the response
// when x/oauth2 kept them. Hermes' own fields are left for the caller (or
// Merge) to fill.
func FromOAuth2(o *oauth2.Token) *Token {
	if o == nil {
		return nil
	}
	t := &Token{
		AccessToken:  o.AccessToken,
		TokenType:    o.TokenType,
		RefreshToken: o.RefreshToken,
		ExpiresIn:    o.ExpiresIn,
	}
	if !o.Expiry.IsZero() {
		t.ExpiresAt = o.Expiry.Unix()
	}
	if s, ok := o.Extra("scope").(string); ok {
		t.Scope = s
	}
	return t
}

// String describes t without its token values.
func (t Token) String() string {
	exp := "unknown"
	if t.ExpiresAt != 0 {
		exp = time.Unix(t.ExpiresAt, 0).UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("Token{type=%q expires_at=%s refresh_token=%t scope=%q account=%q issuer=%q resource=%q}",
		t.TokenType, exp, t.RefreshToken != "", t.Scope, t.Account, t.Issuer, t.Resource)
}

// GoString is String, so %#v does not print the token values either.
func (t Token) GoString() string { return "tokenstore." + t.String() }

// LogValue logs t without its token values.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("type", t.TokenType),
		slog.Int64("expires_at", t.ExpiresAt),
		slog.Bool("refresh_token", t.RefreshToken != ""),
		slog.String("scope", t.Scope),
		slog.String("account", t.Account),
		slog.String("issuer", t.Issuer),
		slog.String("resource", t.Resource),
	)
}

// addSeconds returns a+b without wrapping around.
func addSeconds(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}
