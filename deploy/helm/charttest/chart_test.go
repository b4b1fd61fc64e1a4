package charttest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/gateway/vault"
)

// chartDir is the chart, from this package's folder (go test's working
// directory).
const chartDir = "../hermes-gateway"

// tools are the binaries and schemas make chart-check built.
type tools struct {
	helm, kubeconform, schemas, kubeVersion string
}

// needTools returns the tools named by the environment make chart-check
// sets, or skips the test.
func needTools(t *testing.T) tools {
	t.Helper()
	tl := tools{
		helm:        os.Getenv("HERMES_CHART_HELM"),
		kubeconform: os.Getenv("HERMES_CHART_KUBECONFORM"),
		schemas:     os.Getenv("HERMES_CHART_SCHEMAS"),
		kubeVersion: os.Getenv("HERMES_CHART_KUBE_VERSION"),
	}
	if tl.helm == "" || tl.kubeconform == "" || tl.schemas == "" || tl.kubeVersion == "" {
		t.Skip("needs helm, kubeconform and the Kubernetes schemas: run make chart-check")
	}
	for _, f := range []string{tl.helm, tl.kubeconform, filepath.Join(tl.schemas, "deployment-apps-v1.json")} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("make chart-check should have made %s: %v", f, err)
		}
	}
	return tl
}

// render runs helm template on the chart with the values files and --set
// arguments; it returns the manifests, or helm's error with its stderr.
func (tl tools) render(t *testing.T, values []string, set ...string) ([]byte, error) {
	t.Helper()
	args := []string{"template", "hermes", chartDir, "--namespace", "mcp", "--kube-version", tl.kubeVersion}
	for _, v := range values {
		args = append(args, "-f", v)
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return run(exec.Command(tl.helm, args...), nil)
}

// validate runs kubeconform -strict on the manifests, as make chart-check
// pipes them.
func (tl tools) validate(manifests []byte) ([]byte, error) {
	cmd := exec.Command(tl.kubeconform, "-strict", "-summary",
		"-schema-location", filepath.Join(tl.schemas, "{{ .ResourceKind }}{{ .KindSuffix }}.json"))
	return run(cmd, manifests)
}

// run runs cmd with stdin, returning its stdout, or an error holding its
// stdout and stderr.
func run(cmd *exec.Cmd, stdin []byte) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s: %w\n%s%s", strings.Join(cmd.Args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes(), nil
}

// examples are the chart's example values files.
func examples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example values files in %s/examples: %v", chartDir, err)
	}
	return files
}

// object is one rendered manifest.
type object map[string]any

// objects parses helm's multi-document output.
func objects(t *testing.T, manifests []byte) []object {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(manifests))
	var out []object
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("rendered manifests do not parse: %v", err)
		}
		if o != nil {
			out = append(out, o)
		}
	}
}

// find returns the rendered object of kind and name ("" for any name).
func find(objs []object, kind, name string) object {
	for _, o := range objs {
		if o["kind"] == kind && (name == "" || at(o, "metadata", "name") == name) {
			return o
		}
	}
	return nil
}

// at walks maps by key and lists by index ("0").
func at(v any, path ...string) any {
	for _, p := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case object:
			v = c[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

func num(v any) int {
	switch n := v.(type) {
	case uint64:
		return int(n)
	case int64:
		return int(n)
	case int:
		return n
	case float64:
		return int(n)
	}
	return -1
}

// TestExamples renders every example, validates it as make chart-check
// does, checks what the Deployment must hold (restricted security, the
// probes, the drain bound under the grace period, the config read-only),
// and loads its config.yaml with hermes's own loaders, with the variables
// the pod would have: the chart cannot ship a config the gateway refuses
// at start.
func TestExamples(t *testing.T) {
	tl := needTools(t)
	for _, file := range examples(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			manifests, err := tl.render(t, []string{file})
			if err != nil {
				t.Fatal(err)
			}
			if out, err := tl.validate(manifests); err != nil {
				t.Fatalf("kubeconform refuses the rendered example: %v", err)
			} else {
				t.Logf("kubeconform: %s", strings.TrimSpace(string(out)))
			}
			objs := objects(t, manifests)
			dep := find(objs, "Deployment", "")
			if dep == nil {
				t.Fatal("no Deployment rendered")
			}
			checkDeployment(t, dep)
			checkConfig(t, objs, dep)
		})
	}
}

