package discovery_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
)

const (
	oauthWK = "/.well-known/oauth-authorization-server"
	oidcWK  = "/.well-known/openid-configuration"
)

func TestServerMetadataURLs(t *testing.T) {
	for issuer, want := range map[string][]string{
		"https://as.example":          {"https://as.example" + oauthWK, "https://as.example" + oidcWK},
		"https://as.example/":         {"https://as.example" + oauthWK, "https://as.example" + oidcWK},
		"https://as.example/tenant1":  {"https://as.example" + oauthWK + "/tenant1", "https://as.example" + oidcWK + "/tenant1", "https://as.example/tenant1" + oidcWK},
		"https://as.example/t/a/":     {"https://as.example" + oauthWK + "/t/a", "https://as.example" + oidcWK + "/t/a", "https://as.example/t/a" + oidcWK},
		"https://AS.example:443/t":    {"https://as.example" + oauthWK + "/t", "https://as.example" + oidcWK + "/t", "https://as.example/t" + oidcWK},
		"http://127.0.0.1:9000/realm": {"http://127.0.0.1:9000" + oauthWK + "/realm", "http://127.0.0.1:9000" + oidcWK + "/realm", "http://127.0.0.1:9000/realm" + oidcWK},
	} {
		got, err := discovery.ServerMetadataURLs(issuer)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ServerMetadataURLs(%q) = %q, %v; want %q", issuer, got, err, want)
		}
	}
	for _, bad := range []string{"https://as.example/?q=1", "https://as.example/#f", "file:///as", "as.example"} {
		if _, err := discovery.ServerMetadataURLs(bad); err == nil {
			t.Errorf("ServerMetadataURLs(%q) accepted", bad)
		}
	}
}

func TestFetchServerMetadataVariants(t *testing.T) {
	for _, tc := range []struct {
		name, prefix, path string
	}{
		{"root oauth (metadata-default)", "", oauthWK},
		{"root OIDC (metadata-var1)", "", oidcWK},
		{"path-inserted oauth (metadata-var2)", "/tenant1", oauthWK + "/tenant1"},
		{"path-inserted OIDC", "/tenant1", oidcWK + "/tenant1"},
		{"path-appended OIDC (metadata-var3)", "/tenant1", "/tenant1" + oidcWK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newSite(t)
			as.json(tc.path, func() any {
				d := asDoc(as.URL+tc.prefix, as.URL+tc.prefix)
				d["revocation_endpoint"] = as.URL + "/revoke"
				d["device_authorization_endpoint"] = as.URL + "/device"
				d["scopes_supported"] = []string{"openid", "offline_access"}
				d["client_id_metadata_document_supported"] = true
				d["authorization_response_iss_parameter_supported"] = true
				return d
			})
			if tc.prefix != "" {
				as.status(oauthWK, http.StatusTeapot) // the path issuer's root trap
			}
			m, err := discovery.FetchServerMetadata(context.Background(), as.Client(), as.URL+tc.prefix)
			if err != nil {
				t.Fatal(err)
			}
			base := as.URL + tc.prefix
			if m.Issuer != base || m.AuthorizationEndpoint != base+"/authorize" || m.TokenEndpoint != base+"/token" ||
				m.RegistrationEndpoint != base+"/register" || m.RevocationEndpoint != as.URL+"/revoke" ||
				m.DeviceAuthorizationEndpoint != as.URL+"/device" || !m.ClientIDMetadataDocumentSupported ||
				!m.AuthorizationResponseIssParameterSupported || m.URL != as.URL+tc.path ||
				!slices.Equal(m.ScopesSupported, []string{"openid", "offline_access"}) ||
				!slices.Equal(m.TokenEndpointAuthMethodsSupported, []string{"none"}) || len(m.Raw) == 0 {
				t.Errorf("got %+v", m)
			}
			if tc.prefix != "" && as.wasRequested(oauthWK) {
				t.Error("asked the root metadata for an issuer with a path")
			}
			// Raw reads back the same.
			again, err := discovery.ParseServerMetadata(m.Raw)
			if err != nil || again.TokenEndpoint != m.TokenEndpoint {
				t.Errorf("Raw does not read back: %v", err)
			}
		})
	}
}

