package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// specGateway is SPEC §11's gateway block, with a ${VAR}.
const specGateway = `mcp_servers:
  fs:
    command: server-fs
    isolation: per_user
gateway:
  resource: https://mcp.example.com/mcp
  issuers:
    - {issuer: https://idp.example.com/realms/team, audience: https://mcp.example.com/mcp, groups_claim: groups}
  tokens:
    - {subject: alice, sha256: "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08", groups: [dev]}
  policy:
    - {allow: {groups: [dev], tools: ["mcp_github_*", "mcp_everything_*"]}}
    - {deny:  {subjects: [bob], tools: ["*_delete_*"]}}
    - {allow: {scopes: [tools.read], tools: ["*"], when: 'claims.department == "ops"', limits: {calls_per_minute: 10}}}
  limits: {calls_per_minute: 120, concurrent: 8}
  audit: {file: /var/log/hermes/audit.jsonl}
  telemetry: {otlp_endpoint: "${OTEL_URL}", prometheus: true}
  session_key_env: HERMES_GATEWAY_SESSION_KEY
  vault_key_env: HERMES_GATEWAY_VAULT_KEY
`

func writeConfig(t *testing.T, home, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, File), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadGateway(t *testing.T) {
	home := t.TempDir()
	if g, err := LoadGateway(home, nil); g != nil || err != nil {
		t.Fatalf("no file: %+v, %v", g, err)
	}
	writeConfig(t, home, "mcp_servers: {}\n")
	if g, err := LoadGateway(home, nil); g != nil || err != nil {
		t.Fatalf("no block: %+v, %v", g, err)
	}
	writeConfig(t, home, specGateway)
	if err := os.WriteFile(filepath.Join(home, DotEnvFile), []byte("OTEL_URL=http://otel-collector:4318\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := LoadGateway(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &Gateway{
		Resource: "https://mcp.example.com/mcp",
		Issuers: []GatewayIssuer{{Issuer: "https://idp.example.com/realms/team", Audience: "https://mcp.example.com/mcp",
			GroupsClaim: "groups", ScopesClaim: DefaultScopesClaim}},
		Tokens: []GatewayToken{{Subject: "alice", SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Groups: []string{"dev"}}},
		Policy: []GatewayRule{
			{Allow: true, Groups: []string{"dev"}, Tools: []string{"mcp_github_*", "mcp_everything_*"}},
			{Subjects: []string{"bob"}, Tools: []string{"*_delete_*"}},
			{Allow: true, Scopes: []string{"tools.read"}, Tools: []string{"*"}, When: `claims.department == "ops"`, Limits: GatewayLimits{CallsPerMinute: 10}},
		},
		Limits:        GatewayLimits{CallsPerMinute: 120, Concurrent: 8},
		Audit:         GatewayAudit{File: "/var/log/hermes/audit.jsonl", MaxSizeMB: DefaultAuditMaxSizeMB, Keep: DefaultAuditKeep, Redact: true},
		Telemetry:     GatewayTelemetry{OTLPEndpoint: "http://otel-collector:4318", Prometheus: true, ServiceName: DefaultTelemetryServiceName},
		SessionKeyEnv: "HERMES_GATEWAY_SESSION_KEY",
		VaultKeyEnv:   "HERMES_GATEWAY_VAULT_KEY",
		MaxRequestKB:  DefaultGatewayMaxRequestKB,
	}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("got  %+v\nwant %+v", g, want)
	}
	cfg, err := Load(home)
	if err != nil || !cfg.Server("fs").PerUser() || cfg.Server("fs").Err != nil {
		t.Fatalf("isolation: %+v, %v", cfg.Server("fs"), err)
	}
}