// checkDeployment checks the pod the Deployment runs.
func checkDeployment(t *testing.T, dep object) {
	t.Helper()
	pod := at(dep, "spec", "template", "spec")
	c := at(pod, "containers", "0")
	sc := at(c, "securityContext")
	for _, want := range []struct {
		path []string
		val  any
	}{
		{[]string{"runAsNonRoot"}, true},
		{[]string{"readOnlyRootFilesystem"}, true},
		{[]string{"allowPrivilegeEscalation"}, false},
		{[]string{"seccompProfile", "type"}, "RuntimeDefault"},
		{[]string{"capabilities", "drop", "0"}, "ALL"},
	} {
		if got := at(sc, want.path...); got != want.val {
			t.Errorf("container securityContext.%s = %v, want %v", strings.Join(want.path, "."), got, want.val)
		}
	}
	if n := num(at(sc, "runAsUser")); n != 65532 {
		t.Errorf("container runs as %d, want 65532", n)
	}
	if at(pod, "automountServiceAccountToken") != false {
		t.Error("the pod mounts a service account token; the gateway does not use the Kubernetes API")
	}
	if p := at(c, "livenessProbe", "httpGet", "path"); p != "/healthz" {
		t.Errorf("livenessProbe path %v, want /healthz", p)
	}
	if p := at(c, "readinessProbe", "httpGet", "path"); p != "/readyz" {
		t.Errorf("readinessProbe path %v, want /readyz", p)
	}
	args, _ := at(c, "args").([]any)
	i := slices.Index(args, any("--drain"))
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("no --drain in the container's args %v", args)
	}
	drain, err := time.ParseDuration(fmt.Sprint(args[i+1]))
	if err != nil {
		t.Fatalf("--drain %v: %v", args[i+1], err)
	}
	sleep := 0
	if s := at(c, "lifecycle", "preStop", "sleep", "seconds"); s != nil {
		sleep = num(s)
	}
	grace := time.Duration(num(at(pod, "terminationGracePeriodSeconds"))) * time.Second
	if grace <= drain+time.Duration(sleep)*time.Second {
		t.Errorf("terminationGracePeriodSeconds %s leaves no margin after the preStop sleep (%ds) and the drain (%s)", grace, sleep, drain)
	}
	mounts, _ := at(c, "volumeMounts").([]any)
	paths := map[string]any{}
	for _, m := range mounts {
		paths[fmt.Sprint(at(m, "mountPath"))] = m
	}
	if m := paths["/etc/hermes"]; m == nil || at(m, "readOnly") != true {
		t.Errorf("config not mounted read-only at /etc/hermes: %v", mounts)
	}
	for _, p := range []string{"/var/lib/hermes", "/tmp"} {
		if paths[p] == nil {
			t.Errorf("nothing mounted at %s: the root file system is read-only", p)
		}
	}
}

// checkConfig loads the rendered config.yaml with the variables the pod
// gets: its env, and the keys of the Secrets its envFrom names. A Secret
// the chart does not make (the operator's own) is taken to hold whatever
// the config asks for.
func checkConfig(t *testing.T, objs []object, dep object) {
	t.Helper()
	c := at(dep, "spec", "template", "spec", "containers", "0")
	env := map[string]string{}
	for _, e := range asList(at(c, "env")) {
		if v, ok := at(e, "value").(string); ok {
			env[fmt.Sprint(at(e, "name"))] = v
		}
	}
	external := false
	var secretName string
	for _, from := range asList(at(c, "envFrom")) {
		name, _ := at(from, "secretRef", "name").(string)
		if name == "" {
			continue
		}
		s := find(objs, "Secret", name)
		if s == nil {
			external = true
			continue
		}
		if secretName == "" {
			secretName = name
		}
		for k, v := range asMap(at(s, "data")) {
			b, err := base64.StdEncoding.DecodeString(fmt.Sprint(v))
			if err != nil {
				t.Fatalf("Secret %s key %s is not base64: %v", name, k, err)
			}
			env[k] = string(b)
		}
	}
	cmName := ""
	for _, v := range asList(at(dep, "spec", "template", "spec", "volumes")) {
		if at(v, "name") == "config" {
			cmName, _ = at(v, "configMap", "name").(string)
		}
	}
	cm := find(objs, "ConfigMap", cmName)
	src, _ := at(cm, "data", "config.yaml").(string)
	if src == "" {
		t.Fatalf("no config.yaml in ConfigMap %q", cmName)
	}
	// The variables the config names (${NAME}) are the pod's; nothing
	// else of the test's own environment reaches the loader.
	named := map[string]bool{}
	for _, m := range varRE.FindAllStringSubmatch(src, -1) {
		named[m[1]] = true
	}
	var assumed []string
	lookup := func(name string) (string, bool) {
		if v, ok := env[name]; ok {
			return v, true
		}
		if named[name] && external {
			assumed = append(assumed, name)
			return "from-the-operators-secret", true
		}
		return "", false
	}
	gw := loadConfig(t, src, lookup)
	if len(assumed) > 0 {
		t.Logf("variables taken from a Secret the chart does not make: %s", strings.Join(assumed, ", "))
	}
	if secretName == "" {
		return
	}
	// The chart's own Secret holds keys the gateway accepts, under the
	// names its config reads.
	sk, ok := env[gw.SessionKeyEnv]
	if !ok {
		t.Fatalf("Secret %s has no %s, the variable gateway.session_key_env names", secretName, gw.SessionKeyEnv)
	}
	key, err := base64.StdEncoding.DecodeString(sk)
	if err != nil || len(key) < gateway.MinSessionKeyBytes {
		t.Fatalf("%s is not base64 of at least %d bytes (%d, %v)", gw.SessionKeyEnv, gateway.MinSessionKeyBytes, len(key), err)
	}
	if _, err := gateway.NewSessionIDs(key, time.Hour); err != nil {
		t.Fatalf("the gateway refuses the chart's session key: %v", err)
	}
	if _, err := vault.KeyFrom(gw.VaultKeyEnv, lookup); err != nil {
		t.Fatalf("the gateway refuses the chart's vault key: %v", err)
	}
}