func TestFetchServerMetadataIssuerMismatch(t *testing.T) {
	// metadata-issuer-mismatch: the document claims another issuer.
	as := newSite(t)
	as.json(oauthWK+"/mismatched-as", func() any {
		return asDoc("https://attacker.example.com", as.URL+"/mismatched-as")
	})
	_, err := discovery.FetchServerMetadata(context.Background(), as.Client(), as.URL+"/mismatched-as")
	if !errors.Is(err, discovery.ErrIssuerMismatch) {
		t.Fatalf("got %v, want ErrIssuerMismatch", err)
	}
	errContains(t, err, "https://attacker.example.com", as.URL+"/mismatched-as")

	// One trailing slash either way names the same well-known URLs.
	for _, pair := range [][2]string{{"/t/", "/t"}, {"/t", "/t/"}, {"", "/"}} {
		as := newSite(t)
		path := oauthWK + strings.TrimSuffix(pair[0], "/")
		as.json(path, func() any { return asDoc(as.URL+pair[1], as.URL) })
		if _, err := discovery.FetchServerMetadata(context.Background(), as.Client(), as.URL+pair[0]); err != nil {
			t.Errorf("asked %q, document says %q: %v", pair[0], pair[1], err)
		}
	}
}

func TestFetchServerMetadataPKCE(t *testing.T) {
	for name, methods := range map[string]any{"absent": nil, "plain only": []string{"plain"}} {
		as := newSite(t)
		as.json(oauthWK, func() any {
			d := asDoc(as.URL, as.URL)
			if methods == nil {
				delete(d, "code_challenge_methods_supported")
			} else {
				d["code_challenge_methods_supported"] = methods
			}
			return d
		})
		_, err := discovery.FetchServerMetadata(context.Background(), as.Client(), as.URL)
		if !errors.Is(err, discovery.ErrPKCEUnsupported) {
			t.Errorf("%s: got %v, want ErrPKCEUnsupported", name, err)
		}
		errContains(t, err, "code_challenge_methods_supported", "refus")
	}
}

func TestFetchServerMetadataAbsent(t *testing.T) {
	as := newSite(t)
	_, err := discovery.FetchServerMetadata(context.Background(), as.Client(), as.URL+"/tenant1")
	if !errors.Is(err, discovery.ErrNoServerMetadata) {
		t.Fatalf("got %v, want ErrNoServerMetadata", err)
	}
	want := []string{oauthWK + "/tenant1", oidcWK + "/tenant1", "/tenant1" + oidcWK}
	if got := as.requested(); !slices.Equal(got, want) {
		t.Errorf("requested %q, want %q", got, want)
	}
}

func TestFetchServerMetadataTooLarge(t *testing.T) {
	as := newSite(t)
	as.mux.HandleFunc(oauthWK, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for range 17 {
			_, _ = w.Write([]byte(strings.Repeat(" ", 64<<10)))
		}
	})
	_, err := discovery.FetchServerMetadata(context.Background(), as.Client(), as.URL)
	if !errors.Is(err, discovery.ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	errContains(t, err, "server's authorization server metadata", "1048576-byte limit")
}

