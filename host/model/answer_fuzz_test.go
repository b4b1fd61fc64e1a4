package model

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzReadAnswer feeds the reader of hermes-model-openai's answer arbitrary
// bytes: it never panics, hands on only text that was in the input, keeps
// a well-formed answer whatever garbage surrounds it, and refuses a line
// past its bound instead of growing.
func FuzzReadAnswer(f *testing.F) {
	good, _ := json.Marshal(Line{Response: &Response{Text: "hi", FinishReason: "stop", Choices: 1}})
	f.Add([]byte(`{"text":"he"}` + "\n" + `{"text":"llo"}` + "\n" + string(good) + "\n"))
	f.Add([]byte(`{"error":{"Kind":"auth","Detail":"no"}}` + "\n"))
	f.Add([]byte("{not json\n\x00\xff\n" + `{"text":1}` + "\n"))
	f.Add([]byte(strings.Repeat("x", 300)))
	f.Add([]byte(`{"text":"\u001b[31m"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var text strings.Builder
		res, merr, err := readAnswer(bytes.NewReader(data), 256, func(d string) { text.WriteString(d) })
		if text.Len() > len(data) {
			t.Fatalf("%d bytes of text from %d bytes of input", text.Len(), len(data))
		}
		if err == nil && bytes.Count(data, []byte("\n")) == 0 && len(data) > 256 {
			t.Fatalf("a %d-byte line past the bound was read", len(data))
		}
		_ = res
		_ = merr
		// Garbage before a good answer does not hide it.
		in := append(append(bytes.ReplaceAll(data, []byte("\n"), []byte(" ")), '\n'), append(good, '\n')...)
		if len(in)-len(good)-1 > 256 {
			return
		}
		res, _, err = readAnswer(bytes.NewReader(in), 256, nil)
		if err != nil || res == nil || res.Text != "hi" {
			t.Fatalf("the answer after %q was lost: %+v %v", data, res, err)
		}
	})
}
