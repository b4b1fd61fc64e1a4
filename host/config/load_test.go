package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func loadString(t *testing.T, src string) (*Config, string) {
	t.Helper()
	h := home(t, []byte(src))
	cfg, err := Load(h)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, h
}

func TestHome(t *testing.T) {
	t.Setenv("HERMES_HOME", "/somewhere/else")
	if Home() != "/somewhere/else" {
		t.Fatal(Home())
	}
	t.Setenv("HERMES_HOME", "")
	if !strings.HasSuffix(Home(), ".hermes") {
		t.Fatal(Home())
	}
}

func TestLoadMissingFileIsEmpty(t *testing.T) {
	cfg, err := Load(t.TempDir())
	if err != nil || len(cfg.Servers) != 0 || cfg.SafeMode {
		t.Fatalf("%+v %v", cfg, err)
	}
}

func TestLoadDefaults(t *testing.T) {
	cfg, _ := loadString(t, "mcp_servers:\n  a:\n    command: x\n  b:\n    url: https://h/mcp\n")
	if got := cfg.Names(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatal(got)
	}
	a := cfg.Server("a")
	want := &Server{
		Name: "a", Command: "x", Transport: "stdio",
		Timeout: 300 * time.Second, ConnectTimeout: 60 * time.Second, KeepaliveInterval: 180 * time.Second, MaxMessageBytes: 64 << 20,
		MaxResultBytes: 512 << 10, MaxServerRequests: 64, LogLinesPerSecond: 100, LogBurst: 1000, Protocol: ProtocolAuto,
		Enabled: true, Tools: ToolsFilter{Resources: true, Prompts: true, OnChange: OnChangeWarn}, SSLVerify: true,
		OAuth: OAuthSettings{ClientName: "Hermes Agent", Timeout: 300 * time.Second},
		Raw:   map[string]any{"command": "x"},
	}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("got %+v\nwant %+v", a, want)
	}
	if b := cfg.Server("b"); b.Transport != "http" || b.Err != nil {
		t.Fatalf("%+v", b)
	}
	if cfg.Server("zzz") != nil {
		t.Fatal("unknown server found")
	}
}

func TestLoadFileOrder(t *testing.T) {
	cfg, _ := loadString(t, "mcp_servers:\n  zeta: {command: z}\n  alpha: {command: a}\n  mid: {command: m}\n")
	if got := strings.Join(cfg.Names(), ","); got != "zeta,alpha,mid" {
		t.Fatal(got)
	}
}

