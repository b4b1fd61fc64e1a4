// Command k8sschema writes the JSON schemas kubeconform validates
// Kubernetes manifests against, generated from the OpenAPI spec of one
// pinned Kubernetes release (api/openapi-spec/swagger.json of the
// k8s.io/kubernetes module, fetched with `go mod download`), so the Helm
// chart is checked offline, with no schema registry.
//
// It writes one file per kind and API version, named as kubeconform's
// -schema-location template {{ .ResourceKind }}{{ .KindSuffix }}.json
// expects (deployment-apps-v1.json, service-v1.json). Each file is
// standalone: the kind's schema with every definition it reaches under
// "definitions". With -strict (the default) every object schema that lists
// its properties gets additionalProperties: false, so a misspelt field
// (readinessProbe.httpGet.prot) fails validation instead of being dropped
// by the API server; apiVersion and kind are pinned to the file's own.
//
// A custom resource's schema comes the same way from its
// CustomResourceDefinition, read from a module too (-crd
// MODULE@VERSION/PATH, repeatable), so a chart's ServiceMonitor is checked
// as strictly as its Deployment.
//
// Usage:
//
//	go run ./tools/k8sschema -k8s-version v1.37.2 -out DIR
//	go run ./tools/k8sschema -spec swagger.json -out DIR
//	go run ./tools/k8sschema -k8s-version v1.37.2 -crd github.com/prometheus-operator/prometheus-operator@v0.85.0/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml -out DIR
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
)

// specPath is where the OpenAPI v2 spec lies inside the k8s.io/kubernetes
// module.
const specPath = "api/openapi-spec/swagger.json"

// stampName is the file written last into the output folder: its presence
// says the folder is complete (make reuses it), its content what made it.
const stampName = ".complete"

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "k8sschema:", err)
		os.Exit(1)
	}
}

func run(args []string, log io.Writer) error {
	fs := flag.NewFlagSet("k8sschema", flag.ContinueOnError)
	fs.SetOutput(log)
	version := fs.String("k8s-version", "", "the k8s.io/kubernetes module `VERSION` whose "+specPath+" to read (go mod download)")
	spec := fs.String("spec", "", "read the OpenAPI v2 spec from `FILE` instead of a module")
	out := fs.String("out", "", "write the schemas into `DIR` (created; its old schemas are replaced)")
	strict := fs.Bool("strict", true, "add additionalProperties: false to every object schema with properties")
	var crds []string
	fs.Func("crd", "also write the schemas of the CustomResourceDefinition at `MODULE@VERSION/PATH` (a file of that module; repeatable)", func(s string) error {
		crds = append(crds, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || (*version == "") == (*spec == "") {
		return errors.New("usage: k8sschema (-k8s-version VERSION | -spec FILE) [-crd MODULE@VERSION/PATH]... -out DIR [-strict=false]")
	}
	path := *spec
	if path == "" {
		dir, err := moduleDir("k8s.io/kubernetes", *version)
		if err != nil {
			return err
		}
		path = filepath.Join(dir, filepath.FromSlash(specPath))
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the OpenAPI spec: %w", err)
	}
	files, err := Generate(src, *strict)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, ref := range crds {
		crdPath, err := moduleFile(ref)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(crdPath)
		if err != nil {
			return fmt.Errorf("read the CustomResourceDefinition: %w", err)
		}
		more, err := GenerateCRD(b, *strict)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		for name, b := range more {
			files[name] = b
		}
	}
	if err := write(*out, files); err != nil {
		return err
	}
	from := path
	if *version != "" {
		from = "k8s.io/kubernetes@" + *version + " " + specPath
	}
	for _, ref := range crds {
		from += ", " + ref
	}
	stamp := fmt.Sprintf("%d schemas from %s (strict %t)\n", len(files), from, *strict)
	if err := os.WriteFile(filepath.Join(*out, stampName), []byte(stamp), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(*out, stampName), err)
	}
	fmt.Fprint(log, "k8sschema: wrote ", stamp)
	return nil
}

// moduleDir downloads module@version into the module cache (a no-op when
// it is there) and returns its folder. It runs outside any module or
// workspace, so the download touches no go.mod.
func moduleDir(module, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(outb, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", module, version, err, strings.TrimSpace(stderr.String()))
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no folder in its answer", module, version)
	}
	return info.Dir, nil
}

// moduleFile downloads the module of ref (MODULE@VERSION/PATH) and returns
// the path of the file PATH in it.
func moduleFile(ref string) (string, error) {
	module, rest, ok := strings.Cut(ref, "@")
	version, file, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || module == "" || version == "" || file == "" {
		return "", fmt.Errorf("-crd %q: want MODULE@VERSION/PATH", ref)
	}
	dir, err := moduleDir(module, version)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.FromSlash(file)), nil
}

// write replaces the schemas in dir with files.
func write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range append(old, filepath.Join(dir, stampName)) {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
		}
	}
	return nil
}

