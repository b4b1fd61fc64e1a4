package discovery_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// site is a loopback HTTP server that records every path asked for.
type site struct {
	*httptest.Server
	mux  *http.ServeMux
	mu   sync.Mutex
	hits []string
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{mux: http.NewServeMux()}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits = append(s.hits, r.URL.RequestURI())
		s.mu.Unlock()
		s.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// json serves doc() as JSON at path.
func (s *site) json(path string, doc func() any) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc())
	})
}

// status answers path with a bare status code.
func (s *site) status(path string, code int) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
}

func (s *site) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hits)
}

func (s *site) wasRequested(path string) bool { return slices.Contains(s.requested(), path) }

// asDoc is a typical authorization server metadata document for an issuer
// whose endpoints live under base.
func asDoc(issuer, base string) map[string]any {
	return map[string]any{
		"issuer":                                issuer,
		"authorization_endpoint":                base + "/authorize",
		"token_endpoint":                        base + "/token",
		"registration_endpoint":                 base + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
	}
}

func prmDoc(resource string, servers ...string) map[string]any {
	return map[string]any{"resource": resource, "authorization_servers": servers}
}

func errContains(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}