func TestLoadFullSchema(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	src := `mcp_servers:
  full:
    url: https://h.example/mcp
    headers: {Authorization: Bearer x, X-N: 5}
    transport: SSE
    timeout: 12.5
    connect_timeout: "30"
    keepalive_interval: 1
    enabled: "off"
    supports_parallel_tool_calls: yes
    tools:
      include: one_tool
      on_change: Deny
      exclude: [a, b]
      resources: false
      prompts: "0"
      weird: 1
    auth: " OAuth "
    oauth:
      client_id: cid
      client_secret: sec
      scope: [read, write]
      redirect_port: 8765
      extra_params: {access_type: offline}
      redirect_host: x
    ssl_verify: ~/ca.pem
    client_cert: [~/c.pem, ~/k.pem]
    sampling: {max_rpm: 3}
    elicitation: {enabled: false}
    sandbox: {network: false}
    lifecycle: {idle: 3}
    zzz: 1
  stdio:
    command: ~/bin/srv
    args: "--flag 'two words' three"
    env: {A: 1, B: ~}
    cwd: ~/w
    ssl_verify: "false"
    client_cert: ~/c.pem
    client_key: ~/k.pem
`
	cfg, _ := loadString(t, src)
	f := cfg.Server("full")
	if f.Err != nil {
		t.Fatal(f.Err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"transport", f.Transport, "sse"},
		{"timeout", f.Timeout, 12500 * time.Millisecond},
		{"connect", f.ConnectTimeout, 30 * time.Second},
		{"keepalive floor", f.KeepaliveInterval, 5 * time.Second},
		{"enabled", f.Enabled, false},
		{"parallel", f.SupportsParallelToolCalls, true},
		{"tools", f.Tools, ToolsFilter{Include: []string{"one_tool"}, Exclude: []string{"a", "b"}, OnChange: OnChangeDeny}},
		{"headers", f.Headers, map[string]string{"Authorization": "Bearer x", "X-N": "5"}},
		{"auth", f.Auth, "oauth"},
		{"oauth", f.OAuth, OAuthSettings{ClientID: "cid", ClientSecret: "sec", Scope: "read write", RedirectPort: 8765,
			ClientName: "Hermes Agent", Timeout: 300 * time.Second, ExtraParams: map[string]string{"access_type": "offline"}}},
		{"ssl", f.SSLVerify, true},
		{"ca", f.CABundle, "/home/u/ca.pem"},
		{"cert", f.ClientCert, "/home/u/c.pem"},
		{"key", f.ClientKey, "/home/u/k.pem"},
		{"sampling", f.Sampling, map[string]any{"max_rpm": uint64(3)}},
		{"elicitation", f.Elicitation, map[string]any{"enabled": false}},
		{"sandbox", f.Sandbox, &SandboxSettings{Enforce: true, Network: "none", Memory: DefaultSandboxMemory,
			OpenFiles: DefaultSandboxOpenFiles, Processes: DefaultSandboxProcesses,
			DenyRead: []string{"/home/u/.ssh", "/home/u/.aws", "/home/u/.config/gcloud", "/home/u/.gnupg", "/home/u/.netrc"}}},
		{"unknown", f.Unknown, []string{"lifecycle", "oauth.redirect_host", "tools.weird", "zzz"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
	s := cfg.Server("stdio")
	if s.Err != nil || s.Command != "/home/u/bin/srv" || s.Cwd != "/home/u/w" || s.Transport != "stdio" {
		t.Fatalf("%+v", s)
	}
	if !reflect.DeepEqual(s.Args, []string{"--flag", "two words", "three"}) {
		t.Errorf("args %q", s.Args)
	}
	if !reflect.DeepEqual(s.Env, map[string]string{"A": "1", "B": ""}) {
		t.Errorf("env %q", s.Env)
	}
	if s.SSLVerify || s.ClientCert != "/home/u/c.pem" || s.ClientKey != "/home/u/k.pem" {
		t.Errorf("tls %+v", s)
	}
}

func TestLoadBoolishEnabled(t *testing.T) {
	for in, want := range map[string]bool{
		"false": false, `"false"`: false, "'0'": false, "no": false, "off": false, "'OFF'": false, "0": false,
		"true": true, "'yes'": true, "1": true, "on": true,
	} {
		cfg, _ := loadString(t, "mcp_servers:\n  a:\n    command: x\n    enabled: "+in+"\n")
		a := cfg.Server("a")
		if a.Err != nil || a.Enabled != want {
			t.Errorf("enabled: %s → %v (err %v), want %v", in, a.Enabled, a.Err, want)
		}
	}
}

func TestLoadValidationMessages(t *testing.T) {
	cases := map[string]string{
		"a:\n    command: x\n    timeout: abc":                  `server "a": key "timeout": want a number of seconds (30) or a duration (30s, 2m), got "abc"`,
		"a:\n    command: x\n    timeout: -3":                   `server "a": key "timeout": want a positive number of seconds (30) or a duration (30s, 2m), got -3`,
		"a:\n    command: x\n    max_message_mb: lots":          `server "a": key "max_message_mb": want a number of megabytes, got "lots"`,
		"a:\n    command: x\n    tools: {on_change: ask}":       `server "a": key "tools.on_change": want warn or deny, got "ask"`,
		"a:\n    command: x\n    max_message_mb: 5000":          `server "a": key "max_message_mb": want a positive number of megabytes, got 5000`,
		"a:\n    command: x\n    max_result_kb: 0":              `server "a": key "max_result_kb": want a positive number of kilobytes, got 0`,
		"a:\n    command: x\n    max_server_requests: many":     `server "a": key "max_server_requests": want a number of requests, got "many"`,
		"a:\n    command: x\n    protocol: 2025-01-01":          `server "a": key "protocol": want auto or one of 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, got "2025-01-01"`,
		"a:\n    command: x\n    enabled: maybe":                `server "a": key "enabled": want true or false, got "maybe"`,
		"a:\n    command: x\n    env: [A]":                      `server "a": key "env": want a mapping of names to strings, got a list`,
		"a:\n    command: x\n    tools: {include: [{a: 1}]}":    `server "a": key "tools.include": want a list of strings`,
		"a:\n    enabled: true":                                 `server "a": needs either command (a stdio server) or url (an HTTP server); add one of them`,
		"a:\n    url: ftp://x/y":                                `server "a": key "url": want an http:// or https:// URL with a host name, got "ftp://x/y"`,
		"a:\n    url: https://x\n    oauth: {redirect_port: x}": `server "a": key "oauth.redirect_port": want a whole number, got "x"`,
		"a: just a string":                                      `server "a": want a mapping of settings such as command or url, got a string; fix the entry`,
		"bad name!:\n    command: x":                            `server "bad name!": a name may only contain letters, digits, "_" and "-"; rename it`,
		"a:\n    command: x\n    transport: http":               `server "a": key "url": transport http needs a url; add url`,
	}
	for body, want := range cases {
		cfg, _ := loadString(t, "mcp_servers:\n  ok:\n    command: fine\n  "+body+"\n")
		if ok := cfg.Server("ok"); ok == nil || ok.Err != nil {
			t.Errorf("%q: the valid server did not load", body)
		}
		if len(cfg.Servers) != 2 {
			t.Errorf("%q: the invalid server is not listed", body)
			continue
		}
		bad := cfg.Servers[1]
		if bad.Err == nil || !strings.HasPrefix(bad.Err.Error(), want) {
			t.Errorf("%q:\n got  %v\n want %s", body, bad.Err, want)
		}
		if strings.Contains(bad.Err.Error(), "\n") {
			t.Errorf("%q: message has several lines", body)
		}
	}
}

func TestLoadThirdPartyTransport(t *testing.T) {
	cfg, _ := loadString(t, "mcp_servers:\n  w:\n    transport: ws\n    endpoint: x\n")
	if w := cfg.Server("w"); w.Err != nil || w.Transport != "ws" || !reflect.DeepEqual(w.Unknown, []string{"endpoint"}) {
		t.Fatalf("%+v", w)
	}
}

func TestLoadURLAndCommandWarns(t *testing.T) {
	cfg, _ := loadString(t, "mcp_servers:\n  a:\n    command: x\n    url: https://h/mcp\n")
	a := cfg.Server("a")
	if a.Err != nil || a.Transport != "http" || len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], "using url") {
		t.Fatalf("%+v", a)
	}
}

func TestLoadFileErrors(t *testing.T) {
	h := home(t, []byte("model: x\nmcp_servers:\n  a: [1, 2\n  b: 3\n"))
	_, err := Load(h)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line == 0 || !strings.HasPrefix(err.Error(), filepath.Join(h, File)+":") {
		t.Fatalf("got %v", err)
	}
	_, err = Load(home(t, []byte("mcp_servers: [a, b]\n")))
	if err == nil || !strings.Contains(err.Error(), "mcp_servers must be a mapping") {
		t.Fatalf("got %v", err)
	}
	cfg, err := Load(home(t, []byte("mcp_servers:\nmodel: x\n")))
	if err != nil || len(cfg.Servers) != 0 {
		t.Fatalf("null mcp_servers: %v", err)
	}
	_, err = Load(home(t, []byte("mcp_servers:\n  a: {command: x}\n  a: {command: y}\n")))
	if !errors.As(err, &pe) {
		t.Fatalf("duplicate servers: got %v", err)
	}
}

func TestLoadSafeMode(t *testing.T) {
	for _, v := range []string{"1", "true", "YES"} {
		t.Setenv("HERMES_SAFE_MODE", v)
		cfg, err := Load(home(t, []byte("mcp_servers:\n  a: {command: x}\n")))
		if err != nil || !cfg.SafeMode || len(cfg.Servers) != 0 {
			t.Fatalf("%s: %+v %v", v, cfg, err)
		}
	}
	t.Setenv("HERMES_SAFE_MODE", "0")
	cfg, _ := Load(home(t, []byte("mcp_servers:\n  a: {command: x}\n")))
	if cfg.SafeMode || len(cfg.Servers) != 1 {
		t.Fatal("HERMES_SAFE_MODE=0 should load servers")
	}
}

func TestLoadInterpolation(t *testing.T) {
	t.Setenv("HC_FROM_ENV", "env-value")
	t.Setenv("HC_BOTH", "from-env")
	t.Setenv("HC_EMPTY", "")
	src := `mcp_servers:
  good:
    url: https://${HC_HOST}/mcp
    headers:
      Authorization: Bearer ${env:HC_FROM_ENV}
      X-Both: ${HC_BOTH}
      X-Default: ${HC_UNSET:-fallback}
      X-Empty: ${HC_EMPTY:-not-used}
      X-Escaped: $${HC_FROM_ENV}
      ${HC_FROM_ENV}: key left alone
    args: ["${HC_FROM_ENV}", 3]
    sampling: {model: "${HC_BOTH}", nested: [{x: "${HC_HOST}"}]}
  broken:
    command: run
    env: {TOKEN: "${HC_MISSING_ONE}", OTHER: "${HC_MISSING_TWO}${HC_MISSING_ONE}"}
  single:
    url: ${HC_MISSING_URL}
`
	h := home(t, []byte(src))
	if err := os.WriteFile(filepath.Join(h, DotEnvFile), []byte("HC_HOST=h.example\nHC_BOTH=from-dotenv\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(h)
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.Server("good")
	if g.Err != nil {
		t.Fatal(g.Err)
	}
	wantHeaders := map[string]string{
		"Authorization": "Bearer env-value", "X-Both": "from-env", "X-Default": "fallback", "X-Empty": "",
		"X-Escaped": "${HC_FROM_ENV}", "${HC_FROM_ENV}": "key left alone",
	}
	if g.URL != "https://h.example/mcp" || !reflect.DeepEqual(g.Headers, wantHeaders) {
		t.Fatalf("%q %q", g.URL, g.Headers)
	}
	if !reflect.DeepEqual(g.Args, []string{"env-value", "3"}) {
		t.Fatalf("args %q", g.Args)
	}
	if g.Sampling["model"] != "from-env" || g.Sampling["nested"].([]any)[0].(map[string]any)["x"] != "h.example" {
		t.Fatalf("sampling %v", g.Sampling)
	}
	if g.Raw["url"] != "https://${HC_HOST}/mcp" {
		t.Fatalf("raw url %v", g.Raw["url"])
	}
	b := cfg.Server("broken")
	if !reflect.DeepEqual(b.NeedsVars, []string{"HC_MISSING_ONE", "HC_MISSING_TWO"}) && !reflect.DeepEqual(b.NeedsVars, []string{"HC_MISSING_TWO", "HC_MISSING_ONE"}) {
		t.Fatalf("needs %v", b.NeedsVars)
	}
	if b.Err == nil || !strings.Contains(b.Err.Error(), "are not set") {
		t.Fatalf("err %v", b.Err)
	}
	s := cfg.Server("single")
	want := `server "single": ${HC_MISSING_URL} is not set; set it in the environment or add HC_MISSING_URL=... to ` + filepath.Join(h, ".env")
	if s.Err == nil || s.Err.Error() != want || !reflect.DeepEqual(s.NeedsVars, []string{"HC_MISSING_URL"}) {
		t.Fatalf("got %v\nwant %s", s.Err, want)
	}
}

func TestLoadErrorsNeverShowSecrets(t *testing.T) {
	h := home(t, []byte("mcp_servers:\n  a:\n    url: ${HC_SECRET_URL}\n    timeout: ${HC_SECRET_T}\n"))
	if err := os.WriteFile(filepath.Join(h, DotEnvFile), []byte("HC_SECRET_URL=ftp://topsecret\nHC_SECRET_T=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(h)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Server("a")
	if a.Err == nil || strings.Contains(a.Err.Error(), "topsecret") || strings.Contains(a.Err.Error(), "hunter2") {
		t.Fatalf("err %v", a.Err)
	}
}

// Unknown top-level keys reach Extra with ${VAR}s resolved, for third-party
// transports; nested unknown keys are only reported.
func TestLoadExtraInterpolated(t *testing.T) {
	t.Setenv("HERMES_TEST_WS_REGION", "eu-1")
	cfg, _ := loadString(t, "mcp_servers:\n  w:\n    transport: ws\n    url: wss://h/mcp\n    region: ${HERMES_TEST_WS_REGION}\n    retries: 3\n    tools:\n      odd: 1\n")
	w := cfg.Server("w")
	if w.Err != nil {
		t.Fatal(w.Err)
	}
	want := map[string]any{"region": "eu-1", "retries": w.Extra["retries"]}
	if !reflect.DeepEqual(w.Extra, want) || w.Extra["retries"] == nil {
		t.Fatalf("Extra = %#v", w.Extra)
	}
	if !reflect.DeepEqual(w.Unknown, []string{"region", "retries", "tools.odd"}) {
		t.Fatalf("Unknown = %v", w.Unknown)
	}
}

// LoadEntry reads an unsaved entry exactly as Load reads it once saved, with
// pending .env values in the place .env will hold them, and writes nothing.
func TestLoadEntryMatchesSavedEntry(t *testing.T) {
	const key, token = "HERMES_TEST_LOADENTRY_KEY", "typed-secret-123"
	h := home(t, nil)
	if err := os.WriteFile(filepath.Join(h, DotEnvFile), []byte("HERMES_TEST_LOADENTRY_HOST=example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	entry := NewServerEntry().URL("https://${HERMES_TEST_LOADENTRY_HOST}/mcp").Header("Authorization", "Bearer ${"+key+"}")
	entry.ConnectTimeout(7*time.Second).Include("a", "b*")

	got, err := LoadEntry(h, "web", entry, map[string]string{key: token})
	if err != nil {
		t.Fatal(err)
	}
	if got.Err != nil || got.URL != "https://example.com/mcp" || got.Headers["Authorization"] != "Bearer "+token {
		t.Fatalf("LoadEntry = %+v", got)
	}
	if _, set := os.LookupEnv(key); set {
		t.Fatal("LoadEntry set the pending value in the process environment")
	}
	files, _ := os.ReadDir(h)
	if len(files) != 1 || files[0].Name() != DotEnvFile {
		t.Fatalf("LoadEntry wrote to the home folder: %v", files)
	}

	// Saved for real, Load sees the same server.
	if err := Edit(h, func(d *Document) error { return d.SetServer("web", entry) }); err != nil {
		t.Fatal(err)
	}
	if err := SetDotEnv(h, key, token); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(h)
	if err != nil {
		t.Fatal(err)
	}
	if want := cfg.Server("web"); !reflect.DeepEqual(got, want) {
		t.Errorf("LoadEntry:\n%+v\nLoad after saving:\n%+v", got, want)
	}
}

// The environment wins over pending values, pending values over .env; an
// unresolved name is reported like Load reports it.
func TestLoadEntryLookupOrder(t *testing.T) {
	h := home(t, nil)
	if err := os.WriteFile(filepath.Join(h, DotEnvFile), []byte("LE_A=dotenv\nLE_B=dotenv\nLE_C=dotenv\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LE_A", "environment")
	entry := NewServerEntry().Command("srv").Env("A", "${LE_A}").Env("B", "${LE_B}").Env("C", "${LE_C}")
	s, err := LoadEntry(h, "x", entry, map[string]string{"LE_A": "pending", "LE_B": "pending"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"A": "environment", "B": "pending", "C": "dotenv"}; !reflect.DeepEqual(s.Env, want) {
		t.Errorf("env = %v, want %v", s.Env, want)
	}
	s, err = LoadEntry(h, "x", NewServerEntry().Command("srv").Env("D", "${LE_MISSING}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Err == nil || !strings.Contains(s.Err.Error(), "${LE_MISSING} is not set") || !strings.Contains(s.Err.Error(), filepath.Join(h, DotEnvFile)) {
		t.Errorf("missing variable: %v", s.Err)
	}
	if _, err := LoadEntry(h, "bad name", entry, nil); err == nil {
		t.Error("an invalid name was accepted")
	}
}

// A leading "~" in a server's paths is the HOME of the run the config is
// read for (LoadEnv's env, as cli.Options.Env gives it), not the process's:
// two commands run side by side in one process each see their own. A run
// without HOME falls back to the process's home.
func TestTildeIsTheRunsHome(t *testing.T) {
	t.Setenv("HOME", "/home/process")
	src := `mcp_servers:
  s:
    command: ~/bin/srv
    cwd: "~"
    client_cert: ~/c.pem
    sandbox:
      writable: [~/out]
      deny_read: [~/secret]
  d:
    command: x
    sandbox: {network: none}
`
	h := home(t, []byte(src))
	for _, c := range []struct {
		name string
		env  func(string) (string, bool)
		want string
	}{
		{"the run's HOME", runEnv("/home/run"), "/home/run"},
		{"a run without HOME", runEnv(""), "/home/process"},
		{"the process's environment", nil, "/home/process"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := LoadEnv(h, c.env)
			if err != nil {
				t.Fatal(err)
			}
			s, d := cfg.Server("s"), cfg.Server("d")
			if s.Err != nil || d.Err != nil {
				t.Fatal(s.Err, d.Err)
			}
			for _, g := range []struct{ what, got, want string }{
				{"command", s.Command, c.want + "/bin/srv"},
				{"cwd", s.Cwd, c.want},
				{"client_cert", s.ClientCert, c.want + "/c.pem"},
				{"sandbox.writable", strings.Join(s.Sandbox.Writable, ","), c.want + "/out"},
				{"sandbox.deny_read", strings.Join(s.Sandbox.DenyRead, ","), c.want + "/secret"},
				{"default deny_read", d.Sandbox.DenyRead[0], c.want + "/.ssh"},
			} {
				if g.got != g.want {
					t.Errorf("%s = %q, want %q", g.what, g.got, g.want)
				}
			}
			e, err := LoadEntryEnv(h, "e", NewServerEntry().Command("~/bin/e").Cwd("~/w"), nil, c.env)
			if err != nil {
				t.Fatal(err)
			}
			if e.Command != c.want+"/bin/e" || e.Cwd != c.want+"/w" {
				t.Errorf("LoadEntryEnv: command %q, cwd %q; want them under %s", e.Command, e.Cwd, c.want)
			}
		})
	}
}

func TestLoadInstructionsKey(t *testing.T) {
	cfg, _ := loadString(t, "mcp_servers:\n  off: {command: a, instructions: false}\n  on: {command: b}\n  bad: {command: c, instructions: maybe}\n")
	if s := cfg.Server("off"); s.Err != nil || !s.NoInstructions || len(s.Unknown) != 0 {
		t.Errorf("instructions: false: NoInstructions %v, err %v, unknown %v", s.NoInstructions, s.Err, s.Unknown)
	}
	if s := cfg.Server("on"); s.NoInstructions {
		t.Error("instructions are off without the key")
	}
	if s := cfg.Server("bad"); s.Err == nil || !strings.Contains(s.Err.Error(), "instructions") {
		t.Errorf("instructions: maybe: err %v, want one naming the key", s.Err)
	}
}
