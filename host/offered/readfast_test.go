package offered

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// readerSeeds are files as Save, Approve and older hermes wrote them, and
// near misses of each: what the reader must read as encoding/json does,
// or give up on.
func readerSeeds(t testing.TB) [][]byte {
	st := Open(t.TempDir(), nil)
	yes, no := true, false
	tools := []mcpvalue.Tool{
		{Name: "echo", Title: "Echo", Description: "says it back\n\t\"quoted\" \\ / <b>&</b> é ✓",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what \"to\" say"}},"required":["text"]}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations:  mcpvalue.Annotations{Title: "t", ReadOnly: &yes, Destructive: &no, Idempotent: &yes, OpenWorld: &no}},
		{Name: "add", Description: "adds", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","minimum":-1.5e3}}}`)},
		{Name: "bare"},
	}
	rec := &Record{Server: "a", SettingsDigest: "x", Protocol: "2026-07-28", Instructions: "use\nit",
		ServerInfo:   mcpvalue.Implementation{Name: "srv", Title: "Srv", Version: "1"},
		Capabilities: mcpvalue.Capabilities{Tools: json.RawMessage(`{"listChanged":true}`), Logging: json.RawMessage(`{}`)},
		Tools:        tools}
	if err := st.Save(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Approve("a", tools, nil, "add"); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, p := range []string{st.RecordPath("a"), st.BaselinePath("a")} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, data)
	}
	toolsJSON, _ := encodeCompact(tools)
	out = append(out, toolsJSON)
	marshaled, _ := json.Marshal(rec) // HTML escaped
	out = append(out, marshaled)
	engine, _ := json.Marshal(engineTools()) // mcp-go's encoding: icons, _meta
	out = append(out, engine)
	for _, s := range []string{
		`{"version":3,"Server":"a"}`, `{"version":3,"server":"a","server":"b"}`, `{"version":3.0}`,
		`{"version":-0,"tools":null,"digests":{"a":null}}`, `{"version":2,"tools":{"x":{"hints":null}}}`,
		`{"version":2,"tools":{"x":{"hints":{"destructive":null,"read_only":false}}}}`,
		`[{"name":"a\u0041","annotations":{"readOnlyHint":null}}]`, `[{"name":"x","NAME":"y"}]`,
		`[{"name":"x","_meta":{"a":[1,2,{"b":null}]},"ſitle":"y"}]`, `[{"name":"\ud800"}]`, "[{\"name\":\"\xff\"}]",
		`{"fetched_at":"2026-01-02T03:04:05Z","server_info":{"name":"n"},"capabilities":{"tools":null}}`,
		`{"fetched_at":12}`, `[] x`, `[1e+,2]`, `{"a":tru}`, "\t[ ]\n",
	} {
		out = append(out, []byte(s))
	}
	return out
}

// FuzzReaderMatchesEncodingJSON: whatever the reader reads whole (a
// record, a list of tools, a baseline), encoding/json decodes from the
// same bytes, to the same value.
func FuzzReaderMatchesEncodingJSON(f *testing.F) {
	for _, s := range readerSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReader(t, data)
	})
}

// TestReaderReadsWhatTheStoreWrites: the reader reads the store's own
// files whole (not by falling back), to what encoding/json reads, and
// every seed agrees with encoding/json.
func TestReaderReadsWhatTheStoreWrites(t *testing.T) {
	seeds := readerSeeds(t)
	var fast Record
	if !readRecord(seeds[0], &recordWire{plainRecord: (*plainRecord)(&fast)}) {
		t.Errorf("the reader gave up on a record Save wrote:\n%s", seeds[0])
	}
	var b Baseline
	if !readBaseline(seeds[1], &b) || len(b.Tools) != 3 {
		t.Errorf("the reader gave up on a baseline Approve wrote:\n%s", seeds[1])
	}
	if tools, ok := readTools(seeds[2]); !ok || len(tools) != 3 {
		t.Errorf("the reader gave up on tools as Save writes them:\n%s", seeds[2])
	}
	for _, s := range seeds {
		checkReader(t, s)
	}
}

