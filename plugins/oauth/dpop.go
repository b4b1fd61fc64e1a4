package main

// DPoP (RFC 9449): the plugin binds a server's tokens to a key of its own
// and proves that it holds the key with every token request and every
// request to the resource. The key is one ES256 (P-256) key per server,
// made when it is first needed and kept beside the tokens
// (tokenstore.CreateDPoPKey: 0600, sealed where the folder is), and it
// goes with them on logout. JWKs, thumbprints and signatures are go-jose's.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hermes-agent/hermes/plugins/oauth/tokenstore"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// Values of oauth.dpop.
const (
	dpopAuto = "auto"
	dpopOn   = "true"
	dpopOff  = "false"
)

// dpopAlg is the one proof algorithm the plugin signs with.
const dpopAlg = jose.ES256

// tokenTypeDPoP is a DPoP-bound token's token_type (RFC 9449 §5).
const tokenTypeDPoP = "DPoP"

// maxNonce bounds a server's DPoP-Nonce (a nonce is a short opaque
// string; one that is not fit for a header is not kept).
const maxNonce = 1024

// parseDPoPMode reads oauth.dpop: auto (also absent or empty), or true or
// false as a string or a boolean.
func parseDPoPMode(m map[string]any) (string, error) {
	switch v := m["dpop"].(type) {
	case nil:
		return dpopAuto, nil
	case bool:
		if v {
			return dpopOn, nil
		}
		return dpopOff, nil
	case string:
		switch s := strings.ToLower(strings.TrimSpace(v)); s {
		case "", dpopAuto:
			return dpopAuto, nil
		case dpopOn, dpopOff:
			return s, nil
		}
	}
	return "", sdk.NewError(sdk.CodeConfig, "oauth.dpop: want auto, true or false, got %v", m["dpop"])
}

// dpopKey is a server's DPoP key, ready to sign proofs.
type dpopKey struct {
	signer jose.Signer
	// thumb is the public key's JWK SHA-256 thumbprint (RFC 7638),
	// base64url: the cnf.jkt of the tokens bound to it.
	thumb string
}

// newDPoPKey makes a fresh key and returns it with its private JWK, the
// form it is kept in.
func newDPoPKey() (*dpopKey, []byte, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("making a DPoP key: %w", err)
	}
	jwk := jose.JSONWebKey{Key: priv, Algorithm: string(dpopAlg), Use: "sig"}
	data, err := jwk.MarshalJSON()
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the DPoP key: %w", err)
	}
	k, err := dpopKeyOf(jwk)
	return k, data, err
}

// parseDPoPKey reads a kept key: a private P-256 JWK. The error never
// holds the key.
func parseDPoPKey(data []byte) (*dpopKey, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("not a JSON web key")
	}
	return dpopKeyOf(jwk)
}

func dpopKeyOf(jwk jose.JSONWebKey) (*dpopKey, error) {
	priv, ok := jwk.Key.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() || !jwk.Valid() {
		return nil, fmt.Errorf("not a private P-256 key")
	}
	pub := jwk.Public()
	sum, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("the key's thumbprint: %w", err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: dpopAlg, Key: priv},
		(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		return nil, fmt.Errorf("a signer of the key: %w", err)
	}
	return &dpopKey{signer: signer, thumb: base64.RawURLEncoding.EncodeToString(sum)}, nil
}

// proofClaims are a DPoP proof's claims (RFC 9449 §4.2).
type proofClaims struct {
	JTI   string           `json:"jti"`
	HTM   string           `json:"htm"`
	HTU   string           `json:"htu"`
	IAT   *jwt.NumericDate `json:"iat"`
	ATH   string           `json:"ath,omitempty"`
	Nonce string           `json:"nonce,omitempty"`
}

