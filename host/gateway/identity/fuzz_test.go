package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// FuzzAuthenticate feeds Authorization header values to Authenticate:
// it never panics, never accepts a token that is neither the static
// token nor signed by the IdP's key (so never an unsigned one), and a
// refusal never carries the token.
func FuzzAuthenticate(f *testing.F) {
	const static = "static-token-of-the-fuzz-fixture"
	sum := sha256.Sum256([]byte(static))
	fx := newFixture(f, func(c *Config, _ *testIdP) {
		c.Tokens = []StaticToken{{Subject: "svc", SHA256: hex.EncodeToString(sum[:])}}
	})
	fx.logs.discard = true
	k := rsaKey(f, "fuzz")
	fx.idp.publish(k)
	now := fx.clk.Now()
	valid := k.sign(f, fx.idp.claims(now))
	parts := strings.Split(valid, ".")
	for _, seed := range []string{
		"Bearer " + valid,
		"bearer " + valid,
		"Bearer " + static,
		"Bearer " + unsigned(fx.idp.claims(now), "fuzz"),
		"Bearer " + parts[0] + "." + parts[1] + ".",
		"Bearer " + parts[0] + "." + mustB64(fx.idp.claims(now, "sub", "mallory")) + "." + parts[2],
		"Bearer " + ecKey(f, "other").sign(f, fx.idp.claims(now)),
		"Bearer abc.def.ghi",
		"Bearer ",
		"Basic YWxpY2U6cHc=",
		"Bearer a.b.c.d",
		"Bearer ===",
		"",
	} {
		f.Add(seed)
	}
	pub := k.key.Public()
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", nil)
		r.Header["Authorization"] = []string{header}
		p, err := fx.a.Authenticate(r)
		_, tok, _ := strings.Cut(header, " ")
		tok = strings.TrimLeft(tok, " ")
		if err != nil {
			if p != nil {
				t.Fatal("a Principal with an error")
			}
			if len(tok) >= 16 && strings.Contains(err.Error(), tok) {
				t.Fatalf("the error carries the token: %v", err)
			}
			return
		}
		if p.Static {
			if tok != static {
				t.Fatalf("accepted %q as the static token", tok)
			}
			return
		}
		// Accepted as a JWT: it must verify on its own with the IdP's key
		// under a real algorithm.
		jws, perr := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.RS256})
		if perr != nil {
			t.Fatalf("accepted a token that does not parse as RS256: %v", perr)
		}
		if _, verr := jws.Verify(pub); verr != nil {
			t.Fatalf("accepted a token whose signature does not verify: %v", verr)
		}
	})
}
