package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/sdk"
)

// settings are the oauth: block of a server entry.
type settings struct {
	ClientID          string
	ClientSecret      string
	ClientMetadataURL string
	// Scope overrides the discovered scope.
	Scope        string
	RedirectPort int
	ClientName   string
	// Timeout bounds one interactive login.
	Timeout     time.Duration
	ExtraParams map[string]string
	// GrantType is "authorization_code" (a user logs in),
	// "client_credentials" (the client itself is the identity: no login),
	// "jwt_bearer" (a workload's platform-issued JWT) or "id_jag" (a
	// person's ID token exchanged at the enterprise IdP).
	GrantType string
	grantSettings
	// DPoP is oauth.dpop: dpopAuto, dpopOn or dpopOff.
	DPoP string
}

// Defaults of the oauth: block.
const (
	defaultClientName = "Hermes Agent"
	defaultTimeout    = 300 * time.Second
	grantClientCreds  = "client_credentials"
	grantAuthCode     = "authorization_code"
)

// parseSettings reads the JSON-decoded oauth: block; a bad value is a
// CodeConfig error naming the key.
func parseSettings(m map[string]any) (settings, error) {
	s := settings{ClientName: defaultClientName, Timeout: defaultTimeout, GrantType: grantAuthCode}
	str := func(key string, dst *string) error {
		v, ok := m[key]
		if !ok || v == nil {
			return nil
		}
		x, ok := v.(string)
		if !ok {
			return sdk.NewError(sdk.CodeConfig, "oauth.%s: want a string, got %T", key, v)
		}
		*dst = strings.TrimSpace(x)
		return nil
	}
	for key, dst := range map[string]*string{
		"client_id": &s.ClientID, "client_secret": &s.ClientSecret, "client_metadata_url": &s.ClientMetadataURL,
		"scope": &s.Scope, "client_name": &s.ClientName, "grant_type": &s.GrantType,
	} {
		if err := str(key, dst); err != nil {
			return s, err
		}
	}
	if s.ClientName == "" {
		s.ClientName = defaultClientName
	}
	if err := parseGrantSettings(m, &s); err != nil {
		return s, err
	}
	dpop, err := parseDPoPMode(m)
	if err != nil {
		return s, err
	}
	s.DPoP = dpop
	if v, ok := m["redirect_port"]; ok && v != nil {
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || f < 0 || f > 65535 {
			return s, sdk.NewError(sdk.CodeConfig, "oauth.redirect_port: want a port between 0 and 65535, got %v", v)
		}
		s.RedirectPort = int(f)
	}
	if v, ok := m["timeout"]; ok && v != nil {
		f, ok := v.(float64)
		if !ok || f <= 0 || f > 24*3600 {
			return s, sdk.NewError(sdk.CodeConfig, "oauth.timeout: want seconds between 1 and 86400, got %v", v)
		}
		s.Timeout = time.Duration(f * float64(time.Second))
	}
	if v, ok := m["extra_params"]; ok && v != nil {
		em, ok := v.(map[string]any)
		if !ok {
			return s, sdk.NewError(sdk.CodeConfig, "oauth.extra_params: want a mapping of parameter names to values")
		}
		s.ExtraParams = map[string]string{}
		for k, x := range em {
			s.ExtraParams[k] = fmt.Sprint(x)
		}
	}
	return s, nil
}

// reservedParams are authorization request parameters extra_params cannot
// replace: they carry the flow's security.
var reservedParams = map[string]bool{
	"response_type": true, "client_id": true, "redirect_uri": true, "state": true,
	"code_challenge": true, "code_challenge_method": true, "resource": true,
}

// extraParamNames lists the extra parameters in a stable order.
func (s settings) extraParamNames() []string {
	var names []string
	for k := range s.ExtraParams {
		if !reservedParams[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}