func checkReader(t *testing.T, data []byte) {
	t.Helper()
	var fast Record
	fw := recordWire{plainRecord: (*plainRecord)(&fast)}
	if readRecord(data, &fw) {
		var slow Record
		sw := recordWire{plainRecord: (*plainRecord)(&slow)}
		if err := json.Unmarshal(data, &sw); err != nil {
			t.Fatalf("the reader read a record encoding/json refuses (%v):\n%q", err, data)
		}
		if !bytes.Equal(fw.Tools, sw.Tools) || !sameRecord(&fast, &slow) {
			t.Fatalf("the reader read a record as\n%#v\nencoding/json as\n%#v\nfrom %q", fast, slow, data)
		}
		if fw.decoded != nil {
			var tools []mcpvalue.Tool
			if err := json.Unmarshal(fw.Tools, &tools); err != nil || !reflect.DeepEqual(normTools(fw.decoded), normTools(tools)) {
				t.Fatalf("the reader decoded a record's tools as\n%#v\nencoding/json as\n%#v (%v)\nfrom %q", fw.decoded, tools, err, data)
			}
		}
	}
	if fast, ok := readTools(data); ok {
		var slow []mcpvalue.Tool
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatalf("the reader read tools encoding/json refuses (%v):\n%q", err, data)
		}
		if !reflect.DeepEqual(normTools(fast), normTools(slow)) {
			t.Fatalf("the reader read tools as\n%#v\nencoding/json as\n%#v\nfrom %q", fast, slow, data)
		}
	}
	var fb Baseline
	if readBaseline(data, &fb) {
		var sb Baseline
		if err := json.Unmarshal(data, &sb); err != nil {
			t.Fatalf("the reader read a baseline encoding/json refuses (%v):\n%q", err, data)
		}
		if !reflect.DeepEqual(normBaseline(fb), normBaseline(sb)) {
			t.Fatalf("the reader read a baseline as\n%#v\nencoding/json as\n%#v\nfrom %q", fb, sb, data)
		}
	}
	// Whatever the reader decides, the decoders answer as before it.
	if _, err := DecodeRecord(data); err == nil {
		if _, err := decodeRecordSlow(data); err != nil {
			t.Fatalf("DecodeRecord accepts what encoding/json's decoding refuses (%v):\n%q", err, data)
		}
	}
}

// decodeRecordSlow is DecodeRecord's decoding by encoding/json alone.
func decodeRecordSlow(data []byte) (*Record, error) {
	var r Record
	w := recordWire{plainRecord: (*plainRecord)(&r)}
	if err := decodeStrict(data, &w); err != nil {
		return nil, err
	}
	return &r, nil
}

// sameRecord compares records as decoded, their times by instant and
// location name (a time decoded twice holds two *time.Location values).
func sameRecord(a, b *Record) bool {
	x, y := *a, *b
	if !sameTime(x.FetchedAt, y.FetchedAt) {
		return false
	}
	x.FetchedAt, y.FetchedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(x, y)
}

func sameTime(a, b time.Time) bool {
	_, ao := a.Zone()
	_, bo := b.Zone()
	return a.Equal(b) && ao == bo && a.Location().String() == b.Location().String()
}

// normTools makes nil and empty raw values alike (encoding/json copies
// an empty value into a non-nil slice).
func normTools(ts []mcpvalue.Tool) []mcpvalue.Tool {
	out := make([]mcpvalue.Tool, len(ts))
	for i, t := range ts {
		t.InputSchema, t.OutputSchema = norm(t.InputSchema), norm(t.OutputSchema)
		out[i] = t
	}
	return out
}

func norm(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return b
}

// normBaseline strips the times' locations into their text.
func normBaseline(b Baseline) map[string]any {
	tools := map[string]string{}
	for k, a := range b.Tools {
		var h string
		if a.Hints != nil {
			h = strings.Join([]string{boolText(a.Hints.Destructive), boolText(a.Hints.ReadOnly)}, ",")
		}
		tools[k] = strings.Join([]string{a.Digest, a.ApprovedAt.String(), a.How, string(a.RawParts), h}, "|")
	}
	return map[string]any{"v": b.Version, "s": b.Server, "nil": b.Tools == nil, "t": tools}
}

func boolText(b *bool) string {
	if b == nil {
		return "nil"
	}
	if *b {
		return "true"
	}
	return "false"
}