// proof signs a proof for a request of method to rawURL: typ dpop+jwt,
// the public key in the header, a fresh jti, htu without query or
// fragment, and, when given, the access token's hash (ath) and the
// server's nonce.
func (k *dpopKey) proof(method, rawURL, accessToken, nonce string) (string, error) {
	htu, err := htuOf(rawURL)
	if err != nil {
		return "", err
	}
	var jti [16]byte
	_, _ = rand.Read(jti[:]) // never fails (crypto/rand since Go 1.24)
	c := proofClaims{
		JTI: base64.RawURLEncoding.EncodeToString(jti[:]), HTM: method, HTU: htu,
		IAT: jwt.NewNumericDate(time.Now()), Nonce: nonce,
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		c.ATH = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	p, err := jwt.Signed(k.signer).Claims(c).Serialize()
	if err != nil {
		return "", fmt.Errorf("signing a DPoP proof: %w", err)
	}
	return p, nil
}

// htuOf is a request URL as a proof's htu: without query and fragment
// (RFC 9449 §4.2).
func htuOf(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("a DPoP proof needs an http(s) URL, got %q", shown(rawURL, 200))
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment, u.User = "", false, "", "", nil
	return u.String(), nil
}

// originOf is the origin a nonce belongs to (RFC 9449 §8, §9: a server's
// nonce is for that server).
func originOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// dpopState is what an authenticator keeps for DPoP between requests.
type dpopState struct {
	mu  sync.Mutex
	key *dpopKey
	// nonces are the servers' last DPoP-Nonce, by origin.
	nonces map[string]string
	// resourceAsks: a challenge of the resource had the DPoP scheme.
	resourceAsks bool
}

// forget drops the cached key (the files changed: a logout, or a login in
// another process, may have replaced it).
func (s *dpopState) forget() {
	s.mu.Lock()
	s.key = nil
	s.mu.Unlock()
}

// dpopKey returns the server's key: cached, else the kept one, else a new
// one kept now.
func (a *authenticator) dpopKey() (*dpopKey, error) {
	a.dpop.mu.Lock()
	defer a.dpop.mu.Unlock()
	if a.dpop.key != nil {
		return a.dpop.key, nil
	}
	data, err := a.store.LoadDPoPKey()
	if err == nil && data == nil {
		var fresh []byte
		if _, fresh, err = newDPoPKey(); err != nil {
			return nil, sdk.NewError(sdk.CodeAuth, "%v", err)
		}
		// Another process may have made one first: its key is the one.
		data, err = a.store.CreateDPoPKey(fresh)
		if err == nil {
			a.log.Debug("DPoP key made", "server", a.cfg.Server)
		}
	}
	if err != nil {
		return nil, sdk.NewError(sdk.CodeAuth, "the DPoP key of '%s': %v", a.cfg.Server, err)
	}
	k, err := parseDPoPKey(data)
	if err != nil {
		return nil, sdk.NewError(sdk.CodeAuth, "the DPoP key of '%s' in %s is unusable (%v); run: hermes mcp logout %s", a.cfg.Server, a.store.DPoPKeyPath(), err, a.cfg.Server)
	}
	a.dpop.key = k
	return k, nil
}

// nonceFor returns the nonce last received from rawURL's server.
func (a *authenticator) nonceFor(rawURL string) string {
	a.dpop.mu.Lock()
	defer a.dpop.mu.Unlock()
	return a.dpop.nonces[originOf(rawURL)]
}

// takeNonce keeps a DPoP-Nonce from rawURL's server; it reports whether
// the nonce is new.
func (a *authenticator) takeNonce(rawURL, nonce string) bool {
	if nonce == "" || len(nonce) > maxNonce || !printable(nonce) {
		return false
	}
	a.dpop.mu.Lock()
	defer a.dpop.mu.Unlock()
	if a.dpop.nonces == nil {
		a.dpop.nonces = map[string]string{}
	}
	o := originOf(rawURL)
	if a.dpop.nonces[o] == nonce {
		return false
	}
	a.dpop.nonces[o] = nonce
	return true
}

// noteChallenge remembers that the resource asked for DPoP (its challenge
// has the DPoP scheme): oauth.dpop auto then binds the tokens.
func (a *authenticator) noteChallenge(challenge []string) {
	if auth.OffersDPoP(challenge...) {
		a.dpop.mu.Lock()
		a.dpop.resourceAsks = true
		a.dpop.mu.Unlock()
	}
}

// useDPoP decides whether the token requests to d's authorization server
// bind the token: never with oauth.dpop false; with true, always (an
// authorization server that offers no algorithm the plugin signs with is
// a configuration error); with auto, when the server offers one and the
// resource asks for DPoP (its challenge, or its metadata's
// dpop_bound_access_tokens_required).
func (a *authenticator) useDPoP(d *discovered) (bool, error) {
	if a.set.DPoP == dpopOff {
		return false, nil
	}
	offered := slices.Contains(d.meta.DPoPSigningAlgValuesSupported, string(dpopAlg))
	if a.set.DPoP == dpopOn {
		if !offered {
			return false, sdk.NewError(sdk.CodeConfig, "oauth.dpop of '%s' is true, but the authorization server %s offers no DPoP algorithm hermes signs with (%s; it lists %s)",
				a.cfg.Server, d.meta.Issuer, dpopAlg, orNothing(d.meta.DPoPSigningAlgValuesSupported))
		}
		return true, nil
	}
	a.dpop.mu.Lock()
	asks := a.dpop.resourceAsks
	a.dpop.mu.Unlock()
	return offered && (asks || d.dpopRequired), nil
}

func orNothing(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return shown(strings.Join(l, " "), 200)
}

// prover signs the proofs of token requests (postForm) and keeps the
// authorization server's nonces; nil is no DPoP.
type prover struct {
	a   *authenticator
	key *dpopKey
}

// tokenProver is the prover for token requests to d's authorization
// server, or nil when they do not use DPoP (useDPoP). bound says the
// token in hand is DPoP-bound: its refresh must use the same key.
func (a *authenticator) tokenProver(d *discovered, bound bool) (*prover, error) {
	use, err := a.useDPoP(d)
	if err != nil || !(use || bound) {
		return nil, err
	}
	k, err := a.dpopKey()
	if err != nil {
		return nil, err
	}
	return &prover{a: a, key: k}, nil
}

// header is the DPoP header of a POST to endpoint, with the server's
// last nonce.
func (p *prover) header(endpoint string) (string, error) {
	return p.key.proof("POST", endpoint, "", p.a.nonceFor(endpoint))
}

// took keeps the DPoP-Nonce an answer from endpoint carried; it reports
// whether it was a new one.
func (p *prover) took(endpoint, nonce string) bool { return p.a.takeNonce(endpoint, nonce) }

// resourceHeaders are the headers that present t to the resource for a
// request of method to rawURL: Authorization Bearer, or for a DPoP-bound
// token Authorization DPoP with a fresh proof bound to the token (ath)
// and carrying the resource's nonce when one is known.
func (a *authenticator) resourceHeaders(t *tokenstore.Token, method, rawURL string) (map[string]string, error) {
	if !dpopBound(t) {
		return map[string]string{"Authorization": "Bearer " + t.AccessToken}, nil
	}
	k, err := a.dpopKey()
	if err != nil {
		return nil, err
	}
	if method == "" {
		method = "POST"
	}
	p, err := k.proof(method, rawURL, t.AccessToken, a.nonceFor(rawURL))
	if err != nil {
		return nil, sdk.NewError(sdk.CodeAuth, "a DPoP proof for '%s': %v", a.cfg.Server, err)
	}
	return map[string]string{"Authorization": "DPoP " + t.AccessToken, "DPoP": p}, nil
}

// dpopBound reports whether t is DPoP-bound (token_type DPoP).
func dpopBound(t *tokenstore.Token) bool {
	return t != nil && strings.EqualFold(t.TokenType, tokenTypeDPoP)
}
