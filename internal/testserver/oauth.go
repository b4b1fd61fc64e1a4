package testserver

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// AdminTool is the tool of --oauth-issuer that needs the admin scope
// (--oauth-admin-scope); it echoes its message.
const AdminTool = "admin_echo"

// jwksCacheTTL is how long the authorization server's signing keys are kept
// before they are fetched again; a token signed with an unknown key id
// fetches them at once.
const jwksCacheTTL = time.Minute

// addAdminTool adds admin_echo (Options.AdminTool).
func (st *state) addAdminTool() {
	if !st.opts.AdminTool {
		return
	}
	st.srv.AddTool(mcp.NewTool(AdminTool,
		mcp.WithDescription("Echoes message; with --oauth-issuer the token needs the admin scope."),
		mcp.WithString("message", mcp.Required(), mcp.Description("text to echo")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("message", "")), nil
	})
}

// resourceServer makes the HTTP server an OAuth 2.1 protected resource
// (--oauth-issuer): it serves RFC 9728 metadata, and accepts only JWT access
// tokens (RFC 9068) signed by the issuer's keys, for this server's MCP URL,
// unexpired, carrying the required scopes.
type resourceServer struct {
	issuer     string
	scopes     []string // needed for every request
	adminScope string   // needed for AdminTool calls
	client     *http.Client

	// dpop, when set, takes DPoP-bound tokens only (--oauth-dpop).
	dpop *dpopChecker

	mu      sync.Mutex
	keys    map[string]*rsa.PublicKey // by kid
	fetched time.Time
}

func newResourceServer(cfg *Config) *resourceServer {
	rs := &resourceServer{
		issuer:     cfg.OAuthIssuer,
		scopes:     cfg.OAuthScopes,
		adminScope: cfg.OAuthAdminScope,
		client:     &http.Client{Timeout: 10 * time.Second},
	}
	if cfg.OAuthDPoP {
		rs.dpop = newDPoPChecker(cfg.OAuthDPoPNonce)
	}
	return rs
}

// supported lists every scope the resource knows, for the metadata and the
// step-up challenge.
func (rs *resourceServer) supported() []string {
	all := slices.Clone(rs.scopes)
	if rs.adminScope != "" && !slices.Contains(all, rs.adminScope) {
		all = append(all, rs.adminScope)
	}
	return all
}

// servePRM serves the protected resource metadata of /mcp.
func (rs *resourceServer) servePRM(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	doc := map[string]any{
		"resource":                 baseURL(r) + MCPPath,
		"authorization_servers":    []string{rs.issuer},
		"scopes_supported":         rs.supported(),
		"bearer_methods_supported": []string{"header"},
	}
	if rs.dpop != nil {
		doc["dpop_bound_access_tokens_required"] = true
		doc["dpop_signing_alg_values_supported"] = dpopAlgs
	}
	_ = json.NewEncoder(w).Encode(doc)
}

