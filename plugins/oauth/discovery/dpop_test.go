package discovery_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
)

// The DPoP fields of both documents (RFC 9449 §5.1, §5.2) are read, and
// bounded like the other lists; a boolean counts only when literally true.
func TestDPoPMetadataFields(t *testing.T) {
	as := `"issuer":"https://as","authorization_endpoint":"https://as/a","token_endpoint":"https://as/t"`
	m, err := discovery.ParseServerMetadata([]byte(`{` + as + `,"dpop_signing_alg_values_supported":["ES256","RS256"]}`))
	if err != nil || !slices.Equal(m.DPoPSigningAlgValuesSupported, []string{"ES256", "RS256"}) {
		t.Fatalf("%+v, %v", m, err)
	}
	if m, err = discovery.ParseServerMetadata([]byte(`{` + as + `}`)); err != nil || m.DPoPSigningAlgValuesSupported != nil {
		t.Fatalf("no DPoP: %+v, %v", m, err)
	}
	for doc, want := range map[string]string{
		`{` + as + `,"dpop_signing_alg_values_supported":"ES256"}`:                                          "not an array of strings",
		`{` + as + `,"dpop_signing_alg_values_supported":[` + strings.Repeat(`"ES256",`, 300) + `"ES256"]}`: "more than 256",
		`{` + as + `,"dpop_signing_alg_values_supported":["` + strings.Repeat("E", 5000) + `"]}`:            "longer than 4096",
	} {
		if _, err := discovery.ParseServerMetadata([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseServerMetadata(%.90s) = %v, want %q", doc, err, want)
		}
	}
	for doc, want := range map[string]bool{
		`{"resource":"https://x/","dpop_bound_access_tokens_required":true}`:   true,
		`{"resource":"https://x/","dpop_bound_access_tokens_required":"true"}`: false,
		`{"resource":"https://x/","dpop_bound_access_tokens_required":false}`:  false,
		`{"resource":"https://x/"}`: false,
	} {
		r, err := discovery.ParseResourceMetadata([]byte(doc))
		if err != nil || r.DPoPBoundAccessTokensRequired != want {
			t.Errorf("ParseResourceMetadata(%s) = %+v, %v; want required %v", doc, r, err, want)
		}
	}
}
