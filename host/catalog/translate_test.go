package catalog

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/config"
)

// saved writes entry as server name into a fresh home's config.yaml and
// returns the file, as an install would leave it.
func saved(t *testing.T, name string, entry *config.ServerEntry) (home, text string) {
	t.Helper()
	home = t.TempDir()
	if err := config.Edit(home, func(d *config.Document) error { return d.SetServer(name, entry) }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, config.File))
	if err != nil {
		t.Fatal(err)
	}
	return home, string(b)
}

// loaded reads server name back the way hermes does, with vars as the
// values the install saved to .env.
func loaded(t *testing.T, home, name string, vars map[string]string) *config.Server {
	t.Helper()
	var env strings.Builder
	for k, v := range vars {
		env.WriteString(k + "=" + v + "\n")
	}
	if err := os.WriteFile(filepath.Join(home, config.DotEnvFile), []byte(env.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Server(name)
	if s == nil {
		t.Fatalf("server %s not in config", name)
	}
	if s.Err != nil {
		t.Fatalf("server %s does not load: %v", name, s.Err)
	}
	return s
}

func TestTranslateStdio(t *testing.T) {
	m := mustParse(t, `manifest_version: 1
name: bridge
description: A bridge.
transport:
  type: stdio
  command: "${INSTALL_DIR}/.venv/bin/python"
  args: ["${INSTALL_DIR}/server.py", "--data", "${DATA_DIR}"]
  env:
    MODE: "fast"
    CACHE: "${INSTALL_DIR}/cache"
install:
  url: https://example.com/bridge.git
  ref: 7a9ae00795593aa1fdb4e61ecd640e8bfd0c3841
auth:
  type: api_key
  env:
    - {name: BRIDGE_URL, secret: false, default: "http://127.0.0.1:5678"}
    - {name: BRIDGE_KEY}
    - {name: DATA_DIR, secret: false}
    - {name: MODE}
sandbox:
  network: [api.example.com]
  writable: ["${DATA_DIR}", "${INSTALL_DIR}/../shared"]
  limits: {processes: 64, memory: 1G}
  enforce: false
`)
	dir := filepath.Join(t.TempDir(), "mcp-installs", "bridge")
	e, err := Translate(m, TranslateOptions{InstallDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	home, text := saved(t, "bridge", e)
	want := `mcp_servers:
  bridge:
    command: ` + dir + `/.venv/bin/python
    args:
      - ` + dir + `/server.py
      - --data
      - ${DATA_DIR}
    env:
      CACHE: ` + dir + `/cache
      MODE: fast
      BRIDGE_URL: ${BRIDGE_URL}
      BRIDGE_KEY: ${BRIDGE_KEY}
      DATA_DIR: ${DATA_DIR}
    enabled: true
    catalog: bridge
    sandbox:
      enforce: false
      writable:
        - ${DATA_DIR}
        - ` + dir + `/../shared
      network:
        - api.example.com
      limits:
        memory: "1G"
        processes: 64
`
	if text != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", text, want)
	}
	data := t.TempDir()
	s := loaded(t, home, "bridge", map[string]string{"BRIDGE_URL": "http://n8n.local", "BRIDGE_KEY": "k-123", "DATA_DIR": data, "MODE": "slow"})
	if s.Command != dir+"/.venv/bin/python" || !reflect.DeepEqual(s.Args, []string{dir + "/server.py", "--data", data}) {
		t.Errorf("command %q %q", s.Command, s.Args)
	}
	// The values saved to .env reach the child (the original's #89316);
	// transport.env keeps its own value over an auth.env of the same name.
	wantEnv := map[string]string{"CACHE": dir + "/cache", "MODE": "fast", "BRIDGE_URL": "http://n8n.local", "BRIDGE_KEY": "k-123", "DATA_DIR": data}
	if !reflect.DeepEqual(s.Env, wantEnv) {
		t.Errorf("env %v\nwant %v", s.Env, wantEnv)
	}
	sb := s.Sandbox
	if sb == nil || sb.Enforce || sb.Network != "hosts" || !reflect.DeepEqual(sb.Hosts, []string{"api.example.com"}) ||
		!reflect.DeepEqual(sb.Writable, []string{data, filepath.Join(filepath.Dir(dir), "shared")}) || sb.Processes != 64 || sb.Memory != 1<<30 {
		t.Errorf("sandbox %+v", sb)
	}

	// --no-sandbox leaves it out.
	e, err = Translate(m, TranslateOptions{InstallDir: dir, NoSandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, text := saved(t, "bridge", e); strings.Contains(text, "sandbox") {
		t.Errorf("--no-sandbox kept it:\n%s", text)
	}
}

func TestTranslateHTTPAPIKey(t *testing.T) {
	m := mustParse(t, `manifest_version: 1
name: hugging-face
description: HF.
transport: {type: http, url: "https://hf.example/mcp"}
auth:
  type: api_key
  env: [{name: MCP_HUGGING_FACE_API_KEY, prompt: "API key"}]
`)
	e, err := Translate(m, TranslateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	home, text := saved(t, "hugging-face", e)
	want := `mcp_servers:
  hugging-face:
    url: https://hf.example/mcp
    headers:
      Authorization: Bearer ${MCP_HUGGING_FACE_API_KEY}
    enabled: true
    catalog: hugging-face
`
	if text != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", text, want)
	}
	s := loaded(t, home, "hugging-face", map[string]string{"MCP_HUGGING_FACE_API_KEY": "hf_secret"})
	if s.Headers["Authorization"] != "Bearer hf_secret" || len(s.Env) != 0 {
		t.Errorf("headers %v env %v", s.Headers, s.Env)
	}

	// The manifest's own headers replace the default bearer header.
	m = mustParse(t, `manifest_version: 1
name: github
description: GitHub.
transport:
  type: http
  url: https://api.example.com/mcp/
  headers: {Authorization: "Bearer ${GH_TOKEN}", X-Toolsets: "repos"}
auth:
  type: api_key
  env: [{name: GH_TOKEN}]
`)
	if e, err = Translate(m, TranslateOptions{}); err != nil {
		t.Fatal(err)
	}
	home, _ = saved(t, "github", e)
	s = loaded(t, home, "github", map[string]string{"GH_TOKEN": "ghp_x"})
	if !reflect.DeepEqual(s.Headers, map[string]string{"Authorization": "Bearer ghp_x", "X-Toolsets": "repos"}) {
		t.Errorf("headers %v", s.Headers)
	}

	// A hand-made manifest that does not declare the key is refused.
	bad := *m
	bad.Transport.Headers = nil
	if _, err := Translate(&bad, TranslateOptions{}); err == nil || !strings.Contains(err.Error(), "auth.env does not declare MCP_GITHUB_API_KEY") {
		t.Errorf("err %v", err)
	}
}

func TestTranslateOAuth(t *testing.T) {
	m := mustParse(t, "manifest_version: 1\nname: linear\ndescription: L.\ntransport: {type: http, url: 'https://mcp.linear.app/mcp'}\nauth: {type: oauth}\n")
	e, err := Translate(m, TranslateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	home, text := saved(t, "linear", e)
	if want := "mcp_servers:\n  linear:\n    url: https://mcp.linear.app/mcp\n    auth: oauth\n    enabled: true\n    catalog: linear\n"; text != want {
		t.Errorf("config.yaml:\n%s\nwant:\n%s", text, want)
	}
	if s := loaded(t, home, "linear", nil); s.Auth != "oauth" || s.Transport != "http" {
		t.Errorf("auth %q transport %q", s.Auth, s.Transport)
	}
}

func TestTranslateInstallDir(t *testing.T) {
	m := &Manifest{Version: 1, Name: "x", Description: "X.", Transport: Transport{Type: "stdio", Command: "${INSTALL_DIR}/run"}, Auth: Auth{Type: "none"}}
	_, err := Translate(m, TranslateOptions{InstallDir: "/opt/x"})
	if err == nil || err.Error() != "manifest references ${INSTALL_DIR} but has no install block" {
		t.Errorf("err %v", err)
	}
	// Only in the sandbox counts too.
	m.Transport.Command = "run"
	m.Sandbox = map[string]any{"writable": []any{"${INSTALL_DIR}/data"}}
	if _, err := Translate(m, TranslateOptions{}); err == nil || !strings.Contains(err.Error(), "has no install block") {
		t.Errorf("sandbox reference: err %v", err)
	}

	m = mustParse(t, "manifest_version: 1\nname: x\ndescription: X.\ntransport: {type: stdio, command: '${INSTALL_DIR}/run', args: ['$${INSTALL_DIR} stays']}\ninstall: {url: 'https://e.com/x.git', ref: 7a9ae00795593aa1fdb4e61ecd640e8bfd0c3841}\n")
	if _, err := Translate(m, TranslateOptions{}); err == nil || !strings.Contains(err.Error(), "none was given") {
		t.Errorf("no install dir: err %v", err)
	}
	if _, err := Translate(m, TranslateOptions{InstallDir: "relative/x"}); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("relative install dir: err %v", err)
	}
	// A folder whose name holds "${" reads back as written, and the escape
	// $${INSTALL_DIR} is left alone.
	dir := filepath.Join(t.TempDir(), "odd${HOME}dir")
	e, err := Translate(m, TranslateOptions{InstallDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	home, _ := saved(t, "x", e)
	s := loaded(t, home, "x", nil)
	if s.Command != dir+"/run" || !reflect.DeepEqual(s.Args, []string{"${INSTALL_DIR} stays"}) {
		t.Errorf("command %q args %q", s.Command, s.Args)
	}
}

func TestTranslatePlugin(t *testing.T) {
	src := `manifest_version: 1
name: wsbridge
description: W.
transport: {type: stdio, command: "${INSTALL_DIR}/bin/server"}
install: {url: "https://e.com/w.git", ref: 7a9ae00795593aa1fdb4e61ecd640e8bfd0c3841}
plugin:
  kind: transport
  name: ws
  path: bin/hermes-transport-ws
`
	m := mustParse(t, src)
	dir := filepath.Join(t.TempDir(), "wsbridge")
	if _, err := Translate(m, TranslateOptions{InstallDir: dir}); err == nil || !strings.Contains(err.Error(), "has no sha256 yet") {
		t.Errorf("no sha: err %v", err)
	}
	sum := strings.Repeat("ab", 32)
	e, err := Translate(m, TranslateOptions{InstallDir: dir, PluginSHA256: sum})
	if err != nil {
		t.Fatal(err)
	}
	home, _ := saved(t, "wsbridge", e)
	s := loaded(t, home, "wsbridge", nil)
	if s.Transport != "ws" || s.Plugin == nil || s.Plugin.Path != filepath.Join(dir, "bin", "hermes-transport-ws") || s.Plugin.SHA256 != sum || s.Plugin.Kind != "transport" {
		t.Errorf("transport %q plugin %+v", s.Transport, s.Plugin)
	}

	m = mustParse(t, src+"  sha256: "+strings.Repeat("CD", 32)+"\n")
	if _, err := Translate(m, TranslateOptions{InstallDir: dir, PluginSHA256: sum}); err == nil || !strings.Contains(err.Error(), "did not build what was reviewed") {
		t.Errorf("mismatch: err %v", err)
	}
	e, err = Translate(m, TranslateOptions{InstallDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	home, _ = saved(t, "wsbridge", e)
	if s := loaded(t, home, "wsbridge", nil); s.Plugin.SHA256 != strings.Repeat("cd", 32) {
		t.Errorf("pinned sha %q", s.Plugin.SHA256)
	}
}

func TestPlan(t *testing.T) {
	m := mustParse(t, `manifest_version: 1
name: files
description: Files.
source: https://example.com/files
transport:
  type: stdio
  command: "${INSTALL_DIR}/bin/files"
  args: ["--root", "${FILES_ROOT}", "two words", "it's"]
install:
  url: https://example.com/files.git
  ref: 7a9ae00795593aa1fdb4e61ecd640e8bfd0c3841
  bootstrap: ["make build"]
auth:
  env:
    - {name: FILES_ROOT, secret: false}
    - {name: FILES_TOKEN, required: false}
sandbox:
  writable: ["${FILES_ROOT}", "~/cache/${FILES_ROOT}"]
  network: none
  limits: {cpu_seconds: 60}
`)
	home, _ := os.UserHomeDir()
	p, err := m.Plan(TranslateOptions{InstallDir: "/h/mcp-installs/files"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Source: https://example.com/files",
		"Clone: https://example.com/files.git @ 7a9ae00795593aa1fdb4e61ecd640e8bfd0c3841",
		"  into /h/mcp-installs/files",
		"Bootstrap (run in the clone):",
		"  $ make build",
		"Launch: /h/mcp-installs/files/bin/files --root ${FILES_ROOT} 'two words' 'it'\\''s'",
		"Sandbox:",
		"  files: read-only; writable: install folder, private temp, ${FILES_ROOT}, " + home + "/cache/${FILES_ROOT}",
		"  never readable: $HERMES_HOME, " + strings.Join([]string{home + "/.ssh", home + "/.aws", home + "/.config/gcloud", home + "/.gnupg", home + "/.netrc"}, ", "),
		"  network: none",
		"  limits: memory 2G, cpu 60s, open files 1024, processes 512",
		"Auth: none",
		"Asks for: FILES_ROOT, FILES_TOKEN (secret, optional) (saved to .env)",
	}
	if got := p.Lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	p, err = m.Plan(TranslateOptions{InstallDir: "/h/mcp-installs/files", NoSandbox: true})
	if err != nil || !p.SandboxOff || p.Sandbox != nil {
		t.Fatalf("no sandbox: %+v %v", p, err)
	}

	m = mustParse(t, "manifest_version: 1\nname: linear\ndescription: L.\ntransport: {type: http, url: 'https://mcp.linear.app/mcp'}\nauth: {type: oauth}\n")
	p, err = m.Plan(TranslateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"Launch: connects to https://mcp.linear.app/mcp", "Sandbox: none (runs with your user's rights)", "Auth: OAuth (browser login on first connection)"}
	if got := p.Lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPlanTildeIsTheRunsHome: the "~" of the sandbox's paths the plan
// shows, the default never-readable folders included, is the HOME of the
// run's environment (TranslateOptions.Env), not the process's.
func TestPlanTildeIsTheRunsHome(t *testing.T) {
	t.Setenv("HOME", "/home/process")
	m := mustParse(t, "manifest_version: 1\nname: files\ndescription: Files.\ntransport: {type: stdio, command: files}\nsandbox:\n  writable: [\"~/cache\"]\n")
	run := func(k string) (string, bool) {
		if k == "HOME" {
			return "/home/run", true
		}
		return "", false
	}
	for _, c := range []struct {
		name string
		env  func(string) (string, bool)
		home string
	}{
		{"the run's HOME", run, "/home/run"},
		{"the process's environment", nil, "/home/process"},
	} {
		p, err := m.Plan(TranslateOptions{Env: c.env})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Join(p.Sandbox, "\n")
		for _, want := range []string{"private temp, " + c.home + "/cache", "never readable: $HERMES_HOME, " + c.home + "/.ssh"} {
			if !strings.Contains(lines, want) {
				t.Errorf("%s: the plan's sandbox lacks %q:\n%s", c.name, want, lines)
			}
		}
	}
}

// TestTranslateNoRoots: transport.roots: false gives the entry roots:
// false, and the shipped filesystem entry (whose server would serve the
// host's working folder instead of the folder chosen at install) says so.
func TestTranslateNoRoots(t *testing.T) {
	m := mustParse(t, "manifest_version: 1\nname: fs\ndescription: Files.\ntransport:\n  type: stdio\n  command: npx\n  args: [x]\n  roots: false\nauth: {type: none}\nsandbox: {writable: []}\n")
	e, err := Translate(m, TranslateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := e.Fields.Get("roots"); !ok || v != false {
		t.Errorf("roots = %v (%v), want false", v, ok)
	}
	c, err := LoadFrom("")
	if err != nil {
		t.Fatal(err)
	}
	fs, err := c.Lookup("filesystem")
	if err != nil || !fs.Transport.NoRoots {
		t.Errorf("the shipped filesystem entry offers its server the host's roots (%v)", err)
	}
}
