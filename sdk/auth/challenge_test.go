package auth

import (
	"strings"
	"testing"
)

// A DPoP challenge (RFC 9449 §7.1) is read like a Bearer one: the MCP
// server of a DPoP deployment names its metadata and scope in it.
func TestParseBearerReadsDPoP(t *testing.T) {
	cases := []struct {
		in        []string
		want      BearerChallenge
		ok, offer bool
	}{
		{[]string{`DPoP resource_metadata="https://rs/.well-known/oauth-protected-resource"`},
			BearerChallenge{Scheme: "DPoP", ResourceMetadata: "https://rs/.well-known/oauth-protected-resource"}, true, true},
		{[]string{`dpop error="use_dpop_nonce", error_description="nonce", resource_metadata="u"`},
			BearerChallenge{Scheme: "dpop", Error: "use_dpop_nonce", ErrorDescription: "nonce", ResourceMetadata: "u"}, true, true},
		{[]string{`Basic realm=x`, `Bearer scope="a b", DPoP algs="ES256", scope="c"`},
			BearerChallenge{Scheme: "Bearer", Scope: "a b"}, true, true},
		{[]string{`DPoP algs="ES256", scope="c"`, `Bearer scope="a b"`},
			BearerChallenge{Scheme: "Bearer", Scope: "a b"}, true, true},
		{[]string{`Bearer error="invalid_token"`}, BearerChallenge{Scheme: "Bearer", Error: "invalid_token"}, true, false},
		{[]string{`Basic realm=x`, `DPoPx a=b`}, BearerChallenge{}, false, false},
		{nil, BearerChallenge{}, false, false},
	}
	for _, c := range cases {
		got, ok := ParseBearer(c.in...)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseBearer(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
		if o := OffersDPoP(c.in...); o != c.offer {
			t.Errorf("OffersDPoP(%q) = %v", c.in, o)
		}
	}
	if b, _ := ParseBearer(`DPoP error="use_dpop_nonce"`); !b.DPoP() {
		t.Errorf("%+v: not DPoP", b)
	}
	for in, want := range map[string]bool{
		`DPoP error="use_dpop_nonce", resource_metadata="u"`: true,
		`Bearer realm=r, dpop error=use_dpop_nonce`:          true,
		`Bearer error="use_dpop_nonce"`:                      false,
		`DPoP error="invalid_token"`:                         false,
		`Basic realm="DPoP error=\"use_dpop_nonce\""`:        false,
	} {
		if got := DPoPNonceRequested(in); got != want {
			t.Errorf("DPoPNonceRequested(%s) = %v", in, got)
		}
	}
}

// FuzzParseBearer checks ParseBearer against ParseChallenges on any
// input: it returns the first Bearer challenge's parameters, else the
// first DPoP one's, or nothing when there is neither, and OffersDPoP and
// DPoPNonceRequested agree with the challenges.
func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{
		`DPoP resource_metadata="http://localhost:1/x"`,
		`Bearer realm=a, DPoP error="use_dpop_nonce", algs="ES256 RS256"`,
		`Basic realm="DPoP, x", dpop scope=s`,
		`DPoP abc==, Bearer x=y`,
		"DPoP a=\"\xff\x00\"",
		`DPoP`, `"`, `,`, `DPoP =`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var first, firstDPoP *AuthScheme
		dpop, nonce := false, false
		all := ParseChallenges(in)
		for i, c := range all {
			isDPoP := strings.EqualFold(c.Scheme, "DPoP")
			dpop = dpop || isDPoP
			nonce = nonce || isDPoP && c.Params["error"] == "use_dpop_nonce"
			if first == nil && strings.EqualFold(c.Scheme, "Bearer") {
				first = &all[i]
			}
			if firstDPoP == nil && isDPoP {
				firstDPoP = &all[i]
			}
		}
		if first == nil {
			first = firstDPoP
		}
		got, ok := ParseBearer(in)
		if ok != (first != nil) {
			t.Fatalf("ParseBearer(%q) ok = %v, challenges %+v", in, ok, all)
		}
		if ok && (got.Scheme != first.Scheme || got.ResourceMetadata != first.Params["resource_metadata"] ||
			got.Scope != first.Params["scope"] || got.Error != first.Params["error"] ||
			got.ErrorDescription != first.Params["error_description"]) {
			t.Fatalf("ParseBearer(%q) = %+v, want the parameters of %+v", in, got, *first)
		}
		if got.DPoP() != (ok && strings.EqualFold(first.Scheme, "DPoP")) {
			t.Fatalf("ParseBearer(%q).DPoP() = %v", in, got.DPoP())
		}
		if OffersDPoP(in) != dpop {
			t.Fatalf("OffersDPoP(%q) = %v", in, !dpop)
		}
		if DPoPNonceRequested(in) != nonce {
			t.Fatalf("DPoPNonceRequested(%q) = %v", in, !nonce)
		}
	})
}
