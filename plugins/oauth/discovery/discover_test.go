package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
)

// mcpServer is a protected MCP endpoint at /mcp answering 401 with the
// given challenge (a format string given the site's URL, or "" for none).
func mcpServer(t *testing.T, challenge string) *site {
	s := newSite(t)
	s.mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if challenge != "" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(challenge, s.URL))
		}
		w.WriteHeader(http.StatusUnauthorized)
	})
	return s
}

// probe makes the unauthenticated request a client starts with and
// returns the WWW-Authenticate header lines of the answer.
func probe(t *testing.T, s *site) []string {
	t.Helper()
	resp, err := s.Client().Post(s.URL+"/mcp", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("probe: HTTP %d", resp.StatusCode)
	}
	return resp.Header.Values("WWW-Authenticate")
}

func discover(t *testing.T, s *site) (*discovery.Result, error) {
	t.Helper()
	return discovery.Discover(context.Background(), s.Client(), s.URL+"/mcp", probe(t, s)...)
}

func TestDiscoverMetadataScenarios(t *testing.T) {
	for _, tc := range []struct {
		name      string
		prmPath   string // where the PRM lives
		inHeader  bool   // whether the 401 names it
		asPrefix  string // the issuer's path
		asPath    string // where the AS metadata lives
		rootTraps bool
	}{
		{"metadata-default", prmPath + "/mcp", true, "", oauthWK, true},
		{"metadata-var1", prmPath + "/mcp", false, "", oidcWK, false},
		{"metadata-var2", prmPath, false, "/tenant1", oauthWK + "/tenant1", false},
		{"metadata-var3", "/custom/metadata/location.json", true, "/tenant1", "/tenant1" + oidcWK, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newSite(t)
			as.json(tc.asPath, func() any { return asDoc(as.URL+tc.asPrefix, as.URL+tc.asPrefix) })
			if tc.asPrefix != "" {
				as.status(oauthWK, http.StatusTeapot)
			}
			challenge := `Bearer error="invalid_token", error_description="Missing Authorization header"`
			if tc.inHeader {
				challenge += `, resource_metadata="%s` + tc.prmPath + `"`
			}
			s := mcpServer(t, challenge)
			resource := s.URL + "/mcp"
			if tc.prmPath == prmPath {
				resource = s.URL // the root PRM names the origin
			}
			s.json(tc.prmPath, func() any { return prmDoc(resource, as.URL+tc.asPrefix) })
			if tc.rootTraps {
				s.status(prmPath, http.StatusTeapot)
			}

			r, err := discover(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if r.Resource != resource {
				t.Errorf("Resource = %q, want %q exactly as published", r.Resource, resource)
			}
			if r.Legacy || r.DefaultEndpoints || r.ResourceMetadata == nil || r.Scope != "" {
				t.Errorf("result %+v", r)
			}
			if r.AuthServer.AuthorizationEndpoint != as.URL+tc.asPrefix+"/authorize" || r.AuthServer.URL != as.URL+tc.asPath {
				t.Errorf("AS metadata %+v", r.AuthServer)
			}
			if s.wasRequested(prmPath) && tc.rootTraps {
				t.Error("root PRM requested")
			}
			if tc.asPrefix != "" && as.wasRequested(oauthWK) {
				t.Error("root AS metadata requested for a path issuer")
			}
		})
	}
}

func TestDiscoverScope(t *testing.T) {
	for _, tc := range []struct {
		name, challenge string
		supported       []string
		want            string
	}{
		{"scope-from-www-authenticate", `Bearer scope="mcp:basic", resource_metadata="%s` + prmPath + `/mcp"`, []string{"mcp:basic", "mcp:other"}, "mcp:basic"},
		{"scope-from-scopes-supported", `Bearer resource_metadata="%s` + prmPath + `/mcp"`, []string{"mcp:basic", "mcp:read", "mcp:write"}, "mcp:basic mcp:read mcp:write"},
		{"scope-omitted-when-undefined", `Bearer resource_metadata="%s` + prmPath + `/mcp"`, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newSite(t)
			as.json(oauthWK, func() any { return asDoc(as.URL, as.URL) })
			s := mcpServer(t, tc.challenge)
			s.json(prmPath+"/mcp", func() any {
				d := prmDoc(s.URL+"/mcp", as.URL)
				if tc.supported != nil {
					d["scopes_supported"] = tc.supported
				}
				return d
			})
			r, err := discover(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if r.Scope != tc.want {
				t.Errorf("Scope = %q, want %q", r.Scope, tc.want)
			}
		})
	}
}

