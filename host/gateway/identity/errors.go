package identity

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// The RFC 6750 error codes.
const (
	CodeInvalidRequest    = "invalid_request"
	CodeInvalidToken      = "invalid_token"
	CodeInsufficientScope = "insufficient_scope"
	// CodeUnavailable is not RFC 6750's: the token could not be checked
	// because the issuer's keys or introspection endpoint did not answer.
	CodeUnavailable = "temporarily_unavailable"
)

// Error is a refused request, as RFC 6750 §3 describes it. Description is
// what the client is told; the cause (Unwrap) may say more for a log. No
// part of either holds the presented token.
type Error struct {
	// Status is the HTTP status: 400, 401, 403 or 503.
	Status int
	// Code is the error code; empty when no token was presented.
	Code string
	// Description is a short human-readable explanation for the client.
	Description string
	// Scope names the scopes a request needs (insufficient_scope).
	Scope []string
	// RetryAfter, in seconds, is set on a 503.
	RetryAfter int
	cause      error
}

func (e *Error) Error() string {
	msg := e.Description
	if e.Code != "" {
		msg = e.Code + ": " + msg
	}
	if e.cause != nil {
		msg += ": " + e.cause.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.cause }

// errNoToken is the answer to a request without a bearer token: a
// challenge without an error code (RFC 6750 §3.1).
func errNoToken() *Error {
	return &Error{Status: http.StatusUnauthorized, Description: "a bearer token is required"}
}

func errRequest(desc string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Description: desc}
}

func errToken(desc string, cause error) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Description: desc, cause: cause}
}

func errUnavailable(desc string, retryAfterSeconds int, cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Description: desc, RetryAfter: max(retryAfterSeconds, 1), cause: cause}
}

// InsufficientScope is the 403 refusal of a request that needs scopes the
// token was not granted (RFC 6750 §3.1); scopes are the missing ones.
func InsufficientScope(scopes ...string) *Error {
	return &Error{
		Status:      http.StatusForbidden,
		Code:        CodeInsufficientScope,
		Description: "the token lacks scope " + strings.Join(scopes, " "),
		Scope:       scopes,
	}
}

// Challenge returns the WWW-Authenticate value for e, pointing clients at
// the resource metadata URL (RFC 9728 §5.1); empty for a 400 or a 503,
// which are not challenges.
func (e *Error) Challenge(resourceMetadata string) string {
	if e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden {
		return ""
	}
	var b strings.Builder
	b.WriteString(`Bearer resource_metadata="`)
	b.WriteString(quotable(resourceMetadata))
	b.WriteString(`"`)
	if e.Code != "" {
		b.WriteString(`, error="` + e.Code + `"`)
		if e.Description != "" {
			b.WriteString(`, error_description="` + quotable(e.Description) + `"`)
		}
	}
	if len(e.Scope) > 0 {
		var scopes []string
		for _, s := range e.Scope {
			if validScope(s) {
				scopes = append(scopes, s)
			}
		}
		b.WriteString(`, scope="` + strings.Join(scopes, " ") + `"`)
	}
	return b.String()
}

// quotable keeps what RFC 6750 allows in error_description (and a URL
// needs): %x20-21 / %x23-5B / %x5D-7E; anything else becomes '?'.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '?'
		}
		return r
	}, s)
}

// writeError answers w with e: the status, the challenge, Retry-After on a
// 503, and a small JSON body with the code and description.
func writeError(w http.ResponseWriter, e *Error, resourceMetadata string) {
	h := w.Header()
	if c := e.Challenge(resourceMetadata); c != "" {
		h.Set("WWW-Authenticate", c)
	}
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	body := map[string]string{"error": e.Code, "error_description": e.Description}
	if e.Code == "" {
		body["error"] = "unauthorized"
	}
	if len(e.Scope) > 0 {
		body["scope"] = strings.Join(e.Scope, " ")
	}
	_ = json.NewEncoder(w).Encode(body)
}
