package statedb

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeContent: any stored content decodes without a panic; text
// stored through EncodeParts comes back as it went in; a decoded part is
// never a text part.
func FuzzDecodeContent(f *testing.F) {
	f.Add(ContentJSONPrefix+`[{"type":"text","text":"MEDIA: /a"},{"type":"image","source":{"url":"u"}},{"type":"image_url","image_url":"x"}]`, "t")
	f.Add(`[{"type":"image","url":null}]`, "")
	f.Add("plain MEDIA:", "a\nb")
	f.Add(ContentJSONPrefix+`{"type":"text","text":1}`, "\x00json:[]")
	f.Fuzz(func(t *testing.T, stored, text string) {
		_, parts := DecodeContent(stored)
		for _, p := range parts {
			if PartType(p) == "text" {
				t.Fatalf("a text part among the parts of %q", stored)
			}
		}
		NewTimestamp(stored).ISO()
		if !utf8.ValidString(text) {
			return // JSON cannot carry invalid UTF-8 unchanged
		}
		enc, err := EncodeParts([]any{TextPart(text)})
		if err != nil {
			t.Fatal(err)
		}
		if got, parts := DecodeContent(enc); got != text || len(parts) != 0 {
			t.Fatalf("round trip of %q: %q, %d parts", text, got, len(parts))
		}
		if !strings.HasPrefix(text, ContentJSONPrefix) && !strings.HasPrefix(strings.TrimSpace(text), "[") {
			if got, _ := DecodeContent(EncodeText(text)); got != text {
				t.Fatalf("plain text %q read back as %q", text, got)
			}
		}
	})
}
