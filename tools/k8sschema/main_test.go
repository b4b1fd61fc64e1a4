package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// spec is a small OpenAPI v2 spec of the shape of Kubernetes's: a kind
// referring to a spec, an IntOrString and a map.
const spec = `{"definitions": {
  "io.k8s.api.apps.v1.Thing": {
    "description": "a thing", "type": "object",
    "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Thing", "version": "v1"}],
    "properties": {
      "apiVersion": {"type": "string"}, "kind": {"type": "string"},
      "spec": {"$ref": "#/definitions/io.k8s.api.apps.v1.ThingSpec"}
    }
  },
  "io.k8s.api.apps.v1.ThingSpec": {
    "type": "object", "required": ["port"],
    "properties": {
      "port": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
      "labels": {"type": "object", "additionalProperties": {"type": "string"}}
    }
  },
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
  "io.k8s.api.core.v1.Unused": {"type": "object", "properties": {"x": {"type": "string"}}},
  "io.k8s.api.core.v1.Config": {
    "type": "object",
    "x-kubernetes-group-version-kind": [{"group": "", "kind": "Config", "version": "v1"}],
    "properties": {"data": {"type": "object", "additionalProperties": {"type": "string"}}}
  }
}}`

func TestGenerate(t *testing.T) {
	files, err := Generate([]byte(spec), true)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	if len(files) != 2 || files["thing-apps-v1.json"] == nil || files["config-v1.json"] == nil {
		t.Fatalf("files %v, want thing-apps-v1.json (kubeconform's {{ .ResourceKind }}{{ .KindSuffix }}.json) and config-v1.json", names)
	}
	var thing map[string]any
	if err := json.Unmarshal(files["thing-apps-v1.json"], &thing); err != nil {
		t.Fatal(err)
	}
	if thing["additionalProperties"] != false {
		t.Errorf("the kind is not strict: %v", thing["additionalProperties"])
	}
	props := thing["properties"].(map[string]any)
	if got := props["apiVersion"].(map[string]any)["enum"]; !reflect.DeepEqual(got, []any{"apps/v1"}) {
		t.Errorf("apiVersion enum %v, want [apps/v1]", got)
	}
	defs := thing["definitions"].(map[string]any)
	if _, ok := defs["io.k8s.api.core.v1.Unused"]; ok {
		t.Error("a definition the kind does not reach was copied in")
	}
	spec := defs["io.k8s.api.apps.v1.ThingSpec"].(map[string]any)
	if spec["additionalProperties"] != false {
		t.Error("a referenced definition is not strict")
	}
	if !reflect.DeepEqual(spec["type"], []any{"object", "null"}) {
		t.Errorf("a referenced definition's type %v, want object or null", spec["type"])
	}
	labels := spec["properties"].(map[string]any)["labels"].(map[string]any)
	if !reflect.DeepEqual(labels["additionalProperties"], map[string]any{"type": "string"}) {
		t.Errorf("a map lost its values' schema: %v", labels)
	}
	ios := defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].(map[string]any)
	if !reflect.DeepEqual(ios["type"], []any{"string", "integer", "null"}) {
		t.Errorf("IntOrString %v, want string or integer", ios)
	}
	if strings.Contains(string(files["thing-apps-v1.json"]), "description") {
		t.Error("descriptions kept")
	}
}

func TestGenerateNotStrict(t *testing.T) {
	files, err := Generate([]byte(spec), false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(files["thing-apps-v1.json"]), `"additionalProperties":false`) {
		t.Error("-strict=false still refuses unknown properties")
	}
}

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: monitors.example.com}
spec:
  group: example.com
  names: {kind: Monitor}
  versions:
    - name: v1
      served: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                port: {x-kubernetes-int-or-string: true}
                extra: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {a: {type: string}}}
    - name: v0
      served: false
      schema: {openAPIV3Schema: {type: object}}
`

func TestGenerateCRD(t *testing.T) {
	files, err := GenerateCRD([]byte(crd), true)
	if err != nil {
		t.Fatal(err)
	}
	b := files["monitor-example-v1.json"]
	if len(files) != 1 || b == nil {
		t.Fatalf("files %v, want monitor-example-v1.json only (v0 is not served)", files)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	props := root["properties"].(map[string]any)
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if props[k] == nil {
			t.Errorf("no %s in the kind's properties: a manifest has it", k)
		}
	}
	spec := props["spec"].(map[string]any)
	if spec["additionalProperties"] != false {
		t.Error("spec is not strict")
	}
	sp := spec["properties"].(map[string]any)
	if !reflect.DeepEqual(sp["port"].(map[string]any)["type"], []any{"string", "integer", "null"}) {
		t.Errorf("int-or-string port: %v", sp["port"])
	}
	if sp["extra"].(map[string]any)["additionalProperties"] != nil {
		t.Error("x-kubernetes-preserve-unknown-fields made strict")
	}
}

func TestRunWritesFolder(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "swagger.json")
	if err := os.WriteFile(in, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// A schema of an earlier run that this one does not write goes.
	if err := os.WriteFile(filepath.Join(out, "stale-v1.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := run([]string{"-spec", in, "-out", out}, &log); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"thing-apps-v1.json", "config-v1.json", stampName} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "stale-v1.json")); err == nil {
		t.Error("a stale schema was left")
	}
	if err := run([]string{"-out", out}, &log); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no spec nor version: %v", err)
	}
}
