package toolview

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// canonical re-encodes JSON with sorted keys so schemas compare as text.
func canonical(t *testing.T, v any) string {
	t.Helper()
	var b []byte
	switch x := v.(type) {
	case string:
		b = []byte(x)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatalf("marshal %v: %v", v, err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	out, err := json.Marshal(generic)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

const emptySchema = `{"type":"object","properties":{}}`

func TestNormalizeInputSchema(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, emptySchema},
		{"empty map", map[string]any{}, emptySchema},
		{"json null", json.RawMessage(`null`), emptySchema},
		{"empty json object", json.RawMessage(`{}`), emptySchema},
		{"invalid json", []byte(`{"type":`), emptySchema},
		{"json array", `[1,2]`, emptySchema},
		{"json scalar", `"object"`, emptySchema},
		{"trailing garbage", `{"type":"object"} {}`, emptySchema},
		{"well-formed passes through",
			`{"type":"object","properties":{"path":{"type":"string","description":"File"}},"required":["path"]}`,
			`{"type":"object","properties":{"path":{"type":"string","description":"File"}},"required":["path"]}`},
		{"object without properties gets them",
			`{"type":"object"}`, emptySchema},
		{"missing type with properties becomes object",
			`{"properties":{"a":{"type":"integer"}}}`,
			`{"type":"object","properties":{"a":{"type":"integer"}}}`},
		{"missing type with required only",
			`{"required":["a"]}`, emptySchema},
		{"null type with properties",
			`{"type":null,"properties":{"a":{}}}`,
			`{"type":"object","properties":{"a":{}}}`},
		{"required pruned to existing names",
			`{"type":"object","properties":{"a":{},"b":{}},"required":["a","ghost","b",7]}`,
			`{"type":"object","properties":{"a":{},"b":{}},"required":["a","b"]}`},
		{"required all missing is dropped",
			`{"type":"object","properties":{"a":{}},"required":["x","y"]}`,
			`{"type":"object","properties":{"a":{}}}`},
		{"empty required is dropped",
			`{"type":"object","properties":{"a":{}},"required":[]}`,
			`{"type":"object","properties":{"a":{}}}`},
		{"non-list required is dropped",
			`{"type":"object","properties":{"a":{}},"required":"a"}`,
			`{"type":"object","properties":{"a":{}}}`},
		{"nested object repaired",
			`{"type":"object","properties":{"opts":{"type":"object","required":["x"]},"inner":{"properties":{"y":{}},"required":["y","z"]}}}`,
			`{"type":"object","properties":{"opts":{"type":"object","properties":{}},"inner":{"type":"object","properties":{"y":{}},"required":["y"]}}}`},
		{"array items repaired",
			`{"type":"object","properties":{"list":{"type":"array","items":{"properties":{"id":{}},"required":["id","nope"]}}}}`,
			`{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"id":{}},"required":["id"]}}}}`},
		{"definitions become $defs and refs follow",
			`{"type":"object","properties":{"n":{"$ref":"#/definitions/Node"}},"definitions":{"Node":{"type":"object","properties":{"next":{"$ref":"#/definitions/Node"}}}}}`,
			`{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"}}}}}`},
		{"property named definitions is not renamed",
			`{"type":"object","properties":{"definitions":{"type":"string"},"d":{"$ref":"#/properties/definitions"}}}`,
			`{"type":"object","properties":{"definitions":{"type":"string"},"d":{"$ref":"#/properties/definitions"}}}`},
		{"nested definitions and deep refs",
			`{"type":"object","properties":{"p":{"definitions":{"X":{"type":"integer"}},"$ref":"#/properties/p/definitions/X"}}}`,
			`{"type":"object","properties":{"p":{"$defs":{"X":{"type":"integer"}},"$ref":"#/properties/p/$defs/X"}}}`},
		{"definitions merged into existing $defs, $defs wins",
			`{"type":"object","$defs":{"A":{"type":"string"}},"definitions":{"A":{"type":"integer"},"B":{"type":"boolean"}}}`,
			`{"type":"object","properties":{},"$defs":{"A":{"type":"string"},"B":{"type":"boolean"}}}`},
		{"remote and non-definitions refs untouched",
			`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json#/definitions/A"},"b":{"$ref":"#/$defs/B"}}}`,
			`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json#/definitions/A"},"b":{"$ref":"#/$defs/B"}}}`},
		{"nullable anyOf collapses with metadata",
			`{"type":"object","properties":{"q":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"description":"Query","title":"Q"}}}`,
			`{"type":"object","properties":{"q":{"type":"string","nullable":true,"default":null,"description":"Query","title":"Q"}}}`},
		{"nullable oneOf collapses, null first",
			`{"type":"object","properties":{"n":{"oneOf":[{"type":"null"},{"type":"integer","minimum":1}]}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"nullable":true}}}`},
		{"branch keyword wins over outer",
			`{"type":"object","properties":{"n":{"anyOf":[{"type":"integer","description":"inner"},{"type":"null"}],"description":"outer"}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","description":"inner","nullable":true}}}`},
		{"nullable ref drops default",
			`{"type":"object","properties":{"c":{"anyOf":[{"$ref":"#/definitions/C"},{"type":"null"}],"default":null}},"definitions":{"C":{"type":"string"}}}`,
			`{"type":"object","properties":{"c":{"$ref":"#/$defs/C","nullable":true}},"$defs":{"C":{"type":"string"}}}`},
		{"nullable object branch gets repaired",
			`{"type":"object","properties":{"o":{"anyOf":[{"properties":{"k":{}},"required":["k","z"]},{"type":"null"}]}}}`,
			`{"type":"object","properties":{"o":{"type":"object","properties":{"k":{}},"required":["k"],"nullable":true}}}`},
		{"union of two types and null is kept",
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}}}`,
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}}}`},
		{"union without null is kept",
			`{"type":"object","properties":{"v":{"anyOf":[{"const":"a"},{"const":"b"}]}}}`,
			`{"type":"object","properties":{"v":{"anyOf":[{"const":"a"},{"const":"b"}]}}}`},
		{"top-level nullable union",
			`{"anyOf":[{"type":"object","properties":{"a":{}}},{"type":"null"}]}`,
			`{"type":"object","properties":{"a":{}},"nullable":true}`},
		{"instance data is never rewritten",
			`{"type":"object","properties":{"x":{"type":"object","default":{"definitions":1,"required":["q"],"anyOf":[{"type":"null"},{"a":1}]},"examples":[{"properties":5}],"enum":[{"definitions":{}}],"const":{"$ref":"#/definitions/Z"}}}}`,
			`{"type":"object","properties":{"x":{"type":"object","properties":{},"default":{"definitions":1,"required":["q"],"anyOf":[{"type":"null"},{"a":1}]},"examples":[{"properties":5}],"enum":[{"definitions":{}}],"const":{"$ref":"#/definitions/Z"}}}}`},
		{"unknown keywords copied as data",
			`{"type":"object","properties":{},"x-vendor":{"properties":"nope","required":["a"]}}`,
			`{"type":"object","properties":{},"x-vendor":{"properties":"nope","required":["a"]}}`},
		// Composition and conditionals apply to the parent's instance:
		// their required names the parent's properties, and they keep
		// their shape; what nests under their own properties is repaired.
		{"combinators and conditionals walked, their own shape kept",
			`{"type":"object","properties":{"a":{}},"allOf":[{"properties":{"b":{"required":["q"]}},"required":["b","c"]}],"if":{"properties":{"a":{"const":1}}},"then":{"required":["zz"]},"not":{"definitions":{}}}`,
			`{"type":"object","properties":{"a":{}},"allOf":[{"properties":{"b":{"type":"object","properties":{}}},"required":["b","c"]}],"if":{"properties":{"a":{"const":1}}},"then":{"required":["zz"]},"not":{"$defs":{}}}`},
		{"patternProperties names kept, schemas repaired",
			`{"type":"object","patternProperties":{"^definitions$":{"required":["q"]}}}`,
			`{"type":"object","properties":{},"patternProperties":{"^definitions$":{"type":"object","properties":{}}}}`},
		{"boolean schemas kept",
			`{"type":"object","properties":{"any":true,"none":false},"additionalProperties":false}`,
			`{"type":"object","properties":{"any":true,"none":false},"additionalProperties":false}`},
		{"tuple items and prefixItems",
			`{"type":"object","properties":{"t":{"type":"array","items":[{"required":["x"]}],"prefixItems":[{"properties":{}}]}}}`,
			`{"type":"object","properties":{"t":{"type":"array","items":[{"type":"object","properties":{}}],"prefixItems":[{"type":"object","properties":{}}]}}}`},
		{"top-level non-object type forced to object",
			`{"type":"string"}`, emptySchema},
		{"top-level type list forced to object",
			`{"type":["object","null"],"properties":{"a":{}},"required":["a","b"]}`,
			`{"type":"object","properties":{"a":{}},"required":["a"]}`},
		{"top-level properties not a map",
			`{"type":"object","properties":[1]}`, emptySchema},
		{"large numbers kept exactly",
			`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`},
		{"typed mcp schema",
			mcp.ToolInputSchema{Type: "object", Properties: map[string]any{"a": map[string]any{"type": "string"}}, Required: []string{"a", "b"}},
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`},
		{"typed mcp schema with empty type",
			mcp.ToolInputSchema{},
			emptySchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := normalizeInputSchema(tt.in)
			if g, w := canonical(t, got), canonical(t, tt.want); g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func TestNormalizeInputSchemaDoesNotMutate(t *testing.T) {
	in := map[string]any{
		"definitions": map[string]any{"A": map[string]any{"required": []any{"x"}}},
		"properties": map[string]any{
			"a": map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}}},
			"b": map[string]any{"type": "object"},
		},
		"required": []any{"a", "zzz"},
	}
	before := canonical(t, in)
	out := normalizeInputSchema(in)
	if after := canonical(t, in); after != before {
		t.Fatalf("input mutated:\nbefore %s\nafter  %s", before, after)
	}
	// Mutating the output must not reach the input either.
	out["properties"].(map[string]any)["b"].(map[string]any)["type"] = "string"
	if after := canonical(t, in); after != before {
		t.Fatalf("output shares state with input")
	}
}

func TestRewriteRef(t *testing.T) {
	tests := []struct{ in, want string }{
		{"#/definitions/A", "#/$defs/A"},
		{"#/definitions/definitions", "#/$defs/definitions"},
		{"#/definitions/A/definitions/B", "#/$defs/A/$defs/B"},
		{"#/properties/definitions", "#/properties/definitions"},
		{"#/properties/x/items/definitions/Y", "#/properties/x/items/$defs/Y"},
		{"#/properties/x/items/0/definitions/Y", "#/properties/x/items/0/$defs/Y"},
		{"#/anyOf/1/definitions/Y", "#/anyOf/1/$defs/Y"},
		{"#/default/definitions/Y", "#/default/definitions/Y"},
		{"#/$defs/A", "#/$defs/A"},
		{"#", "#"},
		{"other.json#/definitions/A", "other.json#/definitions/A"},
	}
	for _, tt := range tests {
		if got := rewriteRef(tt.in); got != tt.want {
			t.Errorf("rewriteRef(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestConvertTool(t *testing.T) {
	raw := mcp.NewToolWithRawSchema("list-items.v2", "", json.RawMessage(`{"definitions":{"A":{}},"properties":{"a":{"$ref":"#/definitions/A"}}}`))
	got := convertTool("my-api", raw)
	want := ToolDef{
		Name:        "mcp_my_api_list_items_v2",
		Description: "MCP tool list-items.v2 from my-api",
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/A"}},
			"$defs":      map[string]any{"A": map[string]any{}},
		},
		Server:       "my-api",
		OriginalName: "list-items.v2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}

	typed := mcp.NewTool("read", mcp.WithDescription("Reads."), mcp.WithString("path", mcp.Required()))
	got = convertTool("fs", typed)
	if got.Description != "Reads." || got.Name != "mcp_fs_read" {
		t.Errorf("got %+v", got)
	}
	if g, w := canonical(t, got.Parameters), canonical(t, `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`); g != w {
		t.Errorf("parameters %s, want %s", g, w)
	}
}

func FuzzNormalizeInputSchema(f *testing.F) {
	seeds := []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"type":"object"}`,
		`{"properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["a","b"]}`,
		`{"definitions":{"N":{"$ref":"#/definitions/N"}},"$ref":"#/definitions/N"}`,
		`{"anyOf":[{"type":"null"}, 1]}`,
		`{"oneOf":[{"type":"null"},{"anyOf":[{"type":"null"},{"type":"object"}]}]}`,
		`{"type":["object"],"properties":null,"required":{}}`,
		`{"$defs":[],"definitions":{"a":1}}`,
		`{"items":[{"items":{"required":[1]}}],"dependencies":{"a":["b"],"c":{"required":["d"]}}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := normalizeInputSchema(json.RawMessage(data))
		if out["type"] != "object" {
			t.Fatalf("top-level type = %v", out["type"])
		}
		if _, ok := out["properties"].(map[string]any); !ok {
			t.Fatalf("top-level properties = %T", out["properties"])
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("result does not marshal: %v", err)
		}
		// Normalizing is idempotent.
		again := normalizeInputSchema(out)
		a, _ := json.Marshal(out)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Fatalf("not idempotent:\n%s\n%s", a, b)
		}
	})
}