// gvk is one entry of a definition's x-kubernetes-group-version-kind.
type gvk struct {
	Group, Version, Kind string
}

// apiVersion is the manifest's apiVersion for g: "v1" for the core group,
// "apps/v1" otherwise.
func (g gvk) apiVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

// FileName is the name kubeconform's {{ .ResourceKind }}{{ .KindSuffix }}.json
// gives the schema of g: the kind in lower case, the first label of the
// group, the version.
func (g gvk) FileName() string {
	suffix := "-" + strings.ToLower(strings.Split(g.Group, ".")[0])
	if g.Group == "" {
		suffix = ""
	}
	return strings.ToLower(g.Kind) + suffix + "-" + strings.ToLower(g.Version) + ".json"
}

// Generate turns an OpenAPI v2 spec (swagger.json) into standalone JSON
// schemas, one per kind and version, keyed by file name. Two kinds whose
// file names collide (groups that share a first label) keep the first in
// the order of their definitions' names.
func Generate(spec []byte, strict bool) (map[string][]byte, error) {
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("not an OpenAPI v2 spec: %w", err)
	}
	if len(doc.Definitions) == 0 {
		return nil, errors.New("no definitions in the spec")
	}
	defs := map[string]any{}
	for name, d := range doc.Definitions {
		// A definition is only ever reached as a property's or an item's
		// value, which may be null.
		defs[name] = nullable(convert(d, strict))
		if r, ok := numberOrString[name]; ok {
			defs[name] = r
		}
	}
	names := make([]string, 0, len(doc.Definitions))
	for name := range doc.Definitions {
		names = append(names, name)
	}
	sort.Strings(names)
	files := map[string][]byte{}
	for _, name := range names {
		for _, g := range kinds(doc.Definitions[name]) {
			file := g.FileName()
			if _, dup := files[file]; dup {
				continue
			}
			root, _ := convert(doc.Definitions[name], strict).(map[string]any)
			pin(root, g)
			reached := map[string]any{}
			reach(root, defs, reached)
			root["$schema"] = "http://json-schema.org/draft-07/schema#"
			if len(reached) > 0 {
				root["definitions"] = reached
			}
			b, err := json.Marshal(root)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			files[file] = b
		}
	}
	if len(files) == 0 {
		return nil, errors.New("no definition names a kind (x-kubernetes-group-version-kind)")
	}
	return files, nil
}

