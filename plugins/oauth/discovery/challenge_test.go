package discovery_test

import (
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/plugins/oauth/discovery"
)

func TestParseChallenges(t *testing.T) {
	type c = discovery.Challenge
	type p = map[string]string
	for _, tc := range []struct {
		name, in string
		want     []c
	}{
		{"empty", "", nil},
		{"bare scheme", "Bearer", []c{{Scheme: "Bearer", Params: p{}}}},
		{"conformance 401",
			`Bearer scope="mcp:basic", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp"`,
			[]c{{Scheme: "Bearer", Params: p{"scope": "mcp:basic", "resource_metadata": "http://localhost:1/.well-known/oauth-protected-resource/mcp"}}}},
		{"token values and BWS", `Bearer error = invalid_token ,realm=x`,
			[]c{{Scheme: "Bearer", Params: p{"error": "invalid_token", "realm": "x"}}}},
		{"case-insensitive names, first wins", `bEaReR Scope="a b", SCOPE="c"`,
			[]c{{Scheme: "bEaReR", Params: p{"scope": "a b"}}}},
		{"escapes", `Bearer error_description="say \"hi\" \\ bye, ok"`,
			[]c{{Scheme: "Bearer", Params: p{"error_description": `say "hi" \ bye, ok`}}}},
		{"several challenges", `Basic realm="a, b", Bearer scope="x", Newauth`,
			[]c{{Scheme: "Basic", Params: p{"realm": "a, b"}}, {Scheme: "Bearer", Params: p{"scope": "x"}}, {Scheme: "Newauth", Params: p{}}}},
		{"token68", `Negotiate YWxhZGRpbjpvcGVuc2VzYW1l==, Bearer realm=r`,
			[]c{{Scheme: "Negotiate", Params: p{}, Token68: "YWxhZGRpbjpvcGVuc2VzYW1l=="}, {Scheme: "Bearer", Params: p{"realm": "r"}}}},
		{"empty list elements", `, ,Bearer a=1,,, b=2 ,`,
			[]c{{Scheme: "Bearer", Params: p{"a": "1", "b": "2"}}}},
		{"unterminated quote dropped", `Bearer a=1, b="open`,
			[]c{{Scheme: "Bearer", Params: p{"a": "1"}}}},
		{"control character dropped", "Bearer a=\"x\x01y\", b=2",
			[]c{{Scheme: "Bearer", Params: p{"b": "2"}}}},
		{"garbage tolerated", `"junk", Bearer =x, a=, scope="s" trailing, c=3`,
			[]c{{Scheme: "Bearer", Params: p{"c": "3"}}}},
		{"obs-text made valid UTF-8", "Bearer a=\"\xff\"",
			[]c{{Scheme: "Bearer", Params: p{"a": "\uFFFD"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := discovery.ParseChallenges(tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("ParseChallenges(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			for i := range got {
				if got[i].Scheme != tc.want[i].Scheme || got[i].Token68 != tc.want[i].Token68 || !maps.Equal(got[i].Params, tc.want[i].Params) {
					t.Errorf("challenge %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestParseChallengesBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("Bearer ")
	for i := range 100 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("p")
		b.WriteString(strings.Repeat("x", i))
		b.WriteString("=1")
	}
	got := discovery.ParseChallenges(b.String())
	if len(got) != 1 || len(got[0].Params) != 64 {
		t.Fatalf("got %d challenges, %d params; want 1 challenge with 64 params", len(got), len(got[0].Params))
	}
	if _, ok := got[0].Params["p"]; !ok {
		t.Error("the first params are the ones kept")
	}

	// A parameter past 16 KiB is not read.
	long := `Bearer pad="` + strings.Repeat("a", 16<<10) + `", scope="late"`
	got = discovery.ParseChallenges(long)
	if len(got) != 1 || got[0].Params["scope"] != "" {
		t.Errorf("input beyond 16 KiB was read: %d challenges, scope %q", len(got), got[0].Params["scope"])
	}

	many := strings.Repeat("A, ", 200)
	if n := len(discovery.ParseChallenges(many)); n != 64 {
		t.Errorf("got %d challenges, want the cap of 64", n)
	}
}

func TestBearerChallenge(t *testing.T) {
	info, ok := discovery.BearerChallenge(
		`Basic realm="x"`,
		`DPoP algs="ES256", Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="https://a/prm", error_description="need write"`,
		`Bearer scope="ignored"`,
	)
	want := discovery.BearerInfo{Scheme: "Bearer", ResourceMetadata: "https://a/prm", Scope: "mcp:write", Error: "insufficient_scope", ErrorDescription: "need write"}
	if !ok || info != want {
		t.Errorf("BearerChallenge = %+v, %v; want %+v, true", info, ok, want)
	}
	// A DPoP challenge (RFC 9449 §7.1) stands for a Bearer one when
	// there is none: it carries the same parameters.
	if info, ok := discovery.BearerChallenge(`Basic realm="x"`, `DPoP resource_metadata="https://a/prm"`); !ok || info.ResourceMetadata != "https://a/prm" || !info.DPoP() {
		t.Errorf("the DPoP challenge read as %+v, %v", info, ok)
	}
	if _, ok := discovery.BearerChallenge(`Basic realm="x"`, `Negotiate abc`); ok {
		t.Error("found a Bearer challenge where there is none")
	}
	if _, ok := discovery.BearerChallenge(); ok {
		t.Error("found a Bearer challenge in no header")
	}
}

// checkChallenges asserts the invariants every ParseChallenges result keeps.
func checkChallenges(t *testing.T, in string, got []discovery.Challenge) {
	t.Helper()
	if len(got) > 64 {
		t.Fatalf("%d challenges", len(got))
	}
	for _, c := range got {
		if c.Scheme == "" || !isToken(c.Scheme) {
			t.Fatalf("bad scheme %q from %q", c.Scheme, in)
		}
		if len(c.Params) > 64 {
			t.Fatalf("%d params", len(c.Params))
		}
		if c.Token68 != "" && len(c.Params) > 0 {
			t.Fatalf("token68 and params together from %q", in)
		}
		for k, v := range c.Params {
			if !isToken(k) || k != strings.ToLower(k) {
				t.Fatalf("bad param name %q from %q", k, in)
			}
			if !utf8.ValidString(v) || len(v) > 16<<10*3 {
				t.Fatalf("bad value %q from %q", v, in)
			}
			for _, r := range v {
				if (r < 0x20 && r != '\t') || r == 0x7f {
					t.Fatalf("control character in value %q from %q", v, in)
				}
			}
		}
	}
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{
		`Bearer scope="mcp:basic", resource_metadata="http://localhost:1/x"`,
		`Basic realm="a, b", Bearer error="insufficient_scope", scope="a b"`,
		`Negotiate abc==, Bearer x=y`,
		`Bearer a="\"\\", b=c,,d`,
		"Bearer a=\"\xff\x00\"",
		`"`, `,`, `=`, `Bearer =`, `A B C`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkChallenges(t, in, discovery.ParseChallenges(in))
	})
}

// FuzzQuotedValue checks that any value without control characters,
// written as a quoted-string, reads back unchanged.
func FuzzQuotedValue(f *testing.F) {
	for _, s := range []string{"", "plain", `with "quotes" and \backslash`, "tab\there", "ünïcode, commas"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) || len(v) > 4096 {
			return
		}
		for _, r := range v {
			if (r < 0x20 && r != '\t') || r == 0x7f {
				return
			}
		}
		q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v)
		in := `Basic realm=x, Bearer error_description="` + q + `", scope=s`
		got := discovery.ParseChallenges(in)
		checkChallenges(t, in, got)
		if len(got) != 2 || got[1].Params["error_description"] != v || got[1].Params["scope"] != "s" {
			t.Fatalf("value %q read back as %+v", v, got)
		}
	})
}
