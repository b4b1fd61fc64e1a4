package cmdkit

import (
	"bytes"
	"encoding/json"

	"github.com/hermes-agent/hermes/host/termsafe"
)

// WriteJSON prints v as indented JSON. What encoding/json leaves raw but a
// terminal would act on (C1 controls, bidi overrides) is written as \u
// escapes: the values decode exactly as they were.
func WriteJSON(e *Env, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	_, _ = e.Out.Write(termsafe.JSON(buf.Bytes()))
}