func TestGatewayDefaults(t *testing.T) {
	g, err := ParseGateway("c.yaml", []byte("gateway:\n  resource: http://127.0.0.1:8080/mcp\n  issuers: [{issuer: 'http://localhost:9000'}]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Issuers[0].Audience != g.Resource || g.Issuers[0].GroupsClaim != DefaultGroupsClaim || g.Issuers[0].ScopesClaim != DefaultScopesClaim {
		t.Errorf("issuer defaults: %+v", g.Issuers[0])
	}
	if g.Limits != (GatewayLimits{DefaultGatewayCallsPerMinute, DefaultGatewayConcurrent}) {
		t.Errorf("limits: %+v", g.Limits)
	}
	if g.Audit != (GatewayAudit{Stdout: true, MaxSizeMB: DefaultAuditMaxSizeMB, Keep: DefaultAuditKeep, Redact: true}) {
		t.Errorf("audit: %+v", g.Audit)
	}
	if g.Telemetry != (GatewayTelemetry{ServiceName: DefaultTelemetryServiceName}) || g.SessionKeyEnv != DefaultSessionKeyEnv || g.VaultKeyEnv != DefaultVaultKeyEnv {
		t.Errorf("telemetry and keys: %+v", g)
	}
}

// Each mistake is one line naming the key, and never shows a secret.
func TestGatewayErrors(t *testing.T) {
	const res = "gateway:\n  resource: https://gw.example.com/mcp\n"
	for text, want := range map[string]string{
		"gateway: [1]\n":                                                  "gateway must be a mapping",
		"gateway:\n  issuers: []\n":                                       `key "gateway.resource": is required`,
		"gateway:\n  resource: ftp://x/mcp\n":                             `key "gateway.resource": want an https:// URL`,
		"gateway:\n  resource: http://gw/mcp\n":                           `key "gateway.resource": want https:// (http:// only on a loopback address)`,
		res + "  polcy: []\n":                                             `key "gateway.polcy": hermes does not know this key`,
		res + "  issuers: {issuer: x}\n":                                  `key "gateway.issuers": want a list`,
		res + "  issuers: [{audience: a}]\n":                              `key "gateway.issuers[0].issuer": is required`,
		res + "  issuers: [{issuer: 'https://i', algorithms: [none]}]\n":  `key "gateway.issuers[0].algorithms": "none" is not an algorithm`,
		res + "  issuers: [{issuer: 'https://i', algorithms: [HS256]}]\n": `key "gateway.issuers[0].algorithms": "HS256"`,
		res + "  issuers: [{issuer: 'https://i', jwks: x}]\n":             `key "gateway.issuers[0].jwks": hermes does not know`,
		res + "  issuers: [{issuer: 'https://i', introspection: {}}]\n":   `key "gateway.issuers[0].introspection.url": is required`,
		res + "  tokens: [{sha256: " + strings.Repeat("a", 64) + "}]\n":   `key "gateway.tokens[0].subject": is required`,
		res + "  tokens: [{subject: a, sha256: s3cr3t-token-value}]\n":    `key "gateway.tokens[0].sha256": want the 64 hex digits`,
		res + "  tokens: [{subject: a, sha256: " + strings.Repeat("a", 64) + "}, {subject: b, sha256: " + strings.Repeat("A", 64) + "}]\n": `key "gateway.tokens[1].sha256": is the same token as gateway.tokens[0]`,
		res + "  policy: [{permit: {tools: ['*']}}]\n":                          `key "gateway.policy[0].permit": want allow or deny`,
		res + "  policy: [{allow: {tools: ['*']}, deny: {tools: [x]}}]\n":       `key "gateway.policy[0]": want a mapping with one key, allow or deny`,
		res + "  policy: [{allow: {}}]\n":                                       `key "gateway.policy[0].allow": names nothing to match`,
		res + "  policy: [{allow: {tools: '*', tool: x}}]\n":                    `key "gateway.policy[0].allow.tool": hermes does not know`,
		res + "  policy: [{deny: {tools: [a, '']}}]\n":                          `key "gateway.policy[0].deny.tools[1]": an empty pattern`,
		res + "  policy: [{deny: {tools: [{a: 1}]}}]\n":                         `key "gateway.policy[0].deny.tools": want a list of strings`,
		res + "  policy: [{deny: {when: [1]}}]\n":                               `key "gateway.policy[0].deny.when": want a string`,
		res + "  policy: [{allow: {tools: ['*'], limits: {concurrent: -1}}}]\n": `key "gateway.policy[0].allow.limits.concurrent": want a whole number`,
		res + "  limits: {calls_per_minute: 1.5}\n":                             `key "gateway.limits.calls_per_minute": want a whole number`,
		res + "  limits: {burst: 3}\n":                                          `key "gateway.limits.burst": hermes does not know`,
		res + "  audit: {file: /a, stdout: true}\n":                             `key "gateway.audit": sets both file and stdout`,
		res + "  audit: {redact: false}\n":                                      `key "gateway.audit": says where the lines go`,
		res + "  audit: {stdout: true, max_size_mb: 0}\n":                       `key "gateway.audit.max_size_mb": want at least 1`,
		res + "  audit: {stdout: yes please}\n":                                 `key "gateway.audit.stdout": want true or false`,
		res + "  telemetry: {otlp_endpoint: 'otel:4318'}\n":                     `key "gateway.telemetry.otlp_endpoint": want an http:// or https:// URL`,
		res + "  session_key_env: 'c2VjcmV0IGtleQ=='\n":                         `key "gateway.session_key_env": want the name of an environment variable`,
		res + "  vault_key_env: HERMES_GATEWAY_SESSION_KEY\n":                   `key "gateway.vault_key_env": names the same variable as session_key_env`,
		res + "  telemetry: {otlp_endpoint: '${NOPE}'}\n":                       "gateway.telemetry needs ${NOPE}",
	} {
		_, err := ParseGateway("c.yaml", []byte(text), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "c.yaml: ") {
			t.Errorf("%q: %q is not one line naming the file", text, msg)
		}
		if strings.Contains(msg, "s3cr3t-token-value") {
			t.Errorf("%q: the error shows what may be a token: %s", text, msg)
		}
	}
}

func TestIsolation(t *testing.T) {
	home := t.TempDir()
	writeConfig(t, home, "mcp_servers:\n  a: {command: x}\n  b: {command: x, isolation: shared}\n  c: {command: x, isolation: Per_User}\n  d: {command: x, isolation: each}\n  e: {url: 'https://h/mcp', isolation: per_user}\n")
	cfg, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "", "b": "", "c": "", "d": `server "d": key "isolation": want shared or per_user, got "each"`, "e": `server "e": key "isolation": per_user runs one process per person`} {
		s := cfg.Server(name)
		if want == "" {
			if s.Err != nil || len(s.Unknown) > 0 {
				t.Errorf("%s: %v %v", name, s.Err, s.Unknown)
			}
			continue
		}
		if s.Err == nil || !strings.Contains(s.Err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, s.Err, want)
		}
	}
	if cfg.Server("a").PerUser() || cfg.Server("b").PerUser() || !cfg.Server("c").PerUser() {
		t.Errorf("PerUser: a %v b %v c %v", cfg.Server("a").PerUser(), cfg.Server("b").PerUser(), cfg.Server("c").PerUser())
	}
}

// A per-person entry runs sandboxed: without a sandbox: of its own it gets
// the default one; a shared entry keeps none.
func TestPerUserEntryIsSandboxed(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("mcp_servers:\n  p:\n    command: srv\n    isolation: per_user\n  s:\n    command: srv\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadEnv(home, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p, s := cfg.Servers[0], cfg.Servers[1]
	if !p.PerUser() || p.Sandbox == nil || !p.Sandbox.Enforce || len(p.Sandbox.DenyRead) == 0 {
		t.Fatalf("per-person entry: %+v", p.Sandbox)
	}
	if s.Sandbox != nil {
		t.Fatalf("shared entry got a sandbox: %+v", s.Sandbox)
	}
}
