package discovery_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
)

const prmPath = "/.well-known/oauth-protected-resource"

func TestFetchResourceMetadataPathInserted(t *testing.T) {
	s := newSite(t)
	s.json(prmPath+"/mcp", func() any {
		d := prmDoc(s.URL+"/mcp", "https://as.example")
		d["scopes_supported"] = []string{"mcp:basic", "mcp:read"}
		return d
	})
	s.status(prmPath, http.StatusTeapot) // must not be asked: metadata-default's trap
	m, err := discovery.FetchResourceMetadata(context.Background(), s.Client(), s.URL+"/mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Resource != s.URL+"/mcp" || m.URL != s.URL+prmPath+"/mcp" ||
		len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != "https://as.example" ||
		strings.Join(m.ScopesSupported, " ") != "mcp:basic mcp:read" || len(m.Raw) == 0 {
		t.Errorf("got %+v", m)
	}
	if s.wasRequested(prmPath) {
		t.Error("the root PRM was requested although the path-based one exists")
	}
}

func TestFetchResourceMetadataRootFallback(t *testing.T) {
	// metadata-var2: only the root document, naming the bare origin.
	s := newSite(t)
	s.json(prmPath, func() any { return prmDoc(s.URL, "https://as.example/tenant1") })
	m, err := discovery.FetchResourceMetadata(context.Background(), s.Client(), s.URL+"/mcp/", "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Resource != s.URL || m.URL != s.URL+prmPath {
		t.Errorf("got resource %q at %q", m.Resource, m.URL)
	}
	if got := s.requested(); len(got) != 2 || got[0] != prmPath+"/mcp" || got[1] != prmPath {
		t.Errorf("requested %q, want the path-inserted then the root URL", got)
	}
}

func TestFetchResourceMetadataFromChallenge(t *testing.T) {
	// metadata-var3: a custom location given only in WWW-Authenticate, here
	// on another origin.
	meta := newSite(t)
	s := newSite(t)
	meta.json("/custom/metadata/location.json", func() any { return prmDoc(s.URL+"/mcp", "https://as.example") })
	m, err := discovery.FetchResourceMetadata(context.Background(), s.Client(), s.URL+"/mcp", meta.URL+"/custom/metadata/location.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.URL != meta.URL+"/custom/metadata/location.json" {
		t.Errorf("found at %q", m.URL)
	}
	if len(s.requested()) != 0 {
		t.Errorf("well-known URLs requested after the challenge's URL worked: %q", s.requested())
	}

	// A challenge URL that 404s falls back to the well-known ones.
	s.json(prmPath+"/mcp", func() any { return prmDoc(s.URL+"/mcp", "https://as.example") })
	m, err = discovery.FetchResourceMetadata(context.Background(), s.Client(), s.URL+"/mcp", meta.URL+"/gone")
	if err != nil || m.URL != s.URL+prmPath+"/mcp" {
		t.Errorf("fallback from a 404 challenge URL: %+v, %v", m, err)
	}
}

func TestFetchResourceMetadataRefusesOtherSchemes(t *testing.T) {
	s := newSite(t)
	for _, u := range []string{"file:///etc/passwd", "javascript:alert(1)", "ftp://x/prm"} {
		_, err := discovery.FetchResourceMetadata(context.Background(), s.Client(), s.URL+"/mcp", u)
		if !errors.Is(err, discovery.ErrScheme) {
			t.Errorf("%s: got %v, want ErrScheme", u, err)
		}
	}
	if _, err := discovery.FetchResourceMetadata(context.Background(), s.Client(), "ws://host/mcp", ""); !errors.Is(err, discovery.ErrScheme) {
		t.Errorf("ws server URL: got %v, want ErrScheme", err)
	}
}

func TestFetchResourceMetadataMismatch(t *testing.T) {
	// resource-mismatch: the client must refuse, naming both URLs.
	s := newSite(t)
	s.json(prmPath+"/mcp", func() any { return prmDoc("https://evil.example.com/mcp", "https://as.example") })
	_, err := discovery.FetchResourceMetadata(context.Background(), s.Client(), s.URL+"/mcp", "")
	if !errors.Is(err, discovery.ErrResourceMismatch) {
		t.Fatalf("got %v, want ErrResourceMismatch", err)
	}
	errContains(t, err, "https://evil.example.com/mcp", s.URL+"/mcp")
	if s.wasRequested(prmPath) {
		t.Error("went on to the root PRM after a mismatch")
	}
}

func TestFetchResourceMetadataAbsentAndBroken(t *testing.T) {
	s := newSite(t)
	_, err := discovery.FetchResourceMetadata(context.Background(), s.Client(), s.URL+"/mcp", "")
	if !errors.Is(err, discovery.ErrNoResourceMetadata) {
		t.Fatalf("no PRM anywhere: got %v", err)
	}
	errContains(t, err, prmPath+"/mcp: HTTP 404", prmPath+": HTTP 404")

	// An HTML page (a single-page app's catch-all) counts as absent.
	html := newSite(t)
	html.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html>app</html>"))
	})
	if _, err := discovery.FetchResourceMetadata(context.Background(), html.Client(), html.URL+"/mcp", ""); !errors.Is(err, discovery.ErrNoResourceMetadata) {
		t.Errorf("HTML pages: got %v", err)
	}

	// A server error is not "absent": no fallback to another discovery.
	broken := newSite(t)
	broken.status(prmPath+"/mcp", http.StatusInternalServerError)
	_, err = discovery.FetchResourceMetadata(context.Background(), broken.Client(), broken.URL+"/mcp", "")
	if err == nil || errors.Is(err, discovery.ErrNoResourceMetadata) {
		t.Errorf("HTTP 500: got %v, want an error other than ErrNoResourceMetadata", err)
	}

	// A bad document is an error, not absence.
	bad := newSite(t)
	bad.json(prmPath+"/mcp", func() any { return map[string]any{"authorization_servers": []string{"https://as"}} })
	_, err = discovery.FetchResourceMetadata(context.Background(), bad.Client(), bad.URL+"/mcp", "")
	if err == nil || errors.Is(err, discovery.ErrNoResourceMetadata) {
		t.Errorf("bad PRM: got %v", err)
	}
	errContains(t, err, "resource is missing", bad.URL+prmPath+"/mcp")
}

