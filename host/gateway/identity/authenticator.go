package identity

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hashicorp/go-hclog"
)

// Options are what an Authenticator needs besides its Config.
type Options struct {
	// Logger receives fetches and refusals (never a token); nil: none.
	Logger hclog.Logger
	// Env returns the values of the named variables that are set (the
	// introspection client credentials); nil: the process environment.
	Env func(names []string) (map[string]string, error)
	// Transport makes the outbound requests (discovery, keys,
	// introspection); nil: a copy of http.DefaultTransport.
	Transport http.RoundTripper
	// Now is the clock tokens and caches are checked against; nil:
	// time.Now.
	Now func() time.Time
}

// Authenticator turns a request's bearer token into a Principal. It is
// safe for concurrent use.
type Authenticator struct {
	cfg      Config
	log      hclog.Logger
	now      func() time.Time
	fetch    *fetcher
	issuers  map[string]*issuer // by issuer identifier
	opaque   *issuer            // the issuer that introspects opaque tokens, or nil
	static   []staticToken
	verified *tokenCache               // JWTs whose signature and claims were checked
	algs     []jose.SignatureAlgorithm // every issuer's, for parsing
	metaURL  string
	metaPath string
}

// issuer is one accepted issuer with its keys or introspection endpoint.
type issuer struct {
	cfg   IssuerConfig
	algs  []jose.SignatureAlgorithm
	keys  *keySource
	intro *introspector
}

// staticToken is a configured static token: the hash and who it is.
type staticToken struct {
	hash [sha256.Size]byte
	p    Principal
}

// New builds an Authenticator from cfg; an error names the key at fault.
// It fetches nothing: keys are fetched on first use (or by Warm).
func New(cfg Config, o Options) (*Authenticator, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Env == nil {
		o.Env = processEnv
	}
	a := &Authenticator{
		cfg:      cfg,
		log:      o.Logger.Named("identity"),
		now:      o.Now,
		fetch:    newFetcher(o.Transport, cfg.FetchTimeout, cfg.MaxFetchBytes),
		issuers:  map[string]*issuer{},
		verified: newTokenCache(cfg.TokenCacheSize),
	}
	a.metaURL, a.metaPath = metadataLocation(cfg.Resource)
	for i, ic := range cfg.Issuers {
		is := &issuer{cfg: ic}
		for _, alg := range ic.Algorithms {
			is.algs = append(is.algs, jose.SignatureAlgorithm(alg))
			if !slices.Contains(a.algs, jose.SignatureAlgorithm(alg)) {
				a.algs = append(a.algs, jose.SignatureAlgorithm(alg))
			}
		}
		is.keys = &keySource{
			issuer:  ic.Issuer,
			jwksURI: ic.JWKSURI,
			refetch: ic.JWKSRefetchInterval,
			maxAge:  ic.JWKSMaxAge,
			fetch:   a.fetch,
			now:     a.now,
			log:     a.log,
		}
		if in := ic.Introspection; in != nil {
			key := fmt.Sprintf("gateway.issuers[%d].introspection", i)
			env, err := o.Env([]string{in.ClientIDEnv, in.ClientSecretEnv})
			if err != nil {
				return nil, fmt.Errorf("%s: read the client credentials: %w", key, err)
			}
			if env[in.ClientIDEnv] == "" {
				return nil, fmt.Errorf("%s.client_id_env: %s is not set", key, in.ClientIDEnv)
			}
			if env[in.ClientSecretEnv] == "" {
				return nil, fmt.Errorf("%s.client_secret_env: %s is not set", key, in.ClientSecretEnv)
			}
			is.intro = newIntrospector(*in, env[in.ClientIDEnv], env[in.ClientSecretEnv])
			a.opaque = is
		}
		a.issuers[ic.Issuer] = is
	}
	for _, t := range cfg.Tokens {
		var st staticToken
		hex.Decode(st.hash[:], []byte(strings.ToLower(t.SHA256))) // checked by validate
		st.p = Principal{
			Subject: t.Subject,
			Groups:  slices.Clone(t.Groups),
			Scopes:  slices.Clone(t.Scopes),
			Claims:  map[string]any{},
			Static:  true,
		}
		a.static = append(a.static, st)
	}
	return a, nil
}

// processEnv reads the process environment.
func processEnv(names []string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			out[n] = v
		}
	}
	return out, nil
}

