package catalog

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const minimal = `manifest_version: 1
name: tiny
description: A tiny server.
transport:
  type: stdio
  command: tiny-server
`

func mustParse(t *testing.T, src string) *Manifest {
	t.Helper()
	m, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return m
}

func TestParseMinimal(t *testing.T) {
	m := mustParse(t, minimal)
	want := &Manifest{
		Version:     1,
		Name:        "tiny",
		Description: "A tiny server.",
		Transport:   Transport{Type: "stdio", Command: "tiny-server"},
		Auth:        Auth{Type: "none"},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
}

func TestParseAPIKey(t *testing.T) {
	m := mustParse(t, `manifest_version: 1
name: n8n
description: >-
  Manage n8n
  workflows.
source: https://github.com/example/n8n-mcp
transport:
  type: stdio
  command: "${INSTALL_DIR}/.venv/bin/python"
  args: ["${INSTALL_DIR}/server.py", 8080, true]
  version: "1.2.3"
  env:
    LOG_LEVEL: info
    PORT: 5678
install:
  type: git
  url: https://github.com/example/n8n-mcp.git
  ref: 7a9ae00795593aa1fdb4e61ecd640e8bfd0c3841
  bootstrap:
    - "python3 -m venv .venv"
    - ".venv/bin/pip install -r requirements.txt"
auth:
  type: api_key
  env:
    - name: N8N_BASE_URL
      prompt: "n8n instance URL"
      default: "http://127.0.0.1:5678"
      secret: false
    - name: N8N_API_KEY
      prompt: "n8n API key"
    - name: N8N_OPTIONAL
      required: false
  provider: n8n
  scopes: [read, write]
  env_var: N8N_API_KEY
tools:
  default_enabled: [health, list_workflows]
post_install: |
  Line one.
  Line two.
`)
	want := &Manifest{
		Version:     1,
		Name:        "n8n",
		Description: "Manage n8n workflows.",
		Source:      "https://github.com/example/n8n-mcp",
		Transport: Transport{
			Type:    "stdio",
			Command: "${INSTALL_DIR}/.venv/bin/python",
			Args:    []string{"${INSTALL_DIR}/server.py", "8080", "true"},
			Env:     map[string]string{"LOG_LEVEL": "info", "PORT": "5678"},
			Version: "1.2.3",
		},
		Auth: Auth{
			Type: "api_key",
			Env: []EnvPrompt{
				{Name: "N8N_BASE_URL", Prompt: "n8n instance URL", Required: true, Secret: false, Default: "http://127.0.0.1:5678"},
				{Name: "N8N_API_KEY", Prompt: "n8n API key", Required: true, Secret: true},
				{Name: "N8N_OPTIONAL", Prompt: "N8N_OPTIONAL", Required: false, Secret: true},
			},
			Provider: "n8n",
			Scopes:   []string{"read", "write"},
			EnvVar:   "N8N_API_KEY",
		},
		Tools: Tools{DefaultEnabled: []string{"health", "list_workflows"}},
		Install: &Install{
			Type:      "git",
			URL:       "https://github.com/example/n8n-mcp.git",
			Ref:       "7a9ae00795593aa1fdb4e61ecd640e8bfd0c3841",
			Bootstrap: []string{"python3 -m venv .venv", ".venv/bin/pip install -r requirements.txt"},
		},
		PostInstall: "Line one.\nLine two.\n",
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
}

func TestParseHTTP(t *testing.T) {
	m := mustParse(t, `manifest_version: 1
name: hugging-face
description: Models.
transport: {type: http, url: "https://hf.example/mcp"}
auth:
  type: api_key
  env: [{name: MCP_HUGGING_FACE_API_KEY}]
suggest:
  keywords: [HF, " Models "]
  hosts: [.HuggingFace.co]
`)
	if m.Transport.URL != "https://hf.example/mcp" || m.Auth.Env[0].Name != "MCP_HUGGING_FACE_API_KEY" {
		t.Errorf("%+v", m)
	}
	if !reflect.DeepEqual(m.Suggest, Suggest{Keywords: []string{"hf", "models"}, Hosts: []string{"huggingface.co"}}) {
		t.Errorf("suggest %+v", m.Suggest)
	}

	m = mustParse(t, `manifest_version: 1
name: github
description: GitHub.
transport:
  type: http
  url: https://api.example.com/mcp/
  headers:
    Authorization: "Bearer ${GITHUB_TOKEN}"
    X-Toolsets: "repos,issues"
auth:
  type: api_key
  env: [{name: GITHUB_TOKEN, prompt: "GitHub token"}]
`)
	if !reflect.DeepEqual(m.Transport.Headers, map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}", "X-Toolsets": "repos,issues"}) {
		t.Errorf("headers %v", m.Transport.Headers)
	}

	m = mustParse(t, `manifest_version: 1
name: linear
description: Linear.
transport: {type: http, url: "https://mcp.linear.app/mcp"}
auth: {type: oauth}
tools: {default_excluded: ["delete_*"]}
`)
	if m.Auth.Type != "oauth" || m.Tools.DefaultExcluded[0] != "delete_*" {
		t.Errorf("%+v", m)
	}
}

// TestParseSandboxReadsNoEnvironment: whether a manifest's sandbox is
// valid does not hang on the environment of the process reading it: a
// "~/" path is valid even where the process has no HOME.
func TestParseSandboxReadsNoEnvironment(t *testing.T) {
	t.Setenv("HOME", "")
	m, err := Parse([]byte("manifest_version: 1\nname: files\ndescription: Files.\ntransport: {type: stdio, command: files}\nsandbox:\n  writable: [\"~/cache\"]\n  deny_read: [\"~/.secret\"]\n"))
	if err != nil || m.Sandbox == nil {
		t.Fatalf("a sandbox with ~/ paths read without HOME: %v", err)
	}
}

func TestParseSandboxAndPlugin(t *testing.T) {
	m := mustParse(t, `manifest_version: 1
name: files
description: Files.
transport:
  type: stdio
  command: npx
  args: ["-y", "@example/files@1.0.0", "${FILES_ROOT}"]
auth:
  env: [{name: FILES_ROOT, secret: false, default: "~/files"}]
install: {url: "https://example.com/files.git", ref: 0123456789abcdef0123456789abcdef01234567}
sandbox:
  writable: ["~/.npm", "${FILES_ROOT}", "${INSTALL_DIR}/data", "${HOME}/.cache/files"]
  network: [registry.npmjs.org]
  limits: {memory: 1G, processes: 256}
plugin:
  kind: transport
  name: files-ws
  path: bin/hermes-transport-files-ws
  sha256: ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789
`)
	if m.Sandbox["network"].([]any)[0] != "registry.npmjs.org" {
		t.Errorf("sandbox %v", m.Sandbox)
	}
	want := &Plugin{Kind: "transport", Name: "files-ws", Path: "bin/hermes-transport-files-ws", SHA256: "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"}
	if !reflect.DeepEqual(m.Plugin, want) {
		t.Errorf("plugin %+v", m.Plugin)
	}
	if m.Install.Type != "git" {
		t.Errorf("install type %q, want the default git", m.Install.Type)
	}
}

func TestParseUnknownKeysKept(t *testing.T) {
	m := mustParse(t, minimal+"homepage: x\nauth: {type: none, extra: 1}\ntools: {pinned: [a]}\n")
	if want := []string{"auth.extra", "homepage", "tools.pinned"}; !reflect.DeepEqual(m.Unknown, want) {
		t.Errorf("Unknown %q, want %q", m.Unknown, want)
	}
}

func TestParseFuture(t *testing.T) {
	_, err := Parse([]byte("manifest_version: 2\nname: later\ndescription: From the future.\ntransport: {type: quantum}\n"))
	var fe *FutureError
	if !errors.As(err, &fe) {
		t.Fatalf("err %v, want a *FutureError", err)
	}
	if fe.Version != 2 || fe.Name != "later" || fe.Description != "From the future." {
		t.Errorf("%+v", fe)
	}
	if got := err.Error(); got != "manifest_version 2 unsupported (this Hermes understands version 1)" {
		t.Errorf("message %q", got)
	}
}

// TestParseErrorsInOrder starts from a manifest where every key is wrong
// and fixes one key at a time: each step must report the next key of the
// schema's order, with its message.
func TestParseErrorsInOrder(t *testing.T) {
	keys := map[string]string{
		"manifest_version": `manifest_version: "1"`,
		"name":             `name: "bad name"`,
		"description":      `description: "  "`,
		"source":           `source: ftp://example.com`,
		"transport":        "transport:\n  type: stdio\n  command: ''\n  url: x\n  env: {1BAD: x}\n  headers: {A: b}",
		"auth":             "auth:\n  type: api_key\n  env: [{name: 'BAD-NAME'}]",
		"tools":            "tools: {default_enabled: [a], default_excluded: [b]}",
		"suggest":          "suggest: {keywords: []}",
		"install":          "install: {type: svn, url: '-x', ref: '--force'}",
		"post_install":     "post_install: [a]",
		"sandbox":          "sandbox: {network: sometimes}",
		"plugin":           "plugin: {kind: magic}",
		"refs":             "",
	}
	fixes := map[string]string{
		"manifest_version": "manifest_version: 1",
		"name":             "name: fine",
		"description":      "description: Fine.",
		"source":           "source: https://example.com",
		"auth":             "auth: {type: api_key, env: [{name: KEY}]}",
		"tools":            "tools: {default_enabled: [a]}",
		"suggest":          "suggest: {keywords: [x]}",
		"install":          "install: {url: 'https://example.com/r.git', ref: 0123456789012345678901234567890123456789}",
		"post_install":     "post_install: done",
		"sandbox":          "sandbox: {network: none}",
		"plugin":           "plugin: {kind: transport, name: x, path: hermes-transport-x}",
	}
	order := []string{"manifest_version", "name", "description", "source", "transport", "auth", "tools", "suggest", "install", "post_install", "sandbox", "plugin"}
	// The transport block fails field by field too.
	transportSteps := []struct{ block, want string }{
		{keys["transport"], `transport.command: a stdio server needs the command that starts it, got ""`},
		{"transport:\n  type: stdio\n  command: srv\n  url: x\n  env: {1BAD: x}\n  headers: {A: b}", "transport.url: only for type http"},
		{"transport:\n  type: stdio\n  command: srv\n  env: {1BAD: x}\n  headers: {A: b}", `transport.env: want variable names such as API_URL, got "1BAD"`},
		{"transport:\n  type: stdio\n  command: srv\n  env: {OK: x}\n  headers: {A: b}", "transport.headers: only for type http"},
	}
	wants := map[string]string{
		"manifest_version": `manifest_version "1" unsupported (this Hermes understands version 1)`,
		"name":             `name: want a name of letters, digits, - and _, got "bad name"`,
		"description":      `description: want one line saying what the server does, got "  "`,
		"source":           `source: want an http:// or https:// URL, got "ftp://example.com"`,
		"auth":             `auth.env[0].name: want a variable name such as API_KEY (letters, digits, _), got "BAD-NAME"`,
		"tools":            "tools: default_enabled and default_excluded are mutually exclusive; keep one of them",
		"suggest":          "suggest: needs at least one keyword or host; add one or remove suggest",
		"install":          `install.type: only git is supported, got "svn"`,
		"post_install":     "post_install: want text, got a list",
		"sandbox":          `sandbox.network: want all, none or a list of host names, got "sometimes"`,
		"plugin":           `plugin.kind: want transport or auth, got "magic"`,
	}
	build := func() string {
		var b strings.Builder
		for _, k := range order {
			b.WriteString(keys[k] + "\n")
		}
		return b.String()
	}
	check := func(step, want string) {
		t.Helper()
		_, err := Parse([]byte(build()))
		if err == nil {
			t.Fatalf("%s: accepted:\n%s", step, build())
		}
		var me *Error
		if !errors.As(err, &me) {
			t.Fatalf("%s: %T %v", step, err, err)
		}
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s:\n got %q\nwant %q", step, err, want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: message spans lines: %q", step, err)
		}
	}
	for _, k := range order {
		if k == "transport" {
			for i, s := range transportSteps {
				keys["transport"] = s.block
				check(fmt.Sprintf("transport step %d", i), s.want)
			}
			keys["transport"] = "transport: {type: stdio, command: srv}"
			continue
		}
		check(k, wants[k])
		keys[k] = fixes[k]
	}
	// Every key fixed: the manifest is valid.
	if _, err := Parse([]byte(build())); err != nil {
		t.Fatalf("all fixed: %v\n%s", err, build())
	}
}