// varRE finds the ${NAME}s of a config file.
var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// loadConfig writes src as a config file and loads it as hermes mcp
// gateway does at start: the servers, then the gateway: block.
func loadConfig(t *testing.T, src string, lookup func(string) (string, bool)) *config.Gateway {
	t.Helper()
	gw, err := tryLoad(t, src, lookup)
	if err != nil {
		t.Fatalf("the gateway refuses the rendered config.yaml: %v\n%s", err, src)
	}
	return gw
}

func tryLoad(t *testing.T, src string, lookup func(string) (string, bool)) (*config.Gateway, error) {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadFileEnv(path, home, lookup)
	if err != nil {
		return nil, err
	}
	if len(cfg.Servers) == 0 {
		return nil, errors.New("no mcp_servers")
	}
	gw, err := config.LoadGatewayFile(path, home, lookup)
	if err != nil {
		return nil, err
	}
	if gw == nil {
		return nil, errors.New("no gateway: block")
	}
	return gw, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// staticExample is the example the planted mistakes start from.
func staticExample() string { return filepath.Join(chartDir, "examples", "static-tokens.yaml") }

// TestKubeconformRefusesTypo plants a misspelt Kubernetes field in a
// pass-through value (readinessProbe.httpGet.prot for port): helm renders
// it, kubeconform -strict must refuse it and name it.
func TestKubeconformRefusesTypo(t *testing.T) {
	tl := needTools(t)
	manifests, err := tl.render(t, []string{staticExample(), "testdata/typo-probe.yaml"})
	if err != nil {
		t.Fatalf("helm should render a typo inside a Kubernetes object (only kubeconform knows its fields): %v", err)
	}
	if !bytes.Contains(manifests, []byte("prot: http")) {
		t.Fatalf("the planted field is not in the manifests:\n%s", manifests)
	}
	out, err := tl.validate(manifests)
	if err == nil {
		t.Fatalf("kubeconform accepted readinessProbe.httpGet.prot:\n%s", out)
	}
	if !strings.Contains(err.Error(), "prot") {
		t.Fatalf("kubeconform refused, but not naming the field: %v", err)
	}
	t.Logf("refused as it should be: %v", err)
}

// TestValuesSchemaRefusesUnknownKey: values.schema.json refuses a key the
// chart does not have, at the top and deeper, naming it.
func TestValuesSchemaRefusesUnknownKey(t *testing.T) {
	tl := needTools(t)
	for _, c := range []struct{ file, key string }{
		{"testdata/unknown-key.yaml", "replicaCont"},
		{"testdata/unknown-nested-key.yaml", "idps"},
	} {
		_, err := tl.render(t, []string{staticExample(), c.file})
		if err == nil {
			t.Fatalf("%s: helm rendered values with the unknown key %q", c.file, c.key)
		}
		if !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), "schema") {
			t.Fatalf("%s: refused, but not by the values schema naming %q: %v", c.file, c.key, err)
		}
	}
}