func TestDiscoverLegacyMetadata(t *testing.T) {
	// 2025-03-26-oauth-metadata-backcompat: no PRM; metadata at the MCP
	// server's origin root, endpoints under /oauth. Conformance 0.1.16
	// publishes issuer {origin}/oauth, 0.2.0 publishes {origin}.
	for _, issuerPath := range []string{"/oauth", ""} {
		t.Run("issuer"+issuerPath, func(t *testing.T) {
			s := mcpServer(t, `Bearer error="invalid_token"`)
			s.json(oauthWK, func() any { return asDoc(s.URL+issuerPath, s.URL+"/oauth") })
			r, err := discover(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Legacy || r.DefaultEndpoints || r.ResourceMetadata != nil {
				t.Errorf("result %+v", r)
			}
			if r.AuthServer.TokenEndpoint != s.URL+"/oauth/token" || r.AuthServer.Issuer != s.URL+issuerPath {
				t.Errorf("AS metadata %+v", r.AuthServer)
			}
			if r.Resource != s.URL+"/mcp" {
				t.Errorf("Resource = %q, want the canonical server URL", r.Resource)
			}
		})
	}

	t.Run("issuer on another origin", func(t *testing.T) {
		s := mcpServer(t, "")
		s.json(oauthWK, func() any { return asDoc("https://attacker.example.com", s.URL) })
		_, err := discover(t, s)
		if !errors.Is(err, discovery.ErrIssuerMismatch) {
			t.Errorf("got %v, want ErrIssuerMismatch", err)
		}
	})
}

func TestDiscoverDefaultEndpoints(t *testing.T) {
	// 2025-03-26-oauth-endpoint-fallback: no metadata at all.
	s := mcpServer(t, `Bearer`)
	r, err := discover(t, s)
	if err != nil {
		t.Fatal(err)
	}
	m := r.AuthServer
	if !r.Legacy || !r.DefaultEndpoints || m.AuthorizationEndpoint != s.URL+"/authorize" ||
		m.TokenEndpoint != s.URL+"/token" || m.RegistrationEndpoint != s.URL+"/register" || m.Issuer != s.URL {
		t.Errorf("result %+v, metadata %+v", r, m)
	}
	if err := m.CheckPKCE(); err != nil {
		t.Error(err)
	}
	if again, err := discovery.ParseServerMetadata(m.Raw); err != nil || again.TokenEndpoint != m.TokenEndpoint {
		t.Errorf("made-up metadata does not read back: %v", err)
	}
	if r.Resource != s.URL+"/mcp" {
		t.Errorf("Resource = %q", r.Resource)
	}
}

func TestDiscoverRefusals(t *testing.T) {
	t.Run("resource-mismatch", func(t *testing.T) {
		as := newSite(t)
		as.json(oauthWK, func() any { return asDoc(as.URL, as.URL) })
		s := mcpServer(t, `Bearer resource_metadata="%s`+prmPath+`/mcp"`)
		s.json(prmPath+"/mcp", func() any { return prmDoc("https://evil.example.com/mcp", as.URL) })
		_, err := discover(t, s)
		if !errors.Is(err, discovery.ErrResourceMismatch) {
			t.Fatalf("got %v, want ErrResourceMismatch", err)
		}
		if len(as.requested()) != 0 {
			t.Errorf("went on to the authorization server: %q", as.requested())
		}
	})
	t.Run("metadata-issuer-mismatch", func(t *testing.T) {
		as := newSite(t)
		as.json(oauthWK+"/mismatched-as", func() any { return asDoc("https://attacker.example.com", as.URL+"/mismatched-as") })
		s := mcpServer(t, `Bearer resource_metadata="%s`+prmPath+`/mcp"`)
		s.json(prmPath+"/mcp", func() any { return prmDoc(s.URL+"/mcp", as.URL+"/mismatched-as") })
		if _, err := discover(t, s); !errors.Is(err, discovery.ErrIssuerMismatch) {
			t.Errorf("got %v, want ErrIssuerMismatch", err)
		}
	})
	t.Run("PRM server error", func(t *testing.T) {
		s := mcpServer(t, "")
		s.status(prmPath+"/mcp", http.StatusServiceUnavailable)
		s.json(oauthWK, func() any { return asDoc(s.URL, s.URL) })
		if _, err := discover(t, s); err == nil || s.wasRequested(oauthWK) {
			t.Errorf("a failing PRM endpoint led to the legacy fallback: %v", err)
		}
	})
	t.Run("AS metadata missing", func(t *testing.T) {
		as := newSite(t)
		s := mcpServer(t, "")
		s.json(prmPath+"/mcp", func() any { return prmDoc(s.URL+"/mcp", as.URL) })
		if _, err := discover(t, s); !errors.Is(err, discovery.ErrNoServerMetadata) {
			t.Errorf("got %v, want ErrNoServerMetadata", err)
		}
	})
}

func TestDiscoverAuthorizationServerMigration(t *testing.T) {
	// authorization-server-migration: the PRM switches issuers; the new
	// result names the new issuer, and a client registered at the old one
	// carries the old issuer, so the caller registers again.
	as1, as2 := newSite(t), newSite(t)
	for _, as := range []*site{as1, as2} {
		as.json(oauthWK, func() any { return asDoc(as.URL, as.URL) })
		as.mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"client_id":"client-of-%s"}`, as.URL)
		})
	}
	var current atomic.Pointer[site]
	current.Store(as1)
	s := mcpServer(t, `Bearer scope="mcp:basic", resource_metadata="%s`+prmPath+`/mcp"`)
	s.json(prmPath+"/mcp", func() any { return prmDoc(s.URL+"/mcp", current.Load().URL) })

	r1, err := discover(t, s)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := discovery.Register(context.Background(), s.Client(), r1.AuthServer, discovery.ClientRequest{ClientName: "Hermes"})
	if err != nil {
		t.Fatal(err)
	}
	current.Store(as2)
	r2, err := discover(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if r2.AuthServer.Issuer != as2.URL || c1.Issuer != as1.URL || c1.Issuer == r2.AuthServer.Issuer {
		t.Errorf("issuers: client %q, new AS %q", c1.Issuer, r2.AuthServer.Issuer)
	}
}

func TestStepUpScope(t *testing.T) {
	for _, tc := range []struct {
		name, current string
		headers       []string
		want          string
		ok            bool
	}{
		{"new scope joins the old (SEP-2350)", "mcp:basic", []string{`Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="https://x/prm"`}, "mcp:basic mcp:write", true},
		{"several new scopes", "a", []string{`Bearer scope="b a c", error="insufficient_scope"`}, "a b c", true},
		{"nothing new: give up (scope-retry-limit)", "mcp:basic", []string{`Bearer error="insufficient_scope", scope="mcp:basic", error_description="Scope upgrade will never succeed"`}, "", false},
		{"no scope in the challenge", "a", []string{`Bearer error="insufficient_scope"`}, "", false},
		{"not insufficient_scope", "a", []string{`Bearer error="invalid_token", scope="b"`}, "", false},
		{"no Bearer challenge", "a", []string{`Basic realm="x"`}, "", false},
		{"from the second header line", "", []string{`Basic realm="x"`, `Bearer error="insufficient_scope", scope="b"`}, "b", true},
		{"invalid tokens dropped", "a", []string{`Bearer error="insufficient_scope", scope="b \"c\\ d"`}, "a b d", true},
	} {
		got, ok := discovery.StepUpScope(tc.current, tc.headers...)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: StepUpScope = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestChooseScope(t *testing.T) {
	prm := &discovery.ResourceMetadata{ScopesSupported: []string{"x", "y"}}
	for _, tc := range []struct {
		challenge string
		prm       *discovery.ResourceMetadata
		want      string
	}{
		{"a  b", prm, "a b"},
		{"", prm, "x y"},
		{"", &discovery.ResourceMetadata{}, ""},
		{"", nil, ""},
		{"\x01", prm, "x y"},
	} {
		if got := discovery.ChooseScope(tc.challenge, tc.prm); got != tc.want {
			t.Errorf("ChooseScope(%q) = %q, want %q", tc.challenge, got, tc.want)
		}
	}
}
