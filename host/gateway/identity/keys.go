package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hashicorp/go-hclog"
)

// keySet is one fetch of an issuer's JWKS: its usable public signing keys.
type keySet struct {
	keys    []jose.JSONWebKey
	fetched time.Time
}

// find returns the key with kid that fits alg. Without a kid, the one key
// that fits alg, if exactly one does.
func (s *keySet) find(kid, alg string) *jose.JSONWebKey {
	var found *jose.JSONWebKey
	for i := range s.keys {
		k := &s.keys[i]
		if kid != "" && k.KeyID != kid || !fits(k, alg) {
			continue
		}
		if kid != "" {
			return k
		}
		if found != nil {
			return nil // ambiguous without a kid
		}
		found = k
	}
	return found
}

// fits reports whether k may verify a signature made with alg: meant for
// signing, not pinned to another algorithm, and of the algorithm's key type.
func fits(k *jose.JSONWebKey, alg string) bool {
	if k.Use != "" && k.Use != "sig" || k.Algorithm != "" && k.Algorithm != alg {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		return strings.HasPrefix(alg, "ES")
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// keySource keeps one issuer's keys: found by discovery (or configured),
// cached for JWKSMaxAge, and fetched again on an unknown key id at most
// once per JWKSRefetchInterval. One fetch runs at a time; requests that
// need it wait for it.
type keySource struct {
	issuer  string
	jwksURI string // configured; empty: discovered
	refetch time.Duration
	maxAge  time.Duration
	fetch   *fetcher
	now     func() time.Time
	log     hclog.Logger

	cur atomic.Pointer[keySet]

	mu         sync.Mutex // one fetch at a time; guards what follows
	discovered string
	lastTry    time.Time
	lastErr    error
}

// key returns the key to verify a token signed with alg under kid.
func (s *keySource) key(ctx context.Context, kid, alg string) (*jose.JSONWebKey, *Error) {
	set := s.cur.Load()
	if set != nil && s.now().Sub(set.fetched) < s.maxAge {
		if k := set.find(kid, alg); k != nil {
			return k, nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	set = s.cur.Load() // another request may have fetched meanwhile
	if set != nil && now.Sub(set.fetched) < s.maxAge {
		if k := set.find(kid, alg); k != nil {
			return k, nil
		}
	}
	if !s.lastTry.IsZero() && now.Sub(s.lastTry) < s.refetch {
		// Fetched (or tried) within the bound: no fetch for this kid.
		return s.stale(set, kid, alg)
	}
	s.lastTry = now
	fresh, err := s.fetchKeys(ctx)
	if err != nil {
		s.lastErr = err
		s.log.Warn("fetching an issuer's keys failed", "issuer", s.issuer, "error", err)
		return s.stale(set, kid, alg)
	}
	s.lastErr = nil
	s.cur.Store(fresh)
	s.log.Debug("fetched an issuer's keys", "issuer", s.issuer, "keys", len(fresh.keys))
	if k := fresh.find(kid, alg); k != nil {
		return k, nil
	}
	return nil, s.unknown(kid)
}

// ensure fetches the keys when none are held (within the refetch bound).
func (s *keySource) ensure(ctx context.Context) error {
	if set := s.cur.Load(); set != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur.Load() != nil {
		return nil
	}
	now := s.now()
	if !s.lastTry.IsZero() && now.Sub(s.lastTry) < s.refetch {
		if s.lastErr != nil {
			return s.lastErr
		}
		return nil
	}
	s.lastTry = now
	fresh, err := s.fetchKeys(ctx)
	if err != nil {
		s.lastErr = err
		return err
	}
	s.lastErr = nil
	s.cur.Store(fresh)
	return nil
}

// stale answers from the keys held when no fetch may happen now: a key
// still held is used (keys outlive their max age while the issuer cannot
// be reached); otherwise the kid is unknown, or, with no keys at all, the
// token cannot be checked yet.
func (s *keySource) stale(set *keySet, kid, alg string) (*jose.JSONWebKey, *Error) {
	if set != nil {
		if k := set.find(kid, alg); k != nil {
			return k, nil
		}
	}
	retry := int(math.Ceil((s.refetch - s.now().Sub(s.lastTry)).Seconds()))
	if set == nil {
		return nil, errUnavailable("the keys of the token's issuer could not be fetched", retry, s.lastErr)
	}
	if s.lastErr != nil {
		return nil, errUnavailable("the keys of the token's issuer could not be fetched", retry, s.lastErr)
	}
	return nil, s.unknown(kid)
}

func (s *keySource) unknown(kid string) *Error {
	if kid == "" {
		return errToken("the token names no key id and the issuer has no single key for its algorithm", nil)
	}
	return errToken("the token's key id is not among its issuer's keys", fmt.Errorf("kid %q", bounded(kid, 80)))
}

// fetchKeys fetches the JWKS, discovering its URL first when needed. The
// fetch serves every request waiting on it, so it does not end with the
// request that started it (a client hanging up would otherwise leave its
// issuer without keys until the refetch bound); the fetch timeout bounds
// it.
func (s *keySource) fetchKeys(ctx context.Context) (*keySet, error) {
	ctx = context.WithoutCancel(ctx)
	uri := s.jwksURI
	if uri == "" {
		if s.discovered == "" {
			d, err := s.discover(ctx)
			if err != nil {
				return nil, err
			}
			s.discovered = d
		}
		uri = s.discovered
	}
	what := fmt.Sprintf("the keys (JWKS) of issuer %s", s.issuer)
	body, err := s.fetch.get(ctx, uri, what)
	if err != nil {
		s.discovered = "" // discover again next time: the issuer may have moved them
		return nil, err
	}
	keys, err := parseKeys(body)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", what, uri, err)
	}
	return &keySet{keys: keys, fetched: s.now()}, nil
}

// parseKeys reads a JWKS document, keeping its public signing keys; a key
// this package cannot use (an encryption key, an unknown type, a private
// or symmetric key) is skipped, not an error.
func parseKeys(body []byte) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("not a JWKS document: %w", err)
	}
	if len(doc.Keys) > maxKeys {
		return nil, fmt.Errorf("%d keys, more than %d", len(doc.Keys), maxKeys)
	}
	var keys []jose.JSONWebKey
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil || !k.IsPublic() || !k.Valid() {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("no public signing key")
	}
	return keys, nil
}

// discover finds the issuer's jwks_uri: OIDC discovery first, then RFC
// 8414 authorization server metadata; the metadata must name the issuer
// exactly.
func (s *keySource) discover(ctx context.Context) (string, error) {
	var errs []error
	for _, where := range metadataURLs(s.issuer) {
		body, err := s.fetch.get(ctx, where, "the metadata of issuer "+s.issuer)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(body, &md); err != nil {
			errs = append(errs, fmt.Errorf("the metadata at %s is not JSON: %w", where, err))
			continue
		}
		if md.Issuer != s.issuer {
			errs = append(errs, fmt.Errorf("the metadata at %s names issuer %q, not %q", where, bounded(md.Issuer, 200), s.issuer))
			continue
		}
		if err := checkURL(md.JWKSURI, false); err != nil {
			errs = append(errs, fmt.Errorf("the metadata at %s: jwks_uri: %w", where, err))
			continue
		}
		return md.JWKSURI, nil
	}
	return "", fmt.Errorf("discover the keys of issuer %s: %w", s.issuer, errors.Join(errs...))
}

// metadataURLs are where an issuer's metadata may be: OIDC discovery
// (the issuer + /.well-known/openid-configuration) and RFC 8414 §3.1
// (/.well-known/oauth-authorization-server inserted before the path).
func metadataURLs(issuer string) []string {
	oidc := strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
	u, err := url.Parse(issuer)
	if err != nil {
		return []string{oidc}
	}
	u.Path = "/.well-known/oauth-authorization-server" + strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return []string{oidc, u.String()}
}

// bounded returns s cut to n bytes, marked when cut, with what could upset
// a log or a header replaced.
func bounded(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "..."
	}
	return quotable(s)
}
