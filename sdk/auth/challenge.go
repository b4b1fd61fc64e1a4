package auth

import (
	"strings"
)

const (
	// maxHeader is how much of a WWW-Authenticate value ParseChallenges reads.
	maxHeader = 16 << 10
	// maxParams bounds the auth-params kept per challenge.
	maxParams = 64
	// maxChallenges bounds the challenges kept per header value.
	maxChallenges = 64
)

// AuthScheme is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1).
type AuthScheme struct {
	// Scheme is the auth-scheme as sent; compare it with strings.EqualFold.
	Scheme string
	// Params holds the auth-params, keyed by lower-cased name, with
	// quoted-string values unescaped. A name sent twice keeps its first
	// value.
	Params map[string]string
	// Token68 is the token68 form of credentials, when the challenge
	// carries one instead of auth-params.
	Token68 string
}

// ParseChallenges parses a WWW-Authenticate header value: one or more
// challenges separated by commas, each an auth-scheme followed by a token68
// or by auth-params whose values are tokens or quoted-strings. Scheme and
// parameter names are case-insensitive. Malformed parts are skipped, not
// fatal; input beyond 16 KiB is ignored, and at most 64 challenges of at
// most 64 parameters each are kept. Values are valid UTF-8 and contain no
// control characters other than tab.
//
// WWW-Authenticate is parsed on the auth side only: by the auth plugin that
// answers the challenge, with this parser, and by a host that reads the
// typed facts (BearerChallenge) for its messages; transports hand the raw
// header lines over (transport.ChallengeRequest) and never read them.
func ParseChallenges(header string) []AuthScheme {
	if len(header) > maxHeader {
		header = header[:maxHeader]
	}
	p := &challengeParser{s: header}
	var out []AuthScheme
	for len(out) < maxChallenges {
		p.skipListSeparators()
		if p.done() {
			break
		}
		scheme := p.token()
		if scheme == "" {
			p.skipItem()
			continue
		}
		c := AuthScheme{Scheme: scheme, Params: map[string]string{}}
		p.challengeBody(&c)
		out = append(out, c)
	}
	return out
}

// BearerChallenge is what the MCP authorization spec reads from a Bearer
// challenge, or from a DPoP one (RFC 9449 §7.1), which carries the same
// parameters.
type BearerChallenge struct {
	// Scheme is the challenge's auth-scheme as sent: Bearer or DPoP (any
	// case); see DPoP.
	Scheme string
	// ResourceMetadata is the resource_metadata URL (RFC 9728 §5.1), as sent.
	ResourceMetadata string
	// Scope is the scope parameter, as sent (RFC 6750 §3).
	Scope string
	// Error and ErrorDescription are the error and error_description
	// parameters (RFC 6750 §3.1).
	Error            string
	ErrorDescription string
}

// ParseBearer finds the first Bearer challenge in one or more
// WWW-Authenticate header values (a response may carry several header
// lines), else the first DPoP one, and returns its parameters. ok is false
// when there is neither.
func ParseBearer(headers ...string) (info BearerChallenge, ok bool) {
	var dpop *AuthScheme
	for _, h := range headers {
		for _, c := range ParseChallenges(h) {
			switch {
			case strings.EqualFold(c.Scheme, "Bearer"):
				return bearerOf(c), true
			case dpop == nil && strings.EqualFold(c.Scheme, "DPoP"):
				dpop = &c
			}
		}
	}
	if dpop != nil {
		return bearerOf(*dpop), true
	}
	return BearerChallenge{}, false
}

func bearerOf(c AuthScheme) BearerChallenge {
	return BearerChallenge{
		Scheme:           c.Scheme,
		ResourceMetadata: c.Params["resource_metadata"],
		Scope:            c.Params["scope"],
		Error:            c.Params["error"],
		ErrorDescription: c.Params["error_description"],
	}
}

// OffersDPoP reports whether any challenge of the WWW-Authenticate header
// values has the DPoP scheme: the resource takes DPoP-bound tokens (RFC
// 9449 §7.1), whatever other schemes it offers beside.
func OffersDPoP(headers ...string) bool {
	return anyDPoP(headers, func(AuthScheme) bool { return true })
}

// DPoPNonceRequested reports whether a DPoP challenge of the
// WWW-Authenticate header values asks for a proof with the server's nonce
// (RFC 9449 §9, error use_dpop_nonce; the nonce is the response's
// DPoP-Nonce header, Challenge.DPoPNonce).
func DPoPNonceRequested(headers ...string) bool {
	return anyDPoP(headers, func(c AuthScheme) bool { return c.Params["error"] == "use_dpop_nonce" })
}

