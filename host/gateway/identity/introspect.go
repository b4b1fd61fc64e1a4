package identity

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// introspector asks an issuer's RFC 7662 endpoint about tokens and keeps
// the positive answers briefly, keyed by the token's sha256 (never the
// token).
type introspector struct {
	cfg          IntrospectionConfig
	clientID     string
	clientSecret string

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cached
}

// cached is a positive answer and until when it may be reused.
type cached struct {
	p     *Principal
	until time.Time
}

func newIntrospector(cfg IntrospectionConfig, id, secret string) *introspector {
	return &introspector{cfg: cfg, clientID: id, clientSecret: secret, cache: map[[sha256.Size]byte]cached{}}
}

// introspect validates tok through is's introspection endpoint.
func (a *Authenticator) introspect(ctx context.Context, is *issuer, tok string) (*Principal, *Error) {
	in := is.intro
	sum := sha256.Sum256([]byte(tok))
	now := a.now()
	if p := in.lookup(sum, now); p != nil {
		return p, nil
	}
	form := url.Values{"token": {tok}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequest(http.MethodPost, in.cfg.Endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, errUnavailable("the token's issuer could not be asked about it", 1, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: the credentials are form-encoded before Basic.
	req.SetBasicAuth(url.QueryEscape(in.clientID), url.QueryEscape(in.clientSecret))
	body, err := a.fetch.do(ctx, req, "the introspection answer of issuer "+is.cfg.Issuer)
	if err != nil {
		return nil, errUnavailable("the token's issuer could not be asked about it", 1, err)
	}
	var answer struct {
		Active bool `json:"active"`
		jwt.Claims
	}
	var raw map[string]any
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, errUnavailable("the token's issuer answered the introspection with no valid JSON", 1, err)
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, errUnavailable("the token's issuer answered the introspection with no valid JSON", 1, err)
	}
	if !answer.Active {
		return nil, errToken("the token is not active", nil)
	}
	c := answer.Claims
	if c.Issuer == "" {
		c.Issuer = is.cfg.Issuer // the endpoint speaks for its issuer
	}
	delete(raw, "active")
	p, e := a.principal(is, c, raw, false)
	if e != nil {
		return nil, e
	}
	until := now.Add(in.cfg.CacheTTL)
	if c.Expiry != nil && c.Expiry.Time().Before(until) {
		until = c.Expiry.Time()
	}
	in.store(sum, p, until, now)
	return p.clone(), nil
}

// lookup returns a cached answer still valid at now.
func (in *introspector) lookup(sum [sha256.Size]byte, now time.Time) *Principal {
	in.mu.Lock()
	defer in.mu.Unlock()
	c, ok := in.cache[sum]
	if !ok {
		return nil
	}
	if !now.Before(c.until) {
		delete(in.cache, sum)
		return nil
	}
	return c.p.clone()
}

// store keeps a positive answer, making room when the cache is full:
// expired answers go first, then arbitrary ones.
func (in *introspector) store(sum [sha256.Size]byte, p *Principal, until, now time.Time) {
	if in.cfg.CacheSize <= 0 || !now.Before(until) {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.cache) >= in.cfg.CacheSize {
		for k, c := range in.cache {
			if !now.Before(c.until) {
				delete(in.cache, k)
			}
		}
		for k := range in.cache {
			if len(in.cache) < in.cfg.CacheSize {
				break
			}
			delete(in.cache, k)
		}
	}
	in.cache[sum] = cached{p: p, until: until}
}

// cacheLen is the number of answers kept.
func (in *introspector) cacheLen() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.cache)
}