func TestParseServerMetadataRejects(t *testing.T) {
	ok := `"issuer":"https://as","authorization_endpoint":"https://as/a","token_endpoint":"https://as/t"`
	for doc, want := range map[string]string{
		`{"authorization_endpoint":"https://as/a","token_endpoint":"https://as/t"}`:                         "issuer is missing",
		`{"issuer":"https://as?x","authorization_endpoint":"https://as/a","token_endpoint":"https://as/t"}`: "query or fragment",
		`{"issuer":"https://as","authorization_endpoint":"https://as/a"}`:                                   "token_endpoint is missing",
		`{"issuer":"https://as","token_endpoint":"https://as/t"}`:                                           "both missing",
		`{` + ok + `,"registration_endpoint":"javascript:alert(1)"}`:                                        "only http and https",
		`{` + ok + `,"token_endpoint":"https://as/t#x"}`:                                                    "fragment",
		`{` + ok + `,"grant_types_supported":"authorization_code"}`:                                         "not an array of strings",
		`{` + ok + `,"scopes_supported":[` + strings.Repeat(`"s",`, 300) + `"s"]}`:                          "more than 256",
		`{` + ok + `,"issuer":"` + strings.Repeat("a", 5000) + `"}`:                                         "longer than 4096",
	} {
		_, err := discovery.ParseServerMetadata([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseServerMetadata(%.80s) = %v, want an error containing %q", doc, err, want)
		}
	}
	// Booleans count only when literally true.
	m, err := discovery.ParseServerMetadata([]byte(`{` + ok + `,"authorization_response_iss_parameter_supported":"true","client_id_metadata_document_supported":1}`))
	if err != nil || m.AuthorizationResponseIssParameterSupported || m.ClientIDMetadataDocumentSupported {
		t.Errorf("non-boolean flags read as %+v, %v", m, err)
	}
}

func TestValidateIssuerParam(t *testing.T) {
	const issuer = "http://localhost:3000"
	advertised := &discovery.ServerMetadata{Issuer: issuer, AuthorizationResponseIssParameterSupported: true}
	silent := &discovery.ServerMetadata{Issuer: issuer}
	for _, tc := range []struct {
		name    string
		meta    *discovery.ServerMetadata
		iss     string
		present bool
		ok      bool
	}{
		{"iss-supported", advertised, issuer, true, true},
		{"iss-not-advertised", silent, "", false, true},
		{"iss-supported-missing", advertised, "", false, false},
		{"iss-wrong-issuer", advertised, "https://evil.example.com", true, false},
		{"iss-unexpected", silent, "https://evil.example.com", true, false},
		{"iss-normalized (trailing slash)", advertised, issuer + "/", true, false},
		{"case folding", advertised, "HTTP://LOCALHOST:3000", true, false},
		{"default port", &discovery.ServerMetadata{Issuer: "https://as.example", AuthorizationResponseIssParameterSupported: true}, "https://as.example:443", true, false},
		{"percent-encoding", &discovery.ServerMetadata{Issuer: "https://as.example/t~1"}, "https://as.example/t%7E1", true, false},
		{"present but empty", silent, "", true, false},
		{"matching, not advertised", silent, issuer, true, true},
		{"no recorded issuer", nil, "https://evil.example.com", true, true},
	} {
		err := discovery.ValidateIssuerParam(tc.meta, tc.iss, tc.present)
		if (err == nil) != tc.ok {
			t.Errorf("%s: got %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, discovery.ErrIssuerMismatch) {
			t.Errorf("%s: %v is not ErrIssuerMismatch", tc.name, err)
		}
	}
	err := discovery.ValidateIssuerParam(advertised, "https://evil.example.com/\x1b[31m"+strings.Repeat("x", 500), true)
	errContains(t, err, `\x1b[31m`, "…")
	if strings.Contains(err.Error(), "\x1b") || strings.Contains(err.Error(), strings.Repeat("x", 300)) {
		t.Errorf("hostile iss not escaped and cut: %q", err)
	}
}

func FuzzParseServerMetadata(f *testing.F) {
	for _, s := range []string{
		`{"issuer":"https://as.example","authorization_endpoint":"https://as.example/authorize","token_endpoint":"https://as.example/token","registration_endpoint":"https://as.example/register","code_challenge_methods_supported":["S256"],"scopes_supported":["openid"],"client_id_metadata_document_supported":true,"authorization_response_iss_parameter_supported":true}`,
		`{"issuer":"http://127.0.0.1:1/t","device_authorization_endpoint":"http://127.0.0.1:1/d","token_endpoint":"http://127.0.0.1:1/t/token","grant_types_supported":null}`,
		`{"issuer":"https://a","token_endpoint":"https://a/\u0000","authorization_endpoint":"https://a/\ud800"}`,
		`{}`, `[]`, `{"issuer":`, `{"issuer":"https://a","issuer":"ftp://b"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := discovery.ParseServerMetadata(data)
		if err != nil {
			if !utf8.ValidString(err.Error()) || len(err.Error()) > 4096 {
				t.Fatalf("error message not bounded/valid: %q", err)
			}
			return
		}
		if m.Issuer == "" || m.TokenEndpoint == "" || (m.AuthorizationEndpoint == "" && m.DeviceAuthorizationEndpoint == "") {
			t.Fatalf("accepted incomplete metadata %+v", m)
		}
		if strings.ContainsAny(m.Issuer, "?#") {
			t.Fatalf("accepted issuer %q", m.Issuer)
		}
		for _, s := range []string{m.Issuer, m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint, m.RevocationEndpoint, m.DeviceAuthorizationEndpoint} {
			if s == "" {
				continue
			}
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || strings.Contains(s, "#") {
				t.Fatalf("accepted URL %q", s)
			}
			if !utf8.ValidString(s) || len(s) > 4096 {
				t.Fatalf("accepted value %q", s)
			}
		}
		for _, l := range [][]string{m.ScopesSupported, m.ResponseTypesSupported, m.GrantTypesSupported, m.CodeChallengeMethodsSupported, m.TokenEndpointAuthMethodsSupported} {
			if len(l) > 256 {
				t.Fatalf("list of %d", len(l))
			}
			for _, s := range l {
				if !utf8.ValidString(s) || len(s) > 4096 {
					t.Fatalf("accepted value %q", s)
				}
			}
		}
		if _, err := discovery.ParseServerMetadata(m.Raw); err != nil {
			t.Fatalf("Raw does not parse again: %v", err)
		}
	})
}
