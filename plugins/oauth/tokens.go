package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
	"github.com/hermes-agent/hermes/plugins/oauth/tokenstore"
)

// maxTokenResponse bounds a token endpoint's answer.
const maxTokenResponse = 1 << 20

// maxExpiresIn bounds a token's expires_in (ten years): a hostile value
// must not wrap expires_at around into the past, where the token would
// count as expired and be refreshed on every request.
const maxExpiresIn = 10 * 365 * 24 * 3600

// tokenError is an OAuth error answer of a token endpoint (RFC 6749 §5.2):
// its code and description, never the request's secrets.
type tokenError struct {
	Status      int
	Code        string
	Description string
}

func (e *tokenError) Error() string {
	msg := fmt.Sprintf("the authorization server refused the token request (HTTP %d", e.Status)
	if e.Code != "" {
		msg += ", " + e.Code
	}
	msg += ")"
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// oauthCode returns the OAuth error code of err ("invalid_grant", ...), or "".
func oauthCode(err error) string {
	var te *tokenError
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

// client is how the plugin authenticates itself at the token endpoint.
type client struct {
	ID, Secret string
	// AuthMethod is none, client_secret_basic, client_secret_post or
	// private_key_jwt.
	AuthMethod string
	// Key signs the client assertions of private_key_jwt, for Audience
	// (the authorization server's issuer identifier).
	Key      *signingKey
	Audience string
}

// postForm posts form to an endpoint of the authorization server with the
// client's authentication, and a DPoP proof when p is not nil, and
// returns the answer's body, bounded; an answer other than 200 is a
// *tokenError.
func postForm(ctx context.Context, hc *http.Client, endpoint string, c client, form url.Values, p *prover) ([]byte, http.Header, error) {
	form = cloneValues(form)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	switch c.AuthMethod {
	case discovery.AuthClientSecretBasic:
		// RFC 6749 §2.3.1: both parts form-encoded first.
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ID)+":"+url.QueryEscape(c.Secret))))
	case discovery.AuthClientSecretPost:
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case authPrivateKeyJWT:
		if err := addClientAssertion(c, form); err != nil {
			return nil, nil, err
		}
	default:
		form.Set("client_id", c.ID)
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if p != nil {
		proof, err := p.header(endpoint)
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("DPoP", proof)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", endpoint, scrubURLError(err))
	}
	defer resp.Body.Close()
	if p != nil {
		p.took(endpoint, resp.Header.Get("DPoP-Nonce"))
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading the answer: %w", endpoint, err)
	}
	if len(raw) > maxTokenResponse {
		return nil, nil, fmt.Errorf("%s: the answer is over the 1 MiB limit", endpoint)
	}
	if resp.StatusCode != http.StatusOK {
		te := &tokenError{Status: resp.StatusCode}
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(raw, &e) == nil {
			te.Code, te.Description = shown(e.Error, 60), shown(e.Description, 200)
		}
		return nil, nil, te
	}
	return raw, resp.Header, nil
}

// clock is the time a token request is counted from; tests set it.
var clock = time.Now

// tokenRequest posts form to the token endpoint with the client's
// authentication and returns the token it issued. With p, the request
// carries a DPoP proof, is sent once more when the server asks for its
// nonce (use_dpop_nonce, RFC 9449 §8), and may be answered with a
// DPoP-bound token.
func tokenRequest(ctx context.Context, hc *http.Client, endpoint string, c client, form url.Values, p *prover) (*tokenstore.Token, error) {
	// expires_in counts from when the server issued the token, which is
	// after the request left and before the answer arrived: count from
	// the request (in whole seconds, rounded down), so the token never
	// looks valid for longer than it is, however slow the answer.
	sent := clock().Unix()
	var nonce string
	if p != nil {
		nonce = p.a.nonceFor(endpoint)
	}
	raw, hdr, err := postForm(ctx, hc, endpoint, c, form, p)
	if p != nil && oauthCode(err) == "use_dpop_nonce" {
		// Once, and only with a nonce other than the one refused.
		if n := p.a.nonceFor(endpoint); n != "" && n != nonce {
			raw, hdr, err = postForm(ctx, hc, endpoint, c, form, p)
		}
	}
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(hdr.Get("Content-Type")); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, fmt.Errorf("token endpoint %s answered with Content-Type %s, not JSON", endpoint, shown(mt, 60))
	}
	var tr struct {
		AccessToken  string      `json:"access_token"`
		TokenType    string      `json:"token_type"`
		RefreshToken string      `json:"refresh_token"`
		ExpiresIn    json.Number `json:"expires_in"`
		Scope        string      `json:"scope"`
		IDToken      string      `json:"id_token"`
	}
	if err := json.Unmarshal(raw, &tr); err != nil {
		return nil, fmt.Errorf("token endpoint %s: the answer is not a token response (JSON: %v)", endpoint, err)
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("token endpoint %s: the answer has no access_token", endpoint)
	}
	if !printable(tr.AccessToken) || !printable(tr.RefreshToken) {
		return nil, fmt.Errorf("token endpoint %s: the token holds characters that cannot go into an HTTP header", endpoint)
	}
	typ := "Bearer"
	switch {
	case tr.TokenType == "", strings.EqualFold(tr.TokenType, "bearer"):
	case p != nil && strings.EqualFold(tr.TokenType, tokenTypeDPoP):
		typ = tokenTypeDPoP
	case p != nil:
		return nil, fmt.Errorf("token endpoint %s issued a %s token; hermes uses Bearer and DPoP tokens only", endpoint, shown(tr.TokenType, 30))
	default:
		return nil, fmt.Errorf("token endpoint %s issued a %s token; hermes uses Bearer tokens only", endpoint, shown(tr.TokenType, 30))
	}
	t := &tokenstore.Token{AccessToken: tr.AccessToken, TokenType: typ, RefreshToken: tr.RefreshToken, Scope: tr.Scope}
	if n, err := tr.ExpiresIn.Int64(); err == nil && n > 0 {
		t.ExpiresIn = min(n, maxExpiresIn)
	} else if f, err := tr.ExpiresIn.Float64(); err == nil && f > 0 {
		t.ExpiresIn = int64(min(f, maxExpiresIn))
	}
	if t.ExpiresIn > 0 {
		t.ExpiresAt = sent + t.ExpiresIn
	}
	t.Account = accountOf(tr.IDToken)
	return t, nil
}

// accountOf reads who an id_token is for (email, else sub), for status
// only: the token is not verified, and nothing is trusted on it.
func accountOf(idToken string) string {
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Email string `json:"email"`
		Sub   string `json:"sub"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return ""
	}
	if c.Email != "" {
		return shown(c.Email, 120)
	}
	return shown(c.Sub, 120)
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// printable reports whether s is fit for an HTTP header value.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// shown makes a value from the network fit for one line of a message:
// control characters dropped, cut to n runes.
func shown(s string, n int) string {
	var b strings.Builder
	count := 0
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			continue
		}
		if count == n {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}

// scrubURLError drops the URL from a *url.Error (it may hold a code or
// token in its query) and keeps the cause.
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
