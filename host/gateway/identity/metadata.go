package identity

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// WellKnownPath is where RFC 9728 puts protected resource metadata: at
// the host's root, followed by the resource's path.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// metadataLocation returns the URL and path of the metadata of resource
// (RFC 9728 §3.1: the well-known path inserted before the resource's
// path).
func metadataLocation(resource string) (string, string) {
	u, err := url.Parse(resource)
	if err != nil {
		return "", WellKnownPath
	}
	path := WellKnownPath + strings.TrimSuffix(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + path, path
}

// MetadataURL is the URL of the protected resource metadata, as the
// WWW-Authenticate challenges name it.
func (a *Authenticator) MetadataURL() string { return a.metaURL }

// MetadataPaths are the paths MetadataHandler answers: the resource's own
// (WellKnownPath followed by the resource's path) and, when that differs,
// the bare WellKnownPath, which some clients try first.
func (a *Authenticator) MetadataPaths() []string {
	if a.metaPath == WellKnownPath {
		return []string{WellKnownPath}
	}
	return []string{a.metaPath, WellKnownPath}
}

// Metadata is the RFC 9728 protected resource metadata document.
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// Metadata returns the gateway's protected resource metadata: the
// resource, its issuers as authorization servers, the configured scopes,
// and bearer tokens in the header only.
func (a *Authenticator) Metadata() Metadata {
	md := Metadata{
		Resource:               a.cfg.Resource,
		ScopesSupported:        a.cfg.ScopesSupported,
		BearerMethodsSupported: []string{"header"},
	}
	for _, ic := range a.cfg.Issuers {
		md.AuthorizationServers = append(md.AuthorizationServers, ic.Issuer)
	}
	return md
}

// MetadataHandler serves the metadata document on MetadataPaths, to
// anyone (it is public, and browser-based clients fetch it across
// origins).
func (a *Authenticator) MetadataHandler() http.Handler {
	body, err := json.Marshal(a.Metadata())
	if err != nil {
		panic("identity: marshal the resource metadata: " + err.Error()) // strings and slices only
	}
	paths := a.MetadataPaths()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		found := false
		for _, p := range paths {
			if r.URL.EscapedPath() == p {
				found = true
			}
		}
		if !found {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=300")
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}
