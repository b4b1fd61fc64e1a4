package offered_test

import (
	"encoding/json"
	"testing"

	"github.com/hermes-agent/hermes/host/offered"
)

// FuzzDecodeRecord feeds the record and baseline decoders arbitrary bytes:
// they never panic, and what they accept is a record which encodes and
// decodes again (of version 1, whose digests match its tools; of version
// 2, whose tools match their checksum), or a baseline that encodes and
// decodes again.
func FuzzDecodeRecord(f *testing.F) {
	srv := server("a")
	r := record(srv, tool("echo", "says it back", "text"), tool("add", "adds", "a", "b"))
	st := offered.Open(f.TempDir(), nil)
	if err := st.Save(r); err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(r)
	f.Add(good)
	f.Add([]byte(`{"version":1,"server":"a","settings_digest":"x","tools":[],"digests":{}}`))
	f.Add([]byte(`{"version":1,"server":"a","tools":{"x":{"digest":"","tool":{"name":"x"}}}}`))
	f.Add([]byte(`{"version":1,"server":"../x"}`))
	f.Add([]byte(`{"version":2,"server":"a@0123456789ab","tools":{"x":{"digest":"","parts":{}}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if rec, err := offered.DecodeRecord(data); err == nil {
			again, err := json.Marshal(rec)
			if err != nil {
				t.Fatalf("accepted record does not encode: %v", err)
			}
			if _, err := offered.DecodeRecord(again); err != nil {
				t.Fatalf("accepted record does not decode again: %v\n%s", err, again)
			}
			for _, tl := range rec.Tools {
				if rec.Version != 1 {
					break // the checksum, not the digests, vouches for the tools
				}
				if d, _ := offered.ToolDigest(tl); d != rec.Digests[tl.Name] {
					t.Fatalf("accepted a digest that does not match tool %q", tl.Name)
				}
			}
		}
		if b, err := offered.DecodeBaseline(data); err == nil {
			_ = offered.Compare(b, nil)
			again, err := json.Marshal(b)
			if err != nil {
				t.Fatalf("accepted baseline does not encode: %v", err)
			}
			if _, err := offered.DecodeBaseline(again); err != nil {
				t.Fatalf("accepted baseline does not decode again: %v\n%s", err, again)
			}
		}
	})
}
