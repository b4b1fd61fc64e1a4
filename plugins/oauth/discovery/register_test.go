package discovery_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
)

// registrar is an authorization server with a registration endpoint that
// records the request body and answers with status and body.
type registrar struct {
	*site
	meta *discovery.ServerMetadata
	mu   sync.Mutex
	got  map[string]any
	ct   string
}

func newRegistrar(t *testing.T, supported []string, status int, answer string) *registrar {
	reg := &registrar{site: newSite(t)}
	reg.mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		reg.mu.Lock()
		reg.ct = r.Header.Get("Content-Type")
		_ = json.Unmarshal(body, &reg.got)
		reg.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	})
	reg.meta = &discovery.ServerMetadata{
		Issuer:                            reg.URL,
		AuthorizationEndpoint:             reg.URL + "/authorize",
		TokenEndpoint:                     reg.URL + "/token",
		RegistrationEndpoint:              reg.URL + "/register",
		TokenEndpointAuthMethodsSupported: supported,
	}
	return reg
}

func (reg *registrar) request() map[string]any {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return reg.got
}

func TestRegisterRequestBody(t *testing.T) {
	reg := newRegistrar(t, []string{"none"}, http.StatusCreated,
		`{"client_id":"abc","client_secret":"s3cret","client_id_issued_at":1700000000,"client_secret_expires_at":0,"client_name":"Hermes Agent"}`)
	info, err := discovery.Register(context.Background(), reg.Client(), reg.meta, discovery.ClientRequest{
		ClientName:   "Hermes Agent",
		RedirectURIs: []string{"http://127.0.0.1:8123/callback"},
		Scope:        "mcp:basic",
		DeviceCode:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := reg.request()
	want := map[string]any{
		"application_type":           "native",
		"client_name":                "Hermes Agent",
		"redirect_uris":              []any{"http://127.0.0.1:8123/callback"},
		"grant_types":                []any{"authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"},
		"response_types":             []any{"code"},
		"token_endpoint_auth_method": "none",
		"scope":                      "mcp:basic",
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("request body\n got %s\nwant %s", gotJSON, wantJSON)
	}
	reg.mu.Lock()
	ct := reg.ct
	reg.mu.Unlock()
	if ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if info.ClientID != "abc" || info.ClientSecret != "s3cret" || info.ClientIDIssuedAt != 1700000000 ||
		info.Issuer != reg.URL || info.TokenEndpointAuthMethod != "none" || len(info.Raw) == 0 {
		t.Errorf("info %+v", info)
	}
}

func TestRegisterMinimalBody(t *testing.T) {
	reg := newRegistrar(t, nil, http.StatusOK, `{"client_id":"abc"}`)
	if _, err := discovery.Register(context.Background(), reg.Client(), reg.meta, discovery.ClientRequest{ClientName: "H"}); err != nil {
		t.Fatal(err)
	}
	got := reg.request()
	if _, has := got["scope"]; has {
		t.Error("scope sent though unknown")
	}
	if got["grant_types"].([]any)[1] != "refresh_token" || len(got["grant_types"].([]any)) != 2 {
		t.Errorf("grant_types %v", got["grant_types"])
	}
	if rs, ok := got["redirect_uris"].([]any); !ok || len(rs) != 0 {
		t.Errorf("redirect_uris %v, want []", got["redirect_uris"])
	}
}

func TestRegisterAuthMethod(t *testing.T) {
	for _, tc := range []struct {
		name       string
		supported  []string
		answer     string
		wantAsked  string
		wantMethod string
	}{
		{"public client", []string{"none"}, `{"client_id":"a"}`, "none", "none"},
		{"server lists nothing", nil, `{"client_id":"a"}`, "none", "none"},
		{"basic only (token-endpoint-auth-basic)", []string{"client_secret_basic"},
			`{"client_id":"a","client_secret":"s","token_endpoint_auth_method":"client_secret_basic"}`, "client_secret_basic", "client_secret_basic"},
		{"post only (token-endpoint-auth-post)", []string{"client_secret_post"},
			`{"client_id":"a","client_secret":"s","token_endpoint_auth_method":"client_secret_post"}`, "client_secret_post", "client_secret_post"},
		{"secret issued to a public client, method unsaid", []string{"none"}, `{"client_id":"a","client_secret":"s"}`, "none", "none"},
		{"secret issued, nothing listed: RFC 8414 default", nil, `{"client_id":"a","client_secret":"s"}`, "none", "client_secret_basic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newRegistrar(t, tc.supported, http.StatusCreated, tc.answer)
			info, err := discovery.Register(context.Background(), reg.Client(), reg.meta, discovery.ClientRequest{ClientName: "H"})
			if err != nil {
				t.Fatal(err)
			}
			if asked := reg.request()["token_endpoint_auth_method"]; asked != tc.wantAsked {
				t.Errorf("asked for %v, want %s", asked, tc.wantAsked)
			}
			if info.TokenEndpointAuthMethod != tc.wantMethod {
				t.Errorf("method %q, want %q", info.TokenEndpointAuthMethod, tc.wantMethod)
			}
		})
	}
}

func TestRegisterErrors(t *testing.T) {
	hostile := "bad\x1b[2J\r\nInjected: yes " + strings.Repeat("x", 400)
	body, _ := json.Marshal(map[string]any{"error": "invalid_client_metadata", "error_description": hostile, "client_secret": "leaked-secret"})
	reg := newRegistrar(t, nil, http.StatusBadRequest, string(body))
	_, err := discovery.Register(context.Background(), reg.Client(), reg.meta, discovery.ClientRequest{ClientName: "H"})
	if !errors.Is(err, discovery.ErrRegistration) {
		t.Fatalf("got %v, want ErrRegistration", err)
	}
	errContains(t, err, "HTTP 400", `"invalid_client_metadata"`, `\x1b[2J\r\n`, "…", reg.URL+"/register")
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\r\n") || strings.Contains(msg, strings.Repeat("x", 201)) || strings.Contains(msg, "leaked-secret") {
		t.Errorf("error not sanitized: %q", msg)
	}

	for answer, want := range map[string]string{
		`{"client_secret":"topsecret"}`:                   "client_id is missing",
		`{"client_id":"a\u0007b"}`:                        "outside printable ASCII",
		`{"client_id":"a","client_secret":"s\u00e9cret"}`: "client_secret has characters",
		`<html>`: "not a JSON object",
	} {
		reg := newRegistrar(t, nil, http.StatusCreated, answer)
		_, err := discovery.Register(context.Background(), reg.Client(), reg.meta, discovery.ClientRequest{})
		if !errors.Is(err, discovery.ErrRegistration) || !strings.Contains(err.Error(), want) {
			t.Errorf("answer %s: got %v, want ErrRegistration with %q", answer, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), "s\u00e9cret")) {
			t.Errorf("secret echoed: %v", err)
		}
	}

	if _, err := discovery.Register(context.Background(), nil, &discovery.ServerMetadata{Issuer: "https://as"}, discovery.ClientRequest{}); !errors.Is(err, discovery.ErrRegistration) {
		t.Errorf("no endpoint: got %v", err)
	}
	if _, err := discovery.Register(context.Background(), nil, &discovery.ServerMetadata{RegistrationEndpoint: "file:///x"}, discovery.ClientRequest{}); !errors.Is(err, discovery.ErrScheme) {
		t.Errorf("file endpoint: got %v", err)
	}
}

