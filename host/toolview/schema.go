package toolview

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// Schema keywords whose values are schemas, by shape. Only these positions
// are walked; every other value (default, examples, enum, const, unknown
// keywords) is instance data or annotation and is copied untouched.
var (
	// name → schema maps: the keys are names, never keywords.
	schemaMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true, "definitions": true,
		"$defs": true, "dependentSchemas": true,
	}
	// a single schema (items may also be a list of schemas).
	schemaNodeKeywords = map[string]bool{
		"items": true, "additionalItems": true, "additionalProperties": true,
		"contains": true, "propertyNames": true, "not": true, "if": true,
		"then": true, "else": true, "unevaluatedItems": true,
		"unevaluatedProperties": true, "contentSchema": true,
	}
	// a list of schemas.
	schemaListKeywords = map[string]bool{
		"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true,
	}
)

// emptyObjectSchema returns a new {"type":"object","properties":{}}.
func emptyObjectSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

// inputSchemaOf returns the input schema of an MCP tool in the most
// faithful form available: its raw JSON as the server wrote it (nil when
// it gave none).
// The result is meant for normalizeInputSchema.
func inputSchemaOf(t mcpvalue.Tool) any {
	if len(t.InputSchema) > 0 {
		return t.InputSchema
	}
	return nil
}

// normalizeInputSchema turns an MCP tool's input schema into one that every
// model provider accepts. raw may be nil, a map[string]any, JSON
// (json.RawMessage, []byte or string), an mcpvalue.ToolInputSchema or anything
// else that marshals to JSON. The input is never modified; numbers are kept
// exactly (as json.Number when decoded from JSON).
//
// The rules, in order:
//  1. nil, empty, non-object or undecodable input → {"type":"object","properties":{}}.
//  2. "definitions" becomes "$defs" where it is a schema keyword, never where
//     it is a property name; local "$ref" pointers are rewritten to match
//     ("#/definitions/X" → "#/$defs/X").
//  3. Nullable unions ("anyOf"/"oneOf" of one schema X and {"type":"null"})
//     collapse to X merged with the node's other keywords, plus
//     "nullable": true; a "default" is not carried onto a "$ref".
//  4. Recursively, a node without "type" that has "properties" or
//     "required" gets "type": "object"; object nodes get "properties": {}
//     when missing; "required" keeps only names present in "properties" and
//     is dropped when that leaves it empty. Subschemas that apply to their
//     parent's instance (allOf, anyOf, oneOf, not, if/then/else,
//     dependentSchemas) are left their own shape: their "required" speaks
//     of the parent's properties.
//  5. The top level is always an object schema with a "properties" map.
func normalizeInputSchema(raw any) map[string]any {
	root, ok := decodeSchema(raw)
	if !ok || len(root) == 0 {
		return emptyObjectSchema()
	}
	out, ok := normalizeNode(root).(map[string]any)
	if !ok {
		return emptyObjectSchema()
	}
	if out["type"] != "object" {
		out["type"] = "object"
		repairObjectShape(out)
	}
	if _, ok := out["properties"].(map[string]any); !ok {
		out["properties"] = map[string]any{}
	}
	return out
}

// decodeSchema turns the accepted input forms into a fresh map.
func decodeSchema(raw any) (map[string]any, bool) {
	var data []byte
	switch v := raw.(type) {
	case nil:
		return nil, false
	case map[string]any:
		return v, true
	case json.RawMessage:
		data = v
	case []byte:
		data = v
	case string:
		data = []byte(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		data = b
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // trailing data after the object
	}
	return m, true
}

// normalizeNode returns a normalized copy of a schema node. Non-object
// nodes (boolean schemas, malformed values) are copied as they are.
func normalizeNode(v any) any {
	return normalizeNodeAs(v, false)
}

// inPlaceKeywords hold subschemas that apply to the same instance as the
// node they sit in (composition and conditionals): {"required": ["a"]}
// under allOf speaks of the parent's properties, so rule 4 must not give
// it a shape of its own. Their own nested properties are still repaired.
var inPlaceKeywords = map[string]bool{
	"allOf": true, "anyOf": true, "oneOf": true, "not": true,
	"if": true, "then": true, "else": true, "dependentSchemas": true,
}

// normalizeNodeAs is normalizeNode; inPlace skips rule 4 on the node
// itself (see inPlaceKeywords).
func normalizeNodeAs(v any, inPlace bool) any {
	node, ok := v.(map[string]any)
	if !ok {
		return deepCopy(v)
	}
	out := make(map[string]any, len(node))
	for k, val := range node {
		if k == "definitions" {
			continue // merged into $defs below
		}
		out[k] = normalizeKeyword(k, val)
	}
	if defs, ok := node["definitions"]; ok {
		normalized := normalizeKeyword("definitions", defs)
		switch existing := out["$defs"].(type) {
		case nil:
			out["$defs"] = normalized
		case map[string]any:
			// Both spellings present: "$defs" wins on a name clash.
			if m, ok := normalized.(map[string]any); ok {
				for name, s := range m {
					if _, dup := existing[name]; !dup {
						existing[name] = s
					}
				}
			}
		}
	}
	if ref, ok := out["$ref"].(string); ok {
		out["$ref"] = rewriteRef(ref)
	}
	out = collapseNullable(out)
	if !inPlace {
		repairObjectShape(out)
	}
	return out
}

// normalizeKeyword normalizes the value of keyword k according to its shape.
func normalizeKeyword(k string, val any) any {
	inPlace := inPlaceKeywords[k]
	switch {
	case schemaMapKeywords[k]:
		m, ok := val.(map[string]any)
		if !ok {
			return deepCopy(val)
		}
		out := make(map[string]any, len(m))
		for name, s := range m {
			out[name] = normalizeNodeAs(s, inPlace)
		}
		return out
	case k == "dependencies":
		// Values are schemas or lists of property names.
		m, ok := val.(map[string]any)
		if !ok {
			return deepCopy(val)
		}
		out := make(map[string]any, len(m))
		for name, s := range m {
			out[name] = normalizeNode(s)
		}
		return out
	case schemaNodeKeywords[k]:
		if list, ok := val.([]any); ok && k == "items" {
			return normalizeList(list, false)
		}
		return normalizeNodeAs(val, inPlace)
	case schemaListKeywords[k]:
		if list, ok := val.([]any); ok {
			return normalizeList(list, inPlace)
		}
		return deepCopy(val)
	default:
		return deepCopy(val)
	}
}

func normalizeList(list []any, inPlace bool) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = normalizeNodeAs(s, inPlace)
	}
	return out
}

