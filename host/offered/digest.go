package offered

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// definition is what a tool's digest covers: what a model reads to decide
// what the tool does and how to call it.
type definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations"`
}

// noInputSchema is what the digest of a tool without an input schema
// covers: the encoding of an empty schema by the engine that wrote the
// first records (mcp-go's mcp.ToolInputSchema{}), so that such a tool keeps
// its digest, and its approval, across versions of the record.
const noInputSchema = `{"properties":{},"required":[],"type":""}`

// defOf returns the canonical parts of t's definition.
func defOf(t mcpvalue.Tool) (definition, error) {
	schema := []byte(t.InputSchema)
	if !mcpvalue.HasSchema(t.InputSchema) {
		schema = []byte(noInputSchema)
	}
	cs, err := Canonical(schema)
	if err != nil {
		return definition{}, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	ab, err := json.Marshal(t.Annotations)
	if err != nil {
		return definition{}, fmt.Errorf("tool %q: annotations: %w", t.Name, err)
	}
	ca, err := Canonical(ab)
	if err != nil {
		return definition{}, fmt.Errorf("tool %q: annotations: %w", t.Name, err)
	}
	return definition{Name: t.Name, Description: t.Description, InputSchema: cs, Annotations: ca}, nil
}

// ToolDigest is the hex sha256 of t's name, description, input schema and
// annotations in canonical JSON (object keys sorted, numbers as written),
// so the order of keys in what the server sent does not matter.
func ToolDigest(t mcpvalue.Tool) (string, error) {
	d, err := defOf(t)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("tool %q: %w", t.Name, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Canonical returns the JSON value raw with object keys sorted and
// insignificant space removed; numbers keep their text.
func Canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return encodeCompact(v)
}

// settings are the parts of a server entry that decide what the server
// offers: how it is reached and launched, and what the host offers it
// (sampling, elicitation, roots change some servers' tool lists). Timeouts,
// limits, the tools filter and enabled do not: the store keeps the whole
// listing, before the filter.
type settings struct {
	Transport, Plugin                     string
	Command                               string
	Args                                  []string
	Env                                   map[string]string
	Cwd, URL                              string
	Headers                               map[string]string
	Protocol, Auth                        string
	OAuthClientID, OAuthScope, OAuthGrant string
	OAuthMetadataURL                      string
	// OAuthIdentity is where a grant without a browser gets its identity
	// (the workload's assertion, the IdP); empty for the others, so their
	// digests are as before.
	OAuthIdentity                   string `json:",omitempty"`
	SSLVerify                       bool
	CABundle, ClientCert, ClientKey string
	Sampling, Elicitation           map[string]any
	NoRoots                         bool
	Sandbox                         *config.SandboxSettings
	Pin                             *config.PluginPin
	Extra                           map[string]any
}

// SettingsDigest is the hex sha256 of the connection settings of srv that
// decide what it offers (see the Record's SettingsDigest). Values from
// .env count, so a rotated key gives another digest; the digest is a
// one-way hash and is kept in a 0600 file.
func SettingsDigest(srv *config.Server) string {
	l := srv.Launch()
	s := settings{
		Transport: l.Transport, Plugin: l.Plugin,
		Command: srv.Command, Args: srv.Args, Env: srv.Env, Cwd: srv.Cwd, URL: srv.URL, Headers: srv.Headers,
		Protocol: srv.Protocol, Auth: srv.Auth,
		OAuthClientID: srv.OAuth.ClientID, OAuthScope: srv.OAuth.Scope, OAuthGrant: srv.OAuth.GrantType,
		OAuthMetadataURL: srv.OAuth.ClientMetadataURL, OAuthIdentity: oauthIdentity(srv.OAuth.OAuthGrant),
		SSLVerify: srv.SSLVerify, CABundle: srv.CABundle, ClientCert: srv.ClientCert, ClientKey: srv.ClientKey,
		Sampling: srv.Sampling, Elicitation: srv.Elicitation, NoRoots: srv.NoRoots,
		Sandbox: srv.Sandbox, Pin: srv.Plugin, Extra: srv.Extra,
	}
	b, err := json.Marshal(s)
	if err != nil {
		// Only an unmarshalable value in Extra or the raw maps gets here;
		// the name keeps the digest stable and distinct from any other.
		b = []byte("unmarshalable settings of " + srv.Name + ": " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// oauthIdentity names the source of a grant's identity: the assertion
// file or command, the IdP and its client. Values only, never a secret.
func oauthIdentity(g config.OAuthGrant) string {
	if g.AssertionFile == "" && len(g.AssertionCommand) == 0 && g.IdPTokenEndpoint == "" {
		return ""
	}
	b, _ := json.Marshal([]any{g.AssertionFile, g.AssertionCommand, g.IdPTokenEndpoint, g.IdPClientID})
	return string(b)
}
