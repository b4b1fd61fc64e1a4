package tokenstore

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzReadFiles writes arbitrary bytes as a server's token, client and meta
// files and reads them: no panic; a failure wraps ErrCorrupt and does not
// quote the file's tokens or secret; what reads encodes in a stable form
// (the bytes Save would write read back to the same value).
func FuzzReadFiles(f *testing.F) {
	for _, seed := range []string{
		`{"access_token":"a","token_type":"Bearer","refresh_token":"r","expires_in":3600,"expires_at":1712345678.5}`,
		`{"access_token":"a","expires_in":"3600","hermes_issuer":"https://as","id_token":"x","extra":{"n":[1,{"m":null}]}}`,
		`{"access_token":"a","expires_at":1e300}`,
		`{"access_token":"a","expires_in":9223372036854775807}`,
		`{"client_id":"c","client_secret":"s","redirect_uris":["http://127.0.0.1/callback"],"kind":"dcr"}`,
		`{"issuer":"https://as","token_endpoint":"https://as/token"}`,
		`{"issuer":"https://as","authorization_server":{"issuer":"https://as"},"resource":"https://rs"}`,
		"\uFEFF{}", `null`, `[]`, `"str"`, `{"access_token":"secretsecret","expires_in":{}}`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newStore(t, t.TempDir(), "fuzz")
		for _, p := range []string{s.TokenPath(), s.ClientPath(), s.MetaPath()} {
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var secrets []string
		var generic map[string]any
		if json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &generic) == nil {
			for _, k := range []string{"access_token", "refresh_token", "client_secret"} {
				if v, ok := generic[k].(string); ok && len(v) >= 8 {
					secrets = append(secrets, v)
				}
			}
		}
		checkErr := func(err error) {
			if err == nil {
				return
			}
			if !strings.HasPrefix(err.Error(), "tokenstore: ") {
				t.Fatalf("unexpected error %v", err)
			}
			for _, v := range secrets {
				if strings.Contains(err.Error(), v) {
					t.Fatalf("error %q quotes the file", err)
				}
			}
		}

		if tok, err := s.Load(); err != nil {
			checkErr(err)
		} else if tok != nil {
			stable(t, "token", tok.encode, func(b []byte) (encoder, string) { return decodeToken(b, time.Time{}) })
		}
		if c, err := s.LoadClient(); err != nil {
			checkErr(err)
		} else if c != nil {
			stable(t, "client", c.encode, func(b []byte) (encoder, string) { return decodeClient(b) })
		}
		if m, err := s.LoadMeta(); err != nil {
			checkErr(err)
		} else if m != nil {
			stable(t, "meta", m.encode, func(b []byte) (encoder, string) { return decodeMeta(b) })
		}
	})
}

type encoder interface{ encode() ([]byte, error) }

// stable checks that a value read from a file encodes to bytes that decode
// to a value encoding to the same bytes: what Save writes reads back as
// written.
func stable[T encoder](t *testing.T, what string, encode func() ([]byte, error), decode func([]byte) (T, string)) {
	t.Helper()
	first, err := encode()
	if err != nil {
		t.Fatalf("%s: encode what was read: %v", what, err)
	}
	again, problem := decode(first)
	if problem != "" {
		t.Fatalf("%s: what would be written does not read: %s\n%s", what, problem, first)
	}
	second, err := again.encode()
	if err != nil {
		t.Fatalf("%s: encode again: %v", what, err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("%s: unstable:\n%s\n%s", what, first, second)
	}
}