func TestRegisterTooLarge(t *testing.T) {
	reg := newRegistrar(t, nil, http.StatusCreated, `{"client_id":"a","pad":"`+strings.Repeat("p", discovery.MaxDocumentSize)+`"}`)
	_, err := discovery.Register(context.Background(), reg.Client(), reg.meta, discovery.ClientRequest{})
	if !errors.Is(err, discovery.ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	errContains(t, err, "server's registration response", "1048576-byte limit")
}

func TestChooseClient(t *testing.T) {
	const cimd = "https://conformance-test.local/client-metadata.json"
	meta := func(cimdOK bool, registration bool, methods ...string) *discovery.ServerMetadata {
		m := &discovery.ServerMetadata{Issuer: "https://as.example", ClientIDMetadataDocumentSupported: cimdOK, TokenEndpointAuthMethodsSupported: methods}
		if registration {
			m.RegistrationEndpoint = "https://as.example/register"
		}
		return m
	}
	for _, tc := range []struct {
		name string
		meta *discovery.ServerMetadata
		cfg  discovery.ClientConfig
		want discovery.ClientChoice
	}{
		{"basic-cimd", meta(true, true, "none"), discovery.ClientConfig{ClientMetadataURL: cimd},
			discovery.ClientChoice{Kind: discovery.ClientMetadataDocument, ClientID: cimd, AuthMethod: "none"}},
		{"CIMD unsupported: DCR", meta(false, true), discovery.ClientConfig{ClientMetadataURL: cimd},
			discovery.ClientChoice{Kind: discovery.ClientDynamic}},
		{"pre-registration: basic listed", meta(true, false, "client_secret_basic"), discovery.ClientConfig{ClientID: "pre", ClientSecret: "sec", ClientMetadataURL: cimd},
			discovery.ClientChoice{Kind: discovery.ClientPreRegistered, ClientID: "pre", ClientSecret: "sec", AuthMethod: "client_secret_basic"}},
		{"pre-registered, nothing listed: basic", meta(false, false), discovery.ClientConfig{ClientID: "pre", ClientSecret: "sec"},
			discovery.ClientChoice{Kind: discovery.ClientPreRegistered, ClientID: "pre", ClientSecret: "sec", AuthMethod: "client_secret_basic"}},
		{"pre-registered, post only", meta(false, false, "client_secret_post", "none"), discovery.ClientConfig{ClientID: "pre", ClientSecret: "sec"},
			discovery.ClientChoice{Kind: discovery.ClientPreRegistered, ClientID: "pre", ClientSecret: "sec", AuthMethod: "client_secret_post"}},
		{"pre-registered, secret but only none", meta(false, false, "none"), discovery.ClientConfig{ClientID: "pre", ClientSecret: "sec"},
			discovery.ClientChoice{Kind: discovery.ClientPreRegistered, ClientID: "pre", ClientSecret: "sec", AuthMethod: "none"}},
		{"pre-registered public client", meta(false, true, "client_secret_basic", "none"), discovery.ClientConfig{ClientID: "pre"},
			discovery.ClientChoice{Kind: discovery.ClientPreRegistered, ClientID: "pre", AuthMethod: "none"}},
		{"DCR", meta(false, true), discovery.ClientConfig{},
			discovery.ClientChoice{Kind: discovery.ClientDynamic}},
	} {
		got, err := discovery.ChooseClient(tc.meta, tc.cfg)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}

	_, err := discovery.ChooseClient(meta(false, false), discovery.ClientConfig{ClientMetadataURL: cimd})
	if !errors.Is(err, discovery.ErrNoClient) {
		t.Fatalf("got %v, want ErrNoClient", err)
	}
	errContains(t, err, "oauth.client_id", "config.yaml", "https://as.example")

	for _, bad := range []string{"http://x/meta.json", "https://x/", "https://x", "https://x/m#f"} {
		if _, err := discovery.ChooseClient(meta(true, true), discovery.ClientConfig{ClientMetadataURL: bad}); err == nil {
			t.Errorf("CIMD URL %q accepted", bad)
		}
	}
}

func TestSelectAuthMethod(t *testing.T) {
	for _, tc := range []struct {
		supported  []string
		registered string
		secret     bool
		want       string
	}{
		{nil, "", false, "none"},
		{nil, "", true, "client_secret_basic"},
		{[]string{"client_secret_post"}, "", true, "client_secret_post"},
		{[]string{"client_secret_post", "client_secret_basic"}, "", true, "client_secret_basic"},
		{[]string{"client_secret_post", "client_secret_basic"}, "client_secret_post", true, "client_secret_post"},
		{[]string{"client_secret_basic"}, "client_secret_post", true, "client_secret_basic"},
		{[]string{"none"}, "client_secret_basic", false, "none"},
		{[]string{"private_key_jwt"}, "private_key_jwt", true, "none"},
		{nil, "none", true, "none"},
	} {
		if got := discovery.SelectAuthMethod(tc.supported, tc.registered, tc.secret); got != tc.want {
			t.Errorf("SelectAuthMethod(%q, %q, %v) = %q, want %q", tc.supported, tc.registered, tc.secret, got, tc.want)
		}
	}
}

func FuzzParseClientInfo(f *testing.F) {
	for _, s := range []string{
		`{"client_id":"abc","client_secret":"s","client_secret_expires_at":0,"client_id_issued_at":1,"token_endpoint_auth_method":"none"}`,
		`{"client_id":"https://x/cimd.json","client_secret_expires_at":1e300}`,
		`{"client_id":""}`, `{}`, `null`, `{"client_id":"\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := discovery.ParseClientInfo(data)
		if err != nil {
			if !utf8.ValidString(err.Error()) || len(err.Error()) > 4096 {
				t.Fatalf("error message not bounded/valid: %q", err)
			}
			return
		}
		if info.ClientID == "" || len(info.ClientID) > 4096 || len(info.ClientSecret) > 4096 {
			t.Fatalf("accepted %+v", info)
		}
		if slices.ContainsFunc([]byte(info.ClientID+info.ClientSecret), func(c byte) bool { return c < 0x20 || c > 0x7e }) {
			t.Fatalf("accepted non-printable id or secret %q", info.ClientID)
		}
	})
}