// Warm fetches the keys of every issuer that validates tokens locally, so
// a readiness check can report an unreachable issuer before a person
// does; it returns the first failure, naming the issuer.
func (a *Authenticator) Warm(ctx context.Context) error {
	var errs []error
	for _, ic := range a.cfg.Issuers {
		is := a.issuers[ic.Issuer]
		if is.intro != nil {
			continue
		}
		if err := is.keys.ensure(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Authenticate returns the Principal of r's bearer token, or an *Error to
// answer r with (WriteError). Only the Authorization header is read: a
// token in the URL is refused, and a form body is never read.
func (a *Authenticator) Authenticate(r *http.Request) (*Principal, error) {
	p, e := a.authenticate(r)
	if e != nil {
		a.logRefusal(e)
		return nil, e
	}
	return p, nil
}

func (a *Authenticator) authenticate(r *http.Request) (*Principal, *Error) {
	if r.URL != nil && r.URL.Query().Has("access_token") {
		return nil, errRequest("a token in the URL is not accepted; send it in the Authorization header")
	}
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return nil, errNoToken()
	}
	if len(vals) > 1 {
		return nil, errRequest("more than one Authorization header")
	}
	scheme, rest, _ := strings.Cut(vals[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return nil, errNoToken() // another scheme: as if none (RFC 6750 §3.1)
	}
	return a.token(r.Context(), strings.TrimLeft(rest, " "))
}

// AuthenticateToken returns the Principal of a bearer token given
// directly (as `hermes mcp gateway check --token FILE` does).
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*Principal, error) {
	p, e := a.token(ctx, token)
	if e != nil {
		a.logRefusal(e)
		return nil, e
	}
	return p, nil
}

func (a *Authenticator) logRefusal(e *Error) {
	if e.Status == http.StatusServiceUnavailable {
		a.log.Warn("could not check a bearer token", "error", e.Error())
		return
	}
	if e.Code != "" {
		a.log.Debug("refused a bearer token", "error", e.Error())
	}
}

// token checks a presented token: its size and characters, then a static
// token, a JWT, or an opaque token for introspection.
func (a *Authenticator) token(ctx context.Context, tok string) (*Principal, *Error) {
	if tok == "" {
		return nil, errRequest("the bearer token is empty")
	}
	if len(tok) > a.cfg.MaxTokenBytes {
		return nil, errToken(fmt.Sprintf("the token is longer than %d bytes (gateway.max_token_bytes)", a.cfg.MaxTokenBytes), nil)
	}
	if !b64token(tok) {
		return nil, errRequest("the bearer token has characters RFC 6750 does not allow")
	}
	if p := a.matchStatic(tok); p != nil {
		return p, nil
	}
	var p *Principal
	var e *Error
	switch {
	case strings.Count(tok, ".") == 2:
		p, e = a.jwt(ctx, tok)
	case a.opaque != nil:
		p, e = a.introspect(ctx, a.opaque, tok)
	default:
		e = errToken("the token is neither a JWT nor a configured static token", nil)
	}
	if e != nil {
		e.cause = scrub(e.cause, tok)
	}
	return p, e
}

// matchStatic returns the Principal of the static token tok, comparing its
// sha256 with every configured hash in constant time.
func (a *Authenticator) matchStatic(tok string) *Principal {
	if len(a.static) == 0 {
		return nil
	}
	h := sha256.Sum256([]byte(tok))
	found := -1
	for i := range a.static {
		if subtle.ConstantTimeCompare(h[:], a.static[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil
	}
	return a.static[found].p.clone()
}

// clone returns a copy of p that its receiver may change.
func (p Principal) clone() *Principal {
	p.Groups = slices.Clone(p.Groups)
	p.Scopes = slices.Clone(p.Scopes)
	claims := make(map[string]any, len(p.Claims))
	for k, v := range p.Claims {
		claims[k] = v
	}
	p.Claims = claims
	return &p
}

// b64token reports whether s is an RFC 6750 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func b64token(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0 {
			continue
		}
		break
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// scrub returns err with any piece of tok (the whole, or a segment of 8
// bytes or more) replaced, so no error carries a token even when a library
// quotes its input.
func scrub(err error, tok string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := strings.ReplaceAll(msg, tok, "[token]")
	for _, seg := range strings.Split(tok, ".") {
		if len(seg) >= 8 {
			clean = strings.ReplaceAll(clean, seg, "[token]")
		}
	}
	if clean == msg {
		return err
	}
	return errors.New(clean)
}