// GenerateCRD turns a CustomResourceDefinition (YAML or JSON, of
// apiextensions.k8s.io/v1) into standalone JSON schemas, one per served
// version, keyed by file name as Generate's.
func GenerateCRD(src []byte, strict bool) (map[string][]byte, error) {
	var crd struct {
		Kind string `json:"kind"`
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind string `json:"kind"`
			} `json:"names"`
			Versions []struct {
				Name   string `json:"name"`
				Served bool   `json:"served"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	js, err := yaml.YAMLToJSON(src)
	if err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	if err := json.Unmarshal(js, &crd); err != nil {
		return nil, fmt.Errorf("not a CustomResourceDefinition: %w", err)
	}
	if crd.Kind != "CustomResourceDefinition" || crd.Spec.Group == "" || crd.Spec.Names.Kind == "" {
		return nil, errors.New("not a CustomResourceDefinition (kind, spec.group, spec.names.kind)")
	}
	files := map[string][]byte{}
	for _, v := range crd.Spec.Versions {
		if !v.Served || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		g := gvk{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		root, _ := convert(v.Schema.OpenAPIV3Schema, strict).(map[string]any)
		props, _ := root["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			root["properties"] = props
		}
		// A structural schema leaves these to the API server; a manifest has them.
		props["apiVersion"], props["kind"] = map[string]any{"type": "string"}, map[string]any{"type": "string"}
		if _, ok := props["metadata"]; !ok {
			props["metadata"] = map[string]any{"type": "object"}
		}
		pin(root, g)
		root["$schema"] = "http://json-schema.org/draft-07/schema#"
		b, err := json.Marshal(root)
		if err != nil {
			return nil, err
		}
		files[g.FileName()] = b
	}
	if len(files) == 0 {
		return nil, errors.New("no served version with a schema")
	}
	return files, nil
}

// kinds reads a definition's x-kubernetes-group-version-kind.
func kinds(def map[string]any) []gvk {
	list, _ := def["x-kubernetes-group-version-kind"].([]any)
	var out []gvk
	for _, e := range list {
		m, _ := e.(map[string]any)
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if v != "" && k != "" {
			out = append(out, gvk{Group: g, Version: v, Kind: k})
		}
	}
	return out
}

// pin restricts a kind's apiVersion and kind properties to its own, so a
// manifest validated against the wrong file fails.
func pin(root map[string]any, g gvk) {
	props, _ := root["properties"].(map[string]any)
	if props == nil {
		return
	}
	if _, ok := props["apiVersion"]; ok {
		props["apiVersion"] = map[string]any{"type": "string", "enum": []any{g.apiVersion()}}
	}
	if _, ok := props["kind"]; ok {
		props["kind"] = map[string]any{"type": "string", "enum": []any{g.Kind}}
	}
}

// refPrefix starts every reference between definitions of the spec; the
// generated files keep the same references, resolved in their own
// "definitions".
const refPrefix = "#/definitions/"

// reach copies into reached every definition s refers to, directly or
// through another one.
func reach(s any, defs, reached map[string]any) {
	switch v := s.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, refPrefix) {
			name := strings.TrimPrefix(ref, refPrefix)
			if _, seen := reached[name]; !seen {
				if d, ok := defs[name]; ok {
					reached[name] = d
					reach(d, defs, reached)
				}
			}
		}
		for k, e := range v {
			if k != "definitions" {
				reach(e, defs, reached)
			}
		}
	case []any:
		for _, e := range v {
			reach(e, defs, reached)
		}
	}
}

// Definitions whose values YAML may write as a number as well as a string
// (the API server accepts both): their schema is replaced.
var numberOrString = map[string]any{
	// cpu: 1 as well as cpu: "500m".
	"io.k8s.apimachinery.pkg.api.resource.Quantity": map[string]any{"type": []any{"string", "number", "null"}},
	// port: 8080 as well as port: http.
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": map[string]any{"type": []any{"string", "integer", "null"}},
}

// convert returns an OpenAPI schema (v2, or a CRD's v3 structural one) as
// JSON Schema: descriptions and the x-kubernetes extensions dropped
// (x-kubernetes-int-or-string read as a string or an integer), null allowed
// where a value may be left out (YAML's empty value, which the API server
// reads as absent), and, when strict, unknown properties refused except
// where x-kubernetes-preserve-unknown-fields keeps them.
func convert(s any, strict bool) any {
	switch v := s.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			switch {
			case k == "description", strings.HasPrefix(k, "x-kubernetes-"):
			case k == "properties":
				props := map[string]any{}
				for name, p := range e.(map[string]any) {
					props[name] = nullable(convert(p, strict))
				}
				out[k] = props
			default:
				out[k] = convert(e, strict)
			}
		}
		if v["x-kubernetes-int-or-string"] == true {
			delete(out, "type")
			out["type"] = []any{"string", "integer"}
		}
		if strict && out["properties"] != nil && out["additionalProperties"] == nil && v["x-kubernetes-preserve-unknown-fields"] != true {
			out["additionalProperties"] = false
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = convert(e, strict)
		}
		return out
	}
	return s
}

// nullable lets a value be null as well: its type gains "null" (a
// reference's definition has it already).
func nullable(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	switch t := m["type"].(type) {
	case string:
		m["type"] = []any{t, "null"}
	case []any:
		if !slices.Contains(t, any("null")) {
			m["type"] = append(t, "null")
		}
	}
	return m
}
