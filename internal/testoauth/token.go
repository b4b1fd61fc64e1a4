package testoauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// AccessToken runs the authorization code flow with PKCE as a freshly
// registered public client, for resource and scopes, and returns the
// access token: an RS256 JWT with aud = resource (for a test of a resource
// server that validates it, such as the gateway).
func (as *AS) AccessToken(ctx context.Context, resource string, scopes ...string) (string, error) {
	const redirect = "http://127.0.0.1/callback"
	reg, _ := json.Marshal(map[string]any{"redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code"}, "response_types": []string{"code"}, "application_type": "native"})
	var client struct {
		ClientID string `json:"client_id"`
	}
	if err := as.postJSON(ctx, "/reg", "application/json", string(reg), &client); err != nil {
		return "", fmt.Errorf("register a client: %w", err)
	}
	verifier := make([]byte, 32)
	_, _ = rand.Read(verifier)
	v := base64.RawURLEncoding.EncodeToString(verifier)
	challenge := sha256.Sum256([]byte(v))
	q := url.Values{"response_type": {"code"}, "client_id": {client.ClientID}, "redirect_uri": {redirect},
		"scope": {strings.Join(scopes, " ")}, "resource": {resource}, "state": {"s"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(challenge[:])}, "code_challenge_method": {"S256"}}
	back, err := as.BrowserRedirect(ctx, as.Issuer+"/auth?"+q.Encode())
	if err != nil {
		return "", fmt.Errorf("authorize: %w", err)
	}
	u, err := url.Parse(back)
	if err != nil || u.Query().Get("code") == "" {
		return "", fmt.Errorf("authorize: redirected to %s", back)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {u.Query().Get("code")}, "redirect_uri": {redirect},
		"client_id": {client.ClientID}, "code_verifier": {v}, "resource": {resource}}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := as.postJSON(ctx, "/token", "application/x-www-form-urlencoded", form.Encode(), &tok); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("token: no access token")
	}
	return tok.AccessToken, nil
}

// postJSON posts body to path and decodes the JSON answer into out.
func (as *AS) postJSON(ctx context.Context, path, contentType, body string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.Issuer+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: HTTP %d: %s", path, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}
