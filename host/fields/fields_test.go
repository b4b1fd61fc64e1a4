package fields_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/hermes-agent/hermes/host/fields"
)

// doc decodes YAML as config and manifests are decoded.
func doc(t *testing.T, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Every reader's error names the file, the key (an entry's index or name
// included) and the type it wanted, in one line, and never the value of a
// mapping or list.
func TestErrorsNameFileKeyAndType(t *testing.T) {
	m := doc(t, `
name: {first: x}
args: [a, [b]]
env: {TOKEN: s3cret, NESTED: {deep: 1}}
list: just text
enabled: maybe
tools: [x]
`)
	cases := []struct {
		err  *fields.Error
		want string
	}{
		{second(fields.Text("name", m["name"])), `config.yaml: key "name": want text, got a mapping`},
		{second(fields.TextList("args", m["args"])), `config.yaml: key "args[1]": want text, got a list`},
		{second(fields.TextList("list", m["list"])), `config.yaml: key "list": want a list, got text`},
		{second(fields.TextMap("env", m["env"])), `config.yaml: key "env.NESTED": want text, got a mapping`},
		{second(fields.Mapping("tools", m["tools"])), `config.yaml: key "tools": want a mapping, got a list`},
		{second(fields.Bool("enabled", m["enabled"], true)), `config.yaml: key "enabled": want true or false, got "maybe"`},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("no error, want %s", c.want)
			continue
		}
		got := c.err.In("config.yaml").Error()
		if got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
		if strings.Contains(got, "s3cret") || strings.Contains(got, "\n") {
			t.Errorf("%q: a value or several lines in the message", got)
		}
	}
	// Without a file the message starts at the key.
	if _, err := fields.Text("name", m["name"]); err == nil || err.Error() != `key "name": want text, got a mapping` {
		t.Errorf("without a file: %v", err)
	}
}

// Scalars read as text as written, nothing is empty, and JSON numbers
// keep their digits.
func TestScalarsAsText(t *testing.T) {
	m := doc(t, "port: 8080\nratio: 1.5\non: true\nnone:\nbig: 1000000\n")
	for key, want := range map[string]string{"port": "8080", "ratio": "1.5", "on": "true", "none": "", "big": "1000000"} {
		if got, err := fields.Text(key, m[key]); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", key, got, err, want)
		}
	}
	if got, err := fields.Text("n", json.Number("12345678901234567890")); err != nil || got != "12345678901234567890" {
		t.Errorf("json.Number = %q, %v", got, err)
	}
	if b, err := fields.Bool("x", nil, true); err != nil || !b {
		t.Errorf("absent bool = %v, %v; want the default", b, err)
	}
	if l, err := fields.TextList("args", []any{"a", uint64(2)}); err != nil || strings.Join(l, ",") != "a,2" {
		t.Errorf("TextList = %v, %v", l, err)
	}
}

func second[T any](_ T, err *fields.Error) *fields.Error { return err }

// TestNumber: numbers as YAML and JSON decoders give them and numeric
// strings are numbers; NaN, infinities, other text and other types are not.
func TestNumber(t *testing.T) {
	for _, c := range []struct {
		v    any
		want float64
		ok   bool
	}{
		{30, 30, true}, {int64(-2), -2, true}, {uint64(7), 7, true}, {2.5, 2.5, true}, {" 1.5 ", 1.5, true}, {"1e3", 1000, true},
		{"30s", 0, false}, {"NaN", 0, false}, {"inf", 0, false}, {true, 0, false}, {nil, 0, false}, {[]any{1}, 0, false},
	} {
		if got, ok := fields.Number(c.v); got != c.want || ok != c.ok {
			t.Errorf("Number(%#v) = %v, %v; want %v, %v", c.v, got, ok, c.want, c.ok)
		}
	}
}
