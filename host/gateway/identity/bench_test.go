package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// BenchmarkAuthenticate is the cost a request pays for its identity once
// the issuer's keys are cached: a JWT per algorithm, verified each time
// (verify/) or found in the verified-token cache (cached/), and a static
// token among 100.
func BenchmarkAuthenticate(b *testing.B) {
	b.Run("verify", func(b *testing.B) { benchAuthenticate(b, -1) })
	b.Run("cached", func(b *testing.B) { benchAuthenticate(b, 0) })
}

func benchAuthenticate(b *testing.B, cacheSize int) {
	const static = "static-token-of-the-benchmark-fixture"
	fx := newFixture(b, func(c *Config, _ *testIdP) {
		c.TokenCacheSize = cacheSize
		for i := range 99 {
			sum := sha256.Sum256([]byte{byte(i)})
			c.Tokens = append(c.Tokens, StaticToken{Subject: "filler", SHA256: hex.EncodeToString(sum[:])})
		}
		sum := sha256.Sum256([]byte(static))
		c.Tokens = append(c.Tokens, StaticToken{Subject: "svc", SHA256: hex.EncodeToString(sum[:])})
	})
	fx.logs.discard = true
	keys := []signingKey{rsaKey(b, "rsa"), ecKey(b, "ec"), edKey(b, "ed")}
	fx.idp.publish(keys...)
	run := func(name, tok string) {
		b.Run(name, func(b *testing.B) {
			r := bearer(tok)
			if _, err := fx.a.Authenticate(r); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := fx.a.Authenticate(r); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	for _, k := range keys {
		run(string(k.alg), k.sign(b, fx.idp.claims(fx.clk.Now())))
	}
	run("static", static)
}