func anyDPoP(headers []string, match func(AuthScheme) bool) bool {
	for _, h := range headers {
		for _, c := range ParseChallenges(h) {
			if strings.EqualFold(c.Scheme, "DPoP") && match(c) {
				return true
			}
		}
	}
	return false
}

// DPoP reports whether the challenge has the DPoP scheme.
func (b BearerChallenge) DPoP() bool { return strings.EqualFold(b.Scheme, "DPoP") }

// InsufficientScope reports whether the challenge asks for more scope
// (RFC 6750 §3.1 insufficient_scope): a step-up, not a refresh.
func (b BearerChallenge) InsufficientScope() bool { return b.Error == "insufficient_scope" }

// NamesOAuth reports whether the challenge points at OAuth metadata
// (resource_metadata, RFC 9728): the server takes an OAuth login.
func (b BearerChallenge) NamesOAuth() bool { return b.ResourceMetadata != "" }

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) done() bool { return p.i >= len(p.s) }

func (p *challengeParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *challengeParser) skipWS() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *challengeParser) skipListSeparators() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

// skipItem skips malformed input up to the next comma outside a
// quoted-string.
func (p *challengeParser) skipItem() {
	inQuote := false
	for !p.done() {
		c := p.s[p.i]
		switch {
		case inQuote && c == '\\':
			p.i++
		case c == '"':
			inQuote = !inQuote
		case c == ',' && !inQuote:
			return
		}
		p.i++
	}
}

func (p *challengeParser) token() string {
	start := p.i
	for !p.done() && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// challengeBody reads what follows an auth-scheme: nothing, a token68, or
// a comma-separated list of auth-params. It stops before the scheme of the
// next challenge.
func (p *challengeParser) challengeBody(c *AuthScheme) {
	if p.done() || p.peek() == ',' {
		return
	}
	if p.peek() != ' ' && p.peek() != '\t' {
		p.skipItem()
		return
	}
	p.skipWS()
	if t, ok := p.token68(); ok {
		c.Token68 = t
		return
	}
	for {
		p.skipListSeparators()
		if p.done() {
			return
		}
		start := p.i
		name := p.token()
		if name == "" {
			p.skipItem()
			continue
		}
		p.skipWS()
		if p.peek() != '=' {
			// A token not followed by "=" is the next challenge's scheme.
			p.i = start
			return
		}
		p.i++
		p.skipWS()
		value, ok := p.paramValue()
		p.skipWS()
		if !p.done() && p.peek() != ',' {
			p.skipItem()
			ok = false
		}
		if !ok {
			continue
		}
		key := strings.ToLower(name)
		if _, dup := c.Params[key]; !dup && len(c.Params) < maxParams {
			c.Params[key] = value
		}
	}
}

// token68 reads a token68 if one stands alone here (followed by the end
// or a comma); otherwise it reads nothing.
func (p *challengeParser) token68() (string, bool) {
	j := p.i
	for j < len(p.s) && isToken68Char(p.s[j]) {
		j++
	}
	if j == p.i {
		return "", false
	}
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	end := j
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	if j < len(p.s) && p.s[j] != ',' {
		return "", false
	}
	t := p.s[p.i:end]
	p.i = j
	return t, true
}

// paramValue reads a token or a quoted-string. ok is false for a value
// that is neither, or a quoted-string holding control characters (read to
// its end all the same, so that parsing goes on after it).
func (p *challengeParser) paramValue() (string, bool) {
	if p.peek() != '"' {
		t := p.token()
		return t, t != ""
	}
	p.i++
	var b strings.Builder
	bad := false
	for !p.done() {
		c := p.s[p.i]
		p.i++
		if c == '"' {
			return strings.ToValidUTF8(b.String(), "\uFFFD"), !bad
		}
		if c == '\\' && !p.done() {
			c = p.s[p.i]
			p.i++
		}
		bad = bad || isCTL(c)
		b.WriteByte(c)
	}
	return "", false // unterminated
}

// isCTL reports a control character not allowed in a quoted-string (tab is).
func isCTL(c byte) bool { return (c < 0x20 && c != '\t') || c == 0x7f }

// isTchar reports an RFC 9110 tchar.
func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// isToken68Char reports a token68 character other than the trailing "=".
func isToken68Char(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}
