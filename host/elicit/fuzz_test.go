package elicit_test

import (
	"encoding/json"
	"testing"

	"github.com/hermes-agent/hermes/host/elicit"
)

// FuzzParseSchema: whatever a server sends as requestedSchema, and
// whatever a person types, reading it neither panics nor lets more than
// the bounds through, and an accepted answer is valid for its field.
func FuzzParseSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"integer","minimum":1,"maximum":3,"default":2}},"required":["a"]}`, "2")
	f.Add(`{"type":"object","properties":{"c":{"type":"array","items":{"anyOf":[{"const":"x"},{"const":"y"}]},"maxItems":1}}}`, "1,2")
	f.Add(`{"type":"object","properties":{"e":{"type":"string","format":"email","minLength":3}}}`, "a@b.c")
	f.Add(`{"type":"object","properties":{"d":{"type":"string","enum":["p","q"],"enumNames":["P"]}}}`, "P")
	f.Fuzz(func(t *testing.T, schema, typed string) {
		var v any
		if json.Unmarshal([]byte(schema), &v) != nil {
			return
		}
		fields, err := elicit.ParseSchema("fuzz", v)
		if err != nil {
			return
		}
		if len(fields) > elicit.MaxFields {
			t.Fatalf("%d fields passed", len(fields))
		}
		for i := range fields {
			fl := &fields[i]
			if len(fl.Options) > elicit.MaxOptions {
				t.Fatalf("%d options passed", len(fl.Options))
			}
			got, err := fl.Parse(typed)
			if err != nil {
				continue
			}
			if _, err := fl.Parse(shown(got)); err != nil && fl.Kind != elicit.KindString {
				t.Fatalf("%s: accepted %q as %v, which does not read back: %v", fl.Kind, typed, got, err)
			}
		}
	})
}

// shown is a value as a person would type it again.
func shown(v any) string {
	switch t := v.(type) {
	case []string:
		out := ""
		for i, s := range t {
			if i > 0 {
				out += ","
			}
			out += s
		}
		return out
	case bool:
		if t {
			return "y"
		}
		return "n"
	}
	b, _ := json.Marshal(v)
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	return string(b)
}
