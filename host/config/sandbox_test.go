package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestSandboxBlock(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	cases := []struct {
		name, yaml string
		want       *SandboxSettings
		err        string
	}{
		{name: "absent", yaml: "command: x", want: nil},
		{name: "full", yaml: `command: x
sandbox:
  enforce: false
  writable: [~/.npm, /var/tmp/x/]
  deny_read: [~/secret]
  network: [registry.npmjs.org, "*.github.com", "localhost:8080"]
  limits: {memory: 512M, cpu_seconds: 30, open_files: 64, processes: 0}`,
			want: &SandboxSettings{Enforce: false, Writable: []string{"/home/u/.npm", "/var/tmp/x"},
				DenyRead: []string{"/home/u/secret"}, Network: "hosts",
				Hosts:  []string{"registry.npmjs.org", "*.github.com", "localhost:8080"},
				Memory: 512 << 20, CPUSeconds: 30, OpenFiles: 64, Processes: 0}},
		{name: "none", yaml: "command: x\nsandbox: {network: none, limits: {memory: 2GiB}}",
			want: &SandboxSettings{Enforce: true, Network: "none", Memory: 2 << 30, OpenFiles: DefaultSandboxOpenFiles,
				Processes: DefaultSandboxProcesses, DenyRead: []string{"/home/u/.ssh", "/home/u/.aws", "/home/u/.config/gcloud", "/home/u/.gnupg", "/home/u/.netrc"}}},
		{name: "relative path", yaml: "command: x\nsandbox: {writable: [data]}", err: "sandbox.writable\": want absolute paths"},
		{name: "bad network", yaml: "command: x\nsandbox: {network: some}", err: "sandbox.network\": want all, none or a list"},
		{name: "bad host", yaml: "command: x\nsandbox: {network: [\"http://x.com/\"]}", err: "sandbox.network\": want host names"},
		{name: "bad size", yaml: "command: x\nsandbox: {limits: {memory: lots}}", err: "sandbox.limits.memory\": want a size"},
		{name: "negative", yaml: "command: x\nsandbox: {limits: {processes: -1}}", err: "sandbox.limits.processes\": want"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := parseOne(t, c.yaml)
			if c.err != "" {
				if s.Err == nil || !strings.Contains(s.Err.Error(), c.err) {
					t.Fatalf("err = %v, want it to contain %q", s.Err, c.err)
				}
				return
			}
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			if !reflect.DeepEqual(s.Sandbox, c.want) {
				t.Fatalf("got %#v\nwant %#v", s.Sandbox, c.want)
			}
		})
	}
}

func TestPluginBlock(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	s := parseOne(t, "command: x\nplugin: {kind: transport, name: ws, path: /opt/i/hermes-transport-ws, sha256: "+strings.ToUpper(sum)+"}")
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	want := &PluginPin{Kind: "transport", Name: "ws", Path: "/opt/i/hermes-transport-ws", SHA256: sum}
	if !reflect.DeepEqual(s.Plugin, want) {
		t.Fatalf("got %#v", s.Plugin)
	}
	for yaml, msg := range map[string]string{
		"plugin: {kind: bridge, name: ws, path: /a/hermes-bridge-ws, sha256: " + sum + "}":  "plugin.kind",
		"plugin: {kind: auth, name: ws, path: /a/hermes-transport-ws, sha256: " + sum + "}": "must be named hermes-auth-ws",
		"plugin: {kind: auth, name: ws, path: rel/hermes-auth-ws, sha256: " + sum + "}":     "plugin.path",
		"plugin: {kind: auth, name: ws, path: /a/hermes-auth-ws, sha256: 12}":               "plugin.sha256",
		"plugin: {kind: auth, name: \"w s\", path: /a/hermes-auth-ws, sha256: " + sum + "}": "plugin.name",
	} {
		s := parseOne(t, "command: x\n"+yaml)
		if s.Err == nil || !strings.Contains(s.Err.Error(), msg) {
			t.Errorf("%s: err = %v, want %q", yaml, s.Err, msg)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "100": 100, "1k": 1024, "512M": 512 << 20, "2GiB": 2 << 30, "3gb": 3 << 30, " 1T ": 1 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5G", "1P", "99999999999999999999", "16777216T"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

// parseOne loads a config whose only server, "s", is the entry yaml.
func parseOne(t *testing.T, yaml string) *Server {
	t.Helper()
	var b strings.Builder
	b.WriteString("mcp_servers:\n  s:\n")
	for _, l := range strings.Split(yaml, "\n") {
		b.WriteString("    " + l + "\n")
	}
	cfg, _ := loadString(t, b.String())
	return cfg.Server("s")
}

func TestParseSandbox(t *testing.T) {
	s, err := ParseSandbox(map[string]any{"network": []any{"registry.npmjs.org"}, "writable": []any{"/tmp/x"}}, nil)
	if err != nil || s.Network != "hosts" || s.Writable[0] != "/tmp/x" || !s.Enforce {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := ParseSandbox(map[string]any{"netwrk": "none"}, nil); err == nil || !strings.Contains(err.Error(), "sandbox.netwrk") {
		t.Fatal(err)
	}
	if _, err := ParseSandbox(map[string]any{"network": 3}, nil); err == nil || !strings.Contains(err.Error(), `key "sandbox.network"`) {
		t.Fatal(err)
	}
}

// A leading "~" of a manifest's sandbox paths, the default deny_read list
// included, is the HOME of the run ParseSandbox is given (as LoadEnv's),
// not the process's; nil, or a run without HOME, is the process's.
func TestParseSandboxTildeIsTheRunsHome(t *testing.T) {
	t.Setenv("HOME", "/home/process")
	for _, c := range []struct {
		name string
		env  func(string) (string, bool)
		want string
	}{
		{"the run's HOME", runEnv("/home/run"), "/home/run"},
		{"a run without HOME", runEnv(""), "/home/process"},
		{"the process's environment", nil, "/home/process"},
	} {
		s, err := ParseSandbox(map[string]any{"writable": []any{"~/out"}}, c.env)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.Writable[0] != c.want+"/out" || s.DenyRead[0] != c.want+"/.ssh" {
			t.Errorf("%s: writable %v, deny_read %v; want them under %s", c.name, s.Writable, s.DenyRead, c.want)
		}
		s, err = ParseSandbox(map[string]any{"deny_read": []any{"~/secret"}}, c.env)
		if err != nil || s.DenyRead[0] != c.want+"/secret" {
			t.Errorf("%s: deny_read %v, %v; want it under %s", c.name, s, err, c.want)
		}
	}
}

// runEnv is a run's environment that holds only HOME (none when home is
// "").
func runEnv(home string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == "HOME" && home != "" {
			return home, true
		}
		return "", false
	}
}
