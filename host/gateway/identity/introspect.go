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
// the positive answers briefly.
type introspector struct {
	cfg          IntrospectionConfig
	clientID     string
	clientSecret string

	cache *tokenCache
}

func newIntrospector(cfg IntrospectionConfig, id, secret string) *introspector {
	return &introspector{cfg: cfg, clientID: id, clientSecret: secret, cache: newTokenCache(cfg.CacheSize)}
}

// introspect validates tok through is's introspection endpoint.
func (a *Authenticator) introspect(ctx context.Context, is *issuer, tok string) (*Principal, *Error) {
	in := is.intro
	sum := sha256.Sum256([]byte(tok))
	now := a.now()
	if p := in.cache.lookup(sum, now); p != nil {
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
	in.cache.store(sum, p, until, now)
	return p, nil
}

// tokenCache keeps accepted tokens' Principals, keyed by the token's
// sha256 (never the token), each until a time, at most size of them.
type tokenCache struct {
	size int

	mu sync.Mutex
	m  map[[sha256.Size]byte]cached
}

// cached is a Principal and until when it may be reused.
type cached struct {
	p     *Principal
	until time.Time
}

func newTokenCache(size int) *tokenCache {
	return &tokenCache{size: size, m: map[[sha256.Size]byte]cached{}}
}

// lookup returns a copy of the Principal kept for sum, if still valid at
// now.
func (c *tokenCache) lookup(sum [sha256.Size]byte, now time.Time) *Principal {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[sum]
	if !ok {
		return nil
	}
	if !now.Before(e.until) {
		delete(c.m, sum)
		return nil
	}
	return e.p.clone()
}

// store keeps p until until, making room when the cache is full: expired
// entries go first, then arbitrary ones.
func (c *tokenCache) store(sum [sha256.Size]byte, p *Principal, until, now time.Time) {
	if c.size <= 0 || !now.Before(until) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.size {
		for k, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < c.size {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[sum] = cached{p: p.clone(), until: until}
}

// len is the number of entries kept.
func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