// TestConfigCheckRefusesBadGatewayBlock: the config check is the gateway's
// own: a misspelt key of the gateway: block renders (config is hermes's to
// check, not the chart's) and is refused by the loader, naming the key.
func TestConfigCheckRefusesBadGatewayBlock(t *testing.T) {
	tl := needTools(t)
	manifests, err := tl.render(t, []string{staticExample(), "testdata/bad-gateway-key.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, manifests)
	src, _ := at(find(objs, "ConfigMap", ""), "data", "config.yaml").(string)
	_, err = tryLoad(t, src, func(string) (string, bool) {
		return "0000000000000000000000000000000000000000000000000000000000000003", true
	})
	if err == nil || !strings.Contains(err.Error(), "gateway.polcy") {
		t.Fatalf("the loader should refuse gateway.polcy, naming it; got %v", err)
	}
}

// TestChartRefuses: values the chart itself refuses, with one line saying
// what to set.
func TestChartRefuses(t *testing.T) {
	tl := needTools(t)
	for _, c := range []struct {
		name string
		set  []string
		want string
	}{
		{"no config", []string{"config=null"}, "config.gateway is required"},
		{"no resource", []string{"config.gateway.resource=null"}, "/config/gateway/resource"},
		{"resource not a URL", []string{"config.gateway.resource=mcp.example.com"}, "/config/gateway/resource"},
		{"no secret", []string{"secret.create=false"}, "existingSecret"},
		{"servicemonitor without metrics", []string{"metrics.serviceMonitor.enabled=true"}, "telemetry.prometheus"},
		{"typo in an enum", []string{"podAntiAffinity=sfot"}, "podAntiAffinity"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := tl.render(t, []string{staticExample()}, c.set...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error naming %q, got %v", c.want, err)
			}
		})
	}
}

// TestValuesShapeTheDeployment: the drain bound, an existing Secret, the
// shared vault volume and the autoscaler reach the manifests as the values
// say, and stay valid.
func TestValuesShapeTheDeployment(t *testing.T) {
	tl := needTools(t)
	manifests, err := tl.render(t, []string{staticExample()},
		"drainSeconds=60", "preStopSleepSeconds=0", "secret.create=false", "secret.existingSecret=team-keys",
		"vault.persistence.enabled=true", "autoscaling.enabled=true", "persistence.enabled=true",
		"metrics.serviceMonitor.enabled=true", "config.gateway.telemetry.prometheus=true")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tl.validate(manifests); err != nil {
		t.Fatalf("kubeconform refuses: %v", err)
	} else {
		t.Logf("kubeconform: %s", strings.TrimSpace(string(out)))
	}
	objs := objects(t, manifests)
	dep := find(objs, "Deployment", "")
	pod := at(dep, "spec", "template", "spec")
	c := at(pod, "containers", "0")
	if g := num(at(pod, "terminationGracePeriodSeconds")); g != 65 {
		t.Errorf("terminationGracePeriodSeconds %d, want 65 (drain 60 + margin 5)", g)
	}
	if at(c, "lifecycle") != nil {
		t.Errorf("preStopSleepSeconds=0 still renders a preStop: %v", at(c, "lifecycle"))
	}
	if s := find(objs, "Secret", ""); s != nil {
		t.Errorf("secret.create=false still renders Secret %v", at(s, "metadata", "name"))
	}
	if n := at(c, "envFrom", "0", "secretRef", "name"); n != "team-keys" {
		t.Errorf("envFrom names %v, want team-keys", n)
	}
	if at(dep, "spec", "replicas") != nil {
		t.Error("replicas set while the HorizontalPodAutoscaler owns them")
	}
	for _, kind := range []string{"HorizontalPodAutoscaler", "ServiceMonitor", "PodDisruptionBudget", "NetworkPolicy"} {
		if find(objs, kind, "") == nil {
			t.Errorf("no %s rendered", kind)
		}
	}
	var claims []string
	for _, o := range objs {
		if o["kind"] == "PersistentVolumeClaim" {
			claims = append(claims, fmt.Sprintf("%v %v", at(o, "metadata", "name"), at(o, "spec", "accessModes", "0")))
		}
	}
	if !slices.Equal(claims, []string{"hermes-hermes-gateway-home ReadWriteOnce", "hermes-hermes-gateway-vault ReadWriteMany"}) {
		t.Errorf("claims %v", claims)
	}
}
