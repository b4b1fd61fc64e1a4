package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/statedb"
)

func seed(f *testing.F, name string) {
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
}

// FuzzParseIndex: any sessions.json yields entries or an error, never a
// panic, and never a metadata key.
func FuzzParseIndex(f *testing.F) {
	seed(f, "sessions.json")
	f.Add([]byte(`{"_README":"x","k":{"origin":{"thread_id":7},"input_tokens":"9e99"}}`))
	f.Add([]byte(`{"k":null,"j":[],"i":{"updated_at":{"a":1}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseIndex(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if strings.HasPrefix(e.SessionKey, "_") {
				t.Fatalf("metadata key %q kept", e.SessionKey)
			}
		}
	})
}

// FuzzParseDirectory: any channel_directory.json yields channels or an
// error, never a panic, and every channel's target starts with its
// platform.
func FuzzParseDirectory(f *testing.F) {
	seed(f, "channel_directory.json")
	f.Add([]byte(`{"platforms":{"a":[{"id":1.5e300},{"chat_id":true,"display_name":[]}],"b":{}}}`))
	f.Add([]byte(`{"platforms":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		chans, err := ParseDirectory(data)
		if err != nil {
			return
		}
		for _, c := range chans {
			if c.Target != c.Platform && !strings.HasPrefix(c.Target, c.Platform+":") {
				t.Fatalf("target %q does not start with platform %q", c.Target, c.Platform)
			}
		}
	})
}

// FuzzDecodeContent: any stored content decodes without a panic, and its
// attachments too.
func FuzzDecodeContent(f *testing.F) {
	f.Add(statedb.ContentJSONPrefix + `[{"type":"text","text":"MEDIA: /a"},{"type":"image","source":{"url":"u"}},{"type":"image_url","image_url":"x"}]`)
	f.Add(`[{"type":"image","url":null}]`)
	f.Add("plain MEDIA:")
	f.Fuzz(func(t *testing.T, content string) {
		text, parts := statedb.DecodeContent(content)
		Attachments(Message{Text: text, Parts: parts})
		NewTimestamp(content).ISO()
	})
}