// rewriteRef renames "definitions" segments of a local JSON pointer that sit
// at schema-keyword positions, so the pointer still resolves after the
// rename. "#/properties/definitions" (a property named definitions) is left
// alone; "#/properties/a/definitions/B" becomes "#/properties/a/$defs/B".
func rewriteRef(ref string) string {
	if !strings.HasPrefix(ref, "#/") {
		return ref
	}
	tokens := strings.Split(ref[2:], "/")
	const (
		atKeyword = iota // next token is a keyword of a schema node
		atName           // next token is a name in a name → schema map
		atIndex          // next token is an index in a list of schemas
		atItems          // after "items": an index or a keyword
		done             // inside instance data: stop rewriting
	)
	state := atKeyword
	changed := false
	for i, tok := range tokens {
		switch state {
		case atKeyword:
			switch {
			case tok == "definitions":
				tokens[i] = "$defs"
				changed = true
				state = atName
			case schemaMapKeywords[tok] || tok == "dependencies":
				state = atName
			case tok == "items":
				state = atItems
			case schemaNodeKeywords[tok]:
				state = atKeyword
			case schemaListKeywords[tok]:
				state = atIndex
			default:
				state = done
			}
		case atName, atIndex:
			state = atKeyword
		case atItems:
			if _, err := strconv.Atoi(tok); err == nil {
				state = atKeyword
				continue
			}
			// "items" held a single schema: this token is its keyword.
			if tok == "definitions" {
				tokens[i] = "$defs"
				changed = true
				state = atName
				continue
			}
			state = atKeyword
			switch {
			case schemaMapKeywords[tok] || tok == "dependencies":
				state = atName
			case tok == "items":
				state = atItems
			case schemaListKeywords[tok]:
				state = atIndex
			case !schemaNodeKeywords[tok]:
				state = done
			}
		}
		if state == done {
			break
		}
	}
	if !changed {
		return ref
	}
	return "#/" + strings.Join(tokens, "/")
}

// collapseNullable collapses "anyOf"/"oneOf" unions of exactly one schema
// and one or more {"type":"null"} branches into that schema, keeping a
// "nullable": true hint. Other unions are left as declared.
func collapseNullable(node map[string]any) map[string]any {
	for {
		collapsed := false
		for _, key := range []string{"anyOf", "oneOf"} {
			variants, ok := node[key].([]any)
			if !ok {
				continue
			}
			var nonNull []any
			for _, v := range variants {
				if m, ok := v.(map[string]any); ok && m["type"] == "null" {
					continue
				}
				nonNull = append(nonNull, v)
			}
			if len(nonNull) != 1 || len(nonNull) == len(variants) {
				continue
			}
			replacement := map[string]any{}
			if m, ok := nonNull[0].(map[string]any); ok {
				for k, v := range m {
					replacement[k] = v
				}
			}
			_, hasRef := replacement["$ref"]
			for k, v := range node {
				if k == key {
					continue
				}
				if _, present := replacement[k]; present {
					continue
				}
				if k == "default" && hasRef {
					continue // strict validators reject siblings of $ref
				}
				replacement[k] = v
			}
			if _, present := replacement["nullable"]; !present {
				replacement["nullable"] = true
			}
			node = replacement
			collapsed = true
			break
		}
		if !collapsed {
			return node
		}
	}
}

// repairObjectShape applies rule 4 of normalizeInputSchema to one node.
func repairObjectShape(node map[string]any) {
	if !hasType(node["type"]) {
		_, hasProps := node["properties"]
		_, hasReq := node["required"]
		if hasProps || hasReq {
			node["type"] = "object"
		}
	}
	if node["type"] != "object" {
		return
	}
	props, ok := node["properties"].(map[string]any)
	if !ok {
		props = map[string]any{}
		node["properties"] = props
	}
	req, present := node["required"]
	if !present {
		return
	}
	list, ok := req.([]any)
	if !ok {
		if strs, isStrs := req.([]string); isStrs {
			list = make([]any, len(strs))
			for i, s := range strs {
				list[i] = s
			}
		} else {
			delete(node, "required")
			return
		}
	}
	valid := make([]any, 0, len(list))
	for _, r := range list {
		if name, ok := r.(string); ok {
			if _, exists := props[name]; exists {
				valid = append(valid, name)
			}
		}
	}
	if len(valid) == 0 {
		delete(node, "required")
		return
	}
	node["required"] = valid
}

// hasType reports whether a "type" value declares a type at all (nil, "",
// an empty list and false do not).
func hasType(t any) bool {
	switch v := t.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case bool:
		return v
	default:
		return true
	}
}

// deepCopy copies JSON-shaped values so the result shares nothing mutable
// with the input.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = deepCopy(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = deepCopy(val)
		}
		return out
	case []string:
		return slices.Clone(x)
	default:
		return v
	}
}