// protect answers requests without a valid token with 401, and those whose
// token lacks a needed scope with 403 insufficient_scope, each with a
// WWW-Authenticate challenge naming the metadata.
func (rs *resourceServer) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == ProtectedResourcePath {
			next.ServeHTTP(w, r)
			return
		}
		scheme := "Bearer"
		if rs.dpop != nil {
			scheme = "DPoP"
		}
		challenge := func(status int, attrs string, scopes []string) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("%s %sresource_metadata=%q, scope=%q",
				scheme, attrs, baseURL(r)+ProtectedResourcePath, strings.Join(scopes, " ")))
			http.Error(w, http.StatusText(status), status)
		}
		auth := r.Header.Get("Authorization")
		sent, token, _ := strings.Cut(auth, " ")
		if !strings.EqualFold(sent, scheme) || token == "" {
			challenge(http.StatusUnauthorized, "", rs.scopes)
			return
		}
		token = strings.TrimSpace(token)
		granted, jkt, err := rs.validate(r.Context(), token, baseURL(r)+MCPPath)
		if err != nil {
			challenge(http.StatusUnauthorized, fmt.Sprintf("error=\"invalid_token\", error_description=%q, ", err.Error()), rs.scopes)
			return
		}
		if rs.dpop != nil {
			if nonce, err := rs.dpop.check(r, baseURL(r)+MCPPath, token, jkt); err != nil {
				code := "invalid_dpop_proof"
				if nonce != "" {
					code = "use_dpop_nonce"
					w.Header().Set("DPoP-Nonce", nonce)
				}
				challenge(http.StatusUnauthorized, fmt.Sprintf("error=%q, error_description=%q, ", code, err.Error()), rs.scopes)
				return
			}
		}
		need := rs.scopes
		if rs.adminScope != "" && r.Method == http.MethodPost {
			if m, tool := peekCall(r); m == "tools/call" && tool == AdminTool {
				need = rs.supported()
			}
		}
		for _, s := range need {
			if !slices.Contains(granted, s) {
				challenge(http.StatusForbidden, `error="insufficient_scope", `, need)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// validate verifies a JWT access token for resource and returns its scopes
// and the thumbprint of the key it is bound to (cnf.jkt, RFC 9449 §6.1;
// "" for a Bearer token).
func (rs *resourceServer) validate(ctx context.Context, token, resource string) ([]string, string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, "", errors.New("not a JWT access token")
	}
	var header struct {
		Alg, Kid, Typ string
	}
	var claims struct {
		Iss   string          `json:"iss"`
		Aud   json.RawMessage `json:"aud"`
		Exp   *int64          `json:"exp"`
		Nbf   int64           `json:"nbf"`
		Scope string          `json:"scope"`
		Cnf   struct {
			JKT string `json:"jkt"`
		} `json:"cnf"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return nil, "", fmt.Errorf("JWT header: %w", err)
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return nil, "", fmt.Errorf("JWT claims: %w", err)
	}
	if header.Alg != "RS256" {
		return nil, "", fmt.Errorf("unsupported JWT alg %q", header.Alg)
	}
	if typ := strings.ToLower(header.Typ); typ != "at+jwt" && typ != "application/at+jwt" {
		return nil, "", fmt.Errorf("JWT typ %q is not an access token", header.Typ)
	}
	key, err := rs.key(ctx, header.Kid)
	if err != nil {
		return nil, "", err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, "", errors.New("JWT signature is not base64url")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], sig); err != nil {
		return nil, "", errors.New("bad JWT signature")
	}
	if claims.Iss != rs.issuer {
		return nil, "", fmt.Errorf("token issued by %q, not %q", claims.Iss, rs.issuer)
	}
	var aud []string
	if json.Unmarshal(claims.Aud, &aud) != nil {
		var one string
		_ = json.Unmarshal(claims.Aud, &one)
		aud = []string{one}
	}
	if !slices.Contains(aud, resource) {
		return nil, "", fmt.Errorf("token audience %q is not %s", aud, resource)
	}
	now := time.Now().Unix()
	if claims.Exp == nil || now >= *claims.Exp {
		return nil, "", errors.New("token expired")
	}
	if claims.Nbf > now {
		return nil, "", errors.New("token not yet valid")
	}
	return strings.Fields(claims.Scope), claims.Cnf.JKT, nil
}

func decodeSegment(seg string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// key returns the issuer's RSA key kid, fetching the key set when it is
// stale or does not hold kid.
func (rs *resourceServer) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if k, ok := rs.keys[kid]; ok && time.Since(rs.fetched) < jwksCacheTTL {
		return k, nil
	}
	keys, err := rs.fetchKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("fetching the authorization server's keys: %w", err)
	}
	rs.keys, rs.fetched = keys, time.Now()
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("unknown signing key %q", kid)
}

// fetchKeys reads the issuer's RFC 8414 metadata and its JWKS.
func (rs *resourceServer) fetchKeys(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := rs.getJSON(ctx, strings.TrimSuffix(rs.issuer, "/")+"/.well-known/oauth-authorization-server", &meta); err != nil {
		return nil, err
	}
	if meta.Issuer != rs.issuer || meta.JWKSURI == "" {
		return nil, fmt.Errorf("metadata of %s names issuer %q, jwks_uri %q", rs.issuer, meta.Issuer, meta.JWKSURI)
	}
	var set struct {
		Keys []struct {
			Kty, Kid, N, E string
		} `json:"keys"`
	}
	if err := rs.getJSON(ctx, meta.JWKSURI, &set); err != nil {
		return nil, err
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) > 4 {
			continue
		}
		keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	return keys, nil
}

func (rs *resourceServer) getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := rs.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
