package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/cli/mcp/servers"

	"github.com/hermes-agent/hermes/host/cli/mcp/calls"

	"github.com/hermes-agent/hermes/host/cli/mcp/catalogcmd"

	"github.com/hermes-agent/hermes/host/cli/mcp/login"

	"github.com/hermes-agent/hermes/host/cli/tools"

	"github.com/hermes-agent/hermes/host/cli/modelcmd"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/failure"
)

// goldenTypes is the documented type of each golden file of TestJSONGolden:
// what the command prints with --json. A golden file missing here fails
// TestJSONSchema, so every command's output is checked.
var goldenTypes = map[string]func() any{
	"list":                     func() any { return &[]cmdkit.JSONServer{} },
	"list-config-error":        func() any { return &cmdkit.JSONFailure{} },
	"get":                      func() any { return &servers.GetReport{} },
	"test":                     func() any { return &calls.TestReport{} },
	"test-missing-command":     func() any { return &calls.TestReport{} },
	"test-unknown-server":      func() any { return &cmdkit.JSONFailure{} },
	"tools":                    func() any { return &tools.ToolsReport{} },
	"auth-status":              func() any { return &[]login.AuthStatusEntry{} },
	"catalog":                  func() any { return &catalogcmd.CatalogJSON{} },
	"enable":                   func() any { return &cmdkit.JSONChanged{} },
	"enable-unchanged":         func() any { return &cmdkit.JSONChanged{} },
	"enable-unknown-server":    func() any { return &cmdkit.JSONFailure{} },
	"disable":                  func() any { return &cmdkit.JSONChanged{} },
	"configure":                func() any { return &cmdkit.JSONChanged{} },
	"add":                      func() any { return &cmdkit.JSONServer{} },
	"add-failed-probe":         func() any { return &cmdkit.JSONFailure{} },
	"remove":                   func() any { return &cmdkit.JSONRemoved{} },
	"install-unknown-entry":    func() any { return &cmdkit.JSONFailure{} },
	"uninstall-not-installed":  func() any { return &cmdkit.JSONFailure{} },
	"model-test":               func() any { return &modelcmd.ModelTestJSON{} },
	"model-test-auth":          func() any { return &modelcmd.ModelTestJSON{} },
	"model-test-unknown-model": func() any { return &modelcmd.ModelTestJSON{} },
	"model-test-no-model":      func() any { return &modelcmd.ModelTestJSON{} },
}

// Every golden output decodes into its documented type with no field left
// over, every state and error code in it is one docs/JSON.md lists, and a
// failure has both a code and a message.
func TestJSONSchema(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "json", "*.golden"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files (%v); run: go test -run TestJSONGolden ./host/cli -update", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".golden")
		seen[name] = true
		newV, ok := goldenTypes[name]
		if !ok {
			t.Errorf("%s: no documented type in goldenTypes", f)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		v := newV()
		if err := dec.Decode(v); err != nil {
			t.Errorf("%s does not decode into %T: %v", f, v, err)
			continue
		}
		checkVocabulary(t, f, reflect.ValueOf(v))
	}
	for name := range goldenTypes {
		if !seen[name] {
			t.Errorf("goldenTypes names %s, which has no golden file", name)
		}
	}
}

// checkVocabulary walks v: each jsonServer's state, each jsonError's code.
func checkVocabulary(t *testing.T, file string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkVocabulary(t, file, v.Elem())
		}
		return
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			checkVocabulary(t, file, v.Index(i))
		}
		return
	case reflect.Struct:
	default:
		return
	}
	switch x := v.Interface().(type) {
	case cmdkit.JSONServer:
		if !slices.Contains(cmdkit.JSONStates, x.State) {
			t.Errorf("%s: %s has state %q, not one of %v", file, x.Name, x.State, cmdkit.JSONStates)
		}
		if x.Tools.Include == nil || x.Tools.Exclude == nil {
			t.Errorf("%s: %s: tools.include and tools.exclude must both be lists", file, x.Name)
		}
	case cmdkit.JSONError:
		if !slices.Contains(cmdkit.JSONCodes, x.Code) || x.Message == "" {
			t.Errorf("%s: error %+v: want a code of %v and a message", file, x, cmdkit.JSONCodes)
		}
	}
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).IsExported() {
			checkVocabulary(t, file, v.Field(i))
		}
	}
}

// docs/JSON.md names every field of the documented types, every state and
// every code.
func TestJSONDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "JSON.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, newV := range goldenTypes {
		jsonFields(reflect.TypeOf(newV()), want, map[reflect.Type]bool{})
	}
	for _, s := range append(slices.Clone(cmdkit.JSONStates), cmdkit.JSONCodes...) {
		want[s] = true
	}
	for w := range want {
		if !bytes.Contains(doc, []byte("`"+w+"`")) {
			t.Errorf("docs/JSON.md does not name `%s`", w)
		}
	}
}

// jsonFields adds the JSON names of the fields of t (and of the types it
// holds) to names.
func jsonFields(t reflect.Type, names map[string]bool, done map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || done[t] {
		return
	}
	done[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			jsonFields(f.Type, names, done)
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		names[name] = true
		jsonFields(f.Type, names, done)
	}
}

// docs/JSON.md's tables of error codes are host/failure's: the same codes
// in the same order, each given by the same side, with the same meaning
// (the doc's backquotes aside).
func TestJSONCodesDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "JSON.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Error codes\n")
	if !ok {
		t.Fatal("docs/JSON.md has no section \"## Error codes\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	// The two tables of the section, each row's cells without backquotes.
	var tables [][][]string
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(strings.TrimSpace(c), "`", "")
		}
		if !inTable {
			tables = append(tables, nil)
			inTable = true
		}
		if cells[0] == "code" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		tables = append(tables[:len(tables)-1], append(tables[len(tables)-1], cells))
	}
	if len(tables) != 2 {
		t.Fatalf("docs/JSON.md's error codes: want 2 tables (servers', model endpoint's), got %d", len(tables))
	}
	var want [][]string
	for _, m := range failure.Reported() {
		want = append(want, []string{string(m.Code), m.From(), m.Text})
	}
	sameRows(t, "failure.Reported", tables[0], want)
	want = nil
	for _, m := range failure.ModelReported() {
		want = append(want, []string{string(m.Code), m.Text})
	}
	sameRows(t, "failure.ModelReported", tables[1], want)
}

// sameRows reports each row of docs/JSON.md's table that differs from
// what the table of host/failure named from says.
func sameRows(t *testing.T, from string, got, want [][]string) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		var g, w []string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !slices.Equal(g, w) {
			t.Errorf("docs/JSON.md's error codes, row %d: %q; %s has %q", i+1, g, from, w)
		}
	}
}