func TestParseErrors(t *testing.T) {
	stdio := func(extra string) string { return minimal + extra }
	http := func(extra string) string {
		return "manifest_version: 1\nname: remote\ndescription: R.\ntransport: {type: http, url: 'https://r.example/mcp'}\n" + extra
	}
	cases := []struct{ name, src, want string }{
		{"empty", "", "the manifest is empty"},
		{"comment only", "# nothing\n", "the manifest is empty"},
		{"not a mapping", "- a\n", "the manifest must be a mapping of keys such as manifest_version and name, got a list"},
		{"bad yaml", "a: [\n", "line "},
		{"two documents", minimal + "---\nname: x\n", "the manifest holds 2 YAML documents"},
		{"duplicate key", minimal + "name: again\n", `mapping key "name" already defined`},
		{"anchor", "manifest_version: 1\nname: a\ndescription: &d D\ntransport: {type: stdio, command: *d}\n", "YAML anchors and aliases"},
		{"too large", minimal + "post_install: " + strings.Repeat("x", MaxManifestBytes) + "\n", "over the limit of 256 KiB"},
		{"no version", "name: x\n", "manifest_version is missing"},
		{"version zero", "manifest_version: 0\n", "manifest_version 0 unsupported"},
		{"version float", "manifest_version: 1.0\n", "manifest_version 1.0 unsupported"},
		{"version list", "manifest_version: [1]\n", "manifest_version a list unsupported"},
		{"name too long", "manifest_version: 1\nname: " + strings.Repeat("a", 65) + "\n", "name: 65 bytes, over the limit of 64"},
		{"no transport", "manifest_version: 1\nname: a\ndescription: d\n", "transport is missing"},
		{"transport list", "manifest_version: 1\nname: a\ndescription: d\ntransport: [stdio]\n", "transport: want a mapping"},
		{"transport type", "manifest_version: 1\nname: a\ndescription: d\ntransport: {type: ws}\n", `transport.type: want stdio or http, got "ws"`},
		{"http no url", "manifest_version: 1\nname: a\ndescription: d\ntransport: {type: http}\n", "transport.url: an http server needs an http:// or https:// URL"},
		{"http bad url", "manifest_version: 1\nname: a\ndescription: d\ntransport: {type: http, url: 'file:///x'}\n", "transport.url: an http server needs"},
		{"http command", "manifest_version: 1\nname: a\ndescription: d\ntransport: {type: http, url: 'https://x', command: c}\n", "transport.command: only for type stdio"},
		{"http env", "manifest_version: 1\nname: a\ndescription: d\ntransport: {type: http, url: 'https://x.example', env: {A: b}}\n", "transport.env: only for type stdio"},
		{"args not list", stdio("  args: a b\n"), "transport.args: want a list, got text"},
		{"args null item", stdio("  args: [a, ~]\n"), "transport.args[1]: empty"},
		{"header newline", "manifest_version: 1\nname: a\ndescription: d\ntransport: {type: http, url: 'https://x.example', headers: {A: \"x\\ny\"}}\n", `transport.headers: the value of "A" spans lines`},
		{"header name", "manifest_version: 1\nname: a\ndescription: d\ntransport: {type: http, url: 'https://x.example', headers: {'A B': x}}\n", `transport.headers: want header names such as Authorization, got "A B"`},
		{"api_key http without var", http("auth: {type: api_key, env: [{name: K}]}\n"), "auth.env: an http server with auth.type api_key and no transport.headers sends Authorization: Bearer ${MCP_REMOTE_API_KEY}"},
		{"api_key without env", stdio("auth: {type: api_key}\n"), "auth.env: auth.type api_key needs at least one prompt"},
		{"oauth stdio", stdio("auth: {type: oauth}\n"), "auth.type: oauth needs transport.type http"},
		{"auth type", stdio("auth: {type: magic}\n"), `auth.type: want none, api_key or oauth, got "magic"`},
		{"auth env twice", stdio("auth: {env: [{name: A}, {name: A}]}\n"), "auth.env[1].name: A is declared twice"},
		{"auth required", stdio("auth: {env: [{name: A, required: maybe}]}\n"), `auth.env[0].required: want true or false, got "maybe"`},
		{"auth env not list", stdio("auth: {env: {A: x}}\n"), "auth.env: want a list of prompts"},
		{"auth default newline", stdio("auth: {env: [{name: A, default: \"a\\nb\"}]}\n"), "auth.env[0].default: spans lines"},
		{"too many args", stdio("  args: [" + strings.Repeat("a, ", MaxListLen) + "a]\n"), "transport.args: 65 entries, over the limit of 64"},
		{"long arg", stdio("  args: [" + strings.Repeat("a", MaxTextLen+1) + "]\n"), "transport.args[0]: 4097 bytes, over the limit of 4096"},
		{"tool empty", stdio("tools: {default_enabled: ['']}\n"), "tools: a tool name is empty"},
		{"install url option", stdio("install: {url: '--upload-pack=x', ref: 0123456789012345678901234567890123456789}\n"), "install.url: want a git repository URL"},
		{"install url ext", stdio("install: {url: 'ext::sh -c x', ref: 0123456789012345678901234567890123456789}\n"), "install.url: want a git repository URL"},
		{"install no ref", stdio("install: {url: 'https://e.com/r.git'}\n"), "install.ref: want the full 40-hex commit SHA"},
		{"install ref option", stdio("install: {url: 'https://e.com/r.git', ref: '-b'}\n"), "install.ref: want the full 40-hex commit SHA"},
		{"install bootstrap empty", stdio("install: {url: 'https://e.com/r.git', ref: 0123456789012345678901234567890123456789, bootstrap: [' ']}\n"), "install.bootstrap[0]: the command is empty"},
		{"sandbox http", http("sandbox: {network: none}\n"), "sandbox: confines a local (stdio) server"},
		{"sandbox unknown key", stdio("sandbox: {writeable: [/tmp]}\n"), "sandbox: unknown sandbox keys sandbox.writeable; use writable"},
		{"sandbox relative", stdio("sandbox: {writable: [data]}\n"), `sandbox.writable: want absolute paths (or ~/...), got "data"`},
		{"sandbox undeclared var", stdio("sandbox: {writable: ['${SECRET_DIR}']}\n"), "sandbox.writable[0]: ${SECRET_DIR} is not declared in auth.env"},
		{"sandbox var host", stdio("auth: {env: [{name: H}]}\nsandbox: {network: ['${H}']}\n"), `sandbox.network: want host names such as api.example.com, *.example.com or example.com:443, got "${H}"`},
		{"plugin without install", stdio("plugin: {kind: auth, name: x, path: hermes-auth-x}\n"), "plugin: the plugin binary comes from the install folder"},
		{"plugin path escape", stdio("plugin: {kind: auth, name: x, path: ../hermes-auth-x}\n"), "plugin.path: want a path inside the install folder"},
		{"plugin path absolute", stdio("plugin: {kind: auth, name: x, path: /bin/hermes-auth-x}\n"), "plugin.path: want a path inside the install folder"},
		{"plugin path name", stdio("plugin: {kind: auth, name: x, path: bin/x}\n"), `plugin.path: the binary must be named hermes-auth-x, got "x"`},
		{"plugin sha", stdio("plugin: {kind: auth, name: x, path: hermes-auth-x, sha256: abc}\n"), `plugin.sha256: want the 64 hex digits`},
		{"undeclared var in args", stdio("  args: ['${AWS_SECRET_ACCESS_KEY}']\n"), "transport.args[0]: ${AWS_SECRET_ACCESS_KEY} is not declared in auth.env"},
		{"undeclared var in env", "manifest_version: 1\nname: a\ndescription: d\ntransport:\n  type: stdio\n  command: c\n  env: {X: '${AWS_SECRET_ACCESS_KEY:-x}'}\n", "transport.env.X: ${AWS_SECRET_ACCESS_KEY} is not declared in auth.env"},
		{"install dir without install", "manifest_version: 1\nname: a\ndescription: d\ntransport: {type: stdio, command: '${INSTALL_DIR}/bin/s'}\n", "manifest references ${INSTALL_DIR} but has no install block"},
		{"install dir other form", "manifest_version: 1\nname: a\ndescription: d\ntransport: {type: stdio, command: '${env:INSTALL_DIR}/s'}\ninstall: {url: 'https://e.com/r.git', ref: 0123456789012345678901234567890123456789}\n", "transport.command: write the install folder as ${INSTALL_DIR} exactly"},
		{"NUL", "manifest_version: 1\nname: a\ndescription: \"a\\0b\"\n", "description: contains a NUL byte"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src))
			if err == nil {
				t.Fatalf("accepted:\n%s", c.src)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got  %q\nwant %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") || len(err.Error()) > 600 {
				t.Errorf("message is not one short line: %q", err)
			}
		})
	}
}

func TestAPIKeyVar(t *testing.T) {
	for in, want := range map[string]string{"github": "MCP_GITHUB_API_KEY", "hugging-face": "MCP_HUGGING_FACE_API_KEY", "_x_": "MCP_X_API_KEY"} {
		if got := APIKeyVar(in); got != want {
			t.Errorf("APIKeyVar(%q) = %q, want %q", in, got, want)
		}
	}
}