func TestFetchResourceMetadataTooLarge(t *testing.T) {
	s := newSite(t)
	s.mux.HandleFunc(prmPath+"/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"resource":"` + strings.Repeat("a", discovery.MaxDocumentSize) + `"}`))
	})
	_, err := discovery.FetchResourceMetadata(context.Background(), s.Client(), s.URL+"/mcp", "")
	if !errors.Is(err, discovery.ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	errContains(t, err, "server's protected resource metadata", "1048576-byte limit", s.URL+prmPath+"/mcp")
}

func TestFetchResourceMetadataHonoursContext(t *testing.T) {
	s := newSite(t)
	started := make(chan struct{})
	s.mux.HandleFunc(prmPath+"/mcp", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := discovery.FetchResourceMetadata(ctx, s.Client(), s.URL+"/mcp", "")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestCheckResource(t *testing.T) {
	for _, tc := range []struct {
		server, resource string
		ok               bool
	}{
		{"https://a.example/mcp", "https://a.example/mcp", true},
		{"https://a.example/mcp", "https://a.example/mcp/", true},
		{"https://a.example/mcp/", "https://a.example/mcp", true},
		{"https://a.example/mcp", "https://a.example", true},
		{"https://a.example/mcp", "https://a.example/", true},
		{"https://A.example:443/mcp", "https://a.example/mcp", true},
		{"https://a.example/api/mcp", "https://a.example/api", true},
		{"https://a.example/mcp?x=1", "https://a.example/mcp", true},
		{"https://a.example/mcp", "https://evil.example.com/mcp", false},
		{"https://a.example/mcp", "http://a.example/mcp", false},
		{"https://a.example/mcp", "https://a.example:8443/mcp", false},
		{"https://a.example/mcp", "https://a.example/mcp/sub", false},
		{"https://a.example/mcp2", "https://a.example/mcp", false},
		{"https://a.example/mcp", "https://a.example/other", false},
		{"https://a.example/mcp", "not a url", false},
	} {
		err := discovery.CheckResource(tc.server, tc.resource)
		if (err == nil) != tc.ok {
			t.Errorf("CheckResource(%q, %q) = %v, want ok=%v", tc.server, tc.resource, err, tc.ok)
		}
		if err != nil && !errors.Is(err, discovery.ErrResourceMismatch) {
			t.Errorf("CheckResource(%q, %q) = %v, not ErrResourceMismatch", tc.server, tc.resource, err)
		}
	}
}

func TestCanonicalResource(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://MCP.Example.com/MCP":     "https://mcp.example.com/MCP",
		"https://mcp.example.com:443/x#f": "https://mcp.example.com/x",
		"http://127.0.0.1:8080/mcp?a=b":   "http://127.0.0.1:8080/mcp?a=b",
		"https://mcp.example.com":         "https://mcp.example.com",
	} {
		if got, err := discovery.CanonicalResource(in); err != nil || got != want {
			t.Errorf("CanonicalResource(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestParseResourceMetadataRejects(t *testing.T) {
	for doc, want := range map[string]string{
		`[]`:                          "not a JSON object",
		`null`:                        "not a JSON object",
		`{"resource":1}`:              "resource is not a string",
		`{"resource":"ftp://x/"}`:     "only http and https",
		`{"resource":"https://x/#f"}`: "fragment",
		`{"resource":"https://x/","authorization_servers":"https://as"}`:            "not an array of strings",
		`{"resource":"https://x/","authorization_servers":["https://as?x=1"]}`:      "query or fragment",
		`{"resource":"https://x/","authorization_servers":["javascript:alert(1)"]}`: "only http and https",
		`{"resource":"https://x/","scopes_supported":["a b"]}`:                      "not a valid scope",
		`{"resource":"https://user:pw@x/"}`:                                         "user information",
	} {
		_, err := discovery.ParseResourceMetadata([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseResourceMetadata(%s) = %v, want an error containing %q", doc, err, want)
		}
	}
}

func FuzzParseResourceMetadata(f *testing.F) {
	for _, s := range []string{
		`{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"],"scopes_supported":["mcp:basic"]}`,
		`{"resource":"http://127.0.0.1:1","authorization_servers":[]}`,
		`{"resource":"https://x/","authorization_servers":["https://a/t/"],"scopes_supported":null,"extra":{"a":[1,2]}}`,
		`{"resource":"https://x/\u0000","scopes_supported":["\ud800"]}`,
		`{}`, `[]`, `"s"`, `{"resource":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := discovery.ParseResourceMetadata(data)
		if err != nil {
			if !utf8.ValidString(err.Error()) || len(err.Error()) > 4096 {
				t.Fatalf("error message not bounded/valid: %q", err)
			}
			return
		}
		u, perr := url.Parse(m.Resource)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Contains(m.Resource, "#") {
			t.Fatalf("accepted resource %q", m.Resource)
		}
		if len(m.AuthorizationServers) > 256 || len(m.ScopesSupported) > 256 {
			t.Fatalf("lists too long")
		}
		for _, s := range append(append([]string{m.Resource}, m.AuthorizationServers...), m.ScopesSupported...) {
			if !utf8.ValidString(s) || len(s) > 4096 {
				t.Fatalf("accepted value %q", s)
			}
		}
		for _, s := range m.ScopesSupported {
			if s == "" || strings.ContainsAny(s, " \"\\\t\n") {
				t.Fatalf("accepted scope %q", s)
			}
		}
	})
}
