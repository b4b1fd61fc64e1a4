package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/hermes-agent/hermes/host/fields"
	"github.com/hermes-agent/hermes/host/homedir"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// GatewayKey is the top-level key of config.yaml holding the settings of
// `hermes mcp gateway` (SPEC §11): identity, policy, limits, audit and
// telemetry of a team's endpoint.
const GatewayKey = "gateway"

// Defaults of the gateway: block.
const (
	// DefaultGroupsClaim is the claim of an access token that lists the
	// person's groups (issuers[].groups_claim).
	DefaultGroupsClaim = "groups"
	// DefaultScopesClaim is the claim that holds the token's scopes, a
	// space-separated string or a list (issuers[].scopes_claim).
	DefaultScopesClaim = "scope"
	// DefaultGatewayCallsPerMinute is limits.calls_per_minute: the calls a
	// person may make in a minute.
	DefaultGatewayCallsPerMinute = 600
	// DefaultGatewayConcurrent is limits.concurrent: the calls a person
	// may have in flight at once.
	DefaultGatewayConcurrent = 16
	// DefaultAuditMaxSizeMB is audit.max_size_mb: the size at which the
	// audit file is rotated.
	DefaultAuditMaxSizeMB = 100
	// DefaultAuditKeep is audit.keep: the rotated audit files kept.
	DefaultAuditKeep = 10
	// DefaultSessionKeyEnv is session_key_env: the variable holding the
	// key that authenticates session ids.
	DefaultSessionKeyEnv = "HERMES_GATEWAY_SESSION_KEY"
	// DefaultVaultKeyEnv is vault_key_env: the variable holding the key
	// that encrypts people's upstream tokens at rest.
	DefaultVaultKeyEnv = "HERMES_GATEWAY_VAULT_KEY"
	// DefaultTelemetryServiceName is telemetry.service_name.
	DefaultTelemetryServiceName = "hermes-gateway"
)

// Bounds of the gateway: block's lists.
const (
	MaxGatewayIssuers = 16
	MaxGatewayTokens  = 10000
	MaxGatewayRules   = 1000
	// maxGatewayLimit bounds calls_per_minute and concurrent.
	maxGatewayLimit = 1 << 20
)

// Values of a server entry's isolation key.
const (
	// IsolationShared runs one process of the server for everyone (the
	// default).
	IsolationShared = "shared"
	// IsolationPerUser runs one sandboxed process per person and server.
	IsolationPerUser = "per_user"
)

// JWTAlgorithms are the signature algorithms issuers[].algorithms may
// allow: asymmetric ones only (a JWKS publishes public keys; "none" and
// the HMAC family never verify a token from an IdP).
var JWTAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

var (
	envNameRE = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

var (
	knownGatewayKeys = []string{"resource", "issuers", "tokens", "policy", "limits", "audit", "telemetry", "session_key_env", "vault_key_env", "max_request_kb"}
	knownIssuerKeys  = []string{"issuer", "audience", "groups_claim", "scopes_claim", "algorithms", "introspection"}
	knownIntrospKeys = []string{"url", "client_id", "client_secret"}
	knownTokenKeys   = []string{"subject", "sha256", "groups", "scopes"}
	knownRuleKeys    = []string{"subjects", "groups", "scopes", "servers", "tools", "prompts", "resources", "when", "limits"}
	knownLimitsKeys  = []string{"calls_per_minute", "concurrent"}
	knownAuditKeys   = []string{"file", "stdout", "max_size_mb", "keep", "redact"}
	knownTelemKeys   = []string{"otlp_endpoint", "prometheus", "service_name"}
)

// Gateway is the gateway: block of config.yaml with ${VAR}s resolved,
// checked, and defaults applied.
type Gateway struct {
	// Resource is the gateway's resource URI: the audience its tokens
	// must carry, RFC 9728's resource, and (its path) where the MCP
	// endpoint is served.
	Resource string
	// Issuers are the OAuth 2.1 authorization servers whose tokens are
	// accepted.
	Issuers []GatewayIssuer
	// Tokens are static bearer tokens, by their sha256.
	Tokens []GatewayToken
	// Policy is the rules, in order: the first that matches decides; none
	// matching denies.
	Policy []GatewayRule
	// Limits apply per person.
	Limits GatewayLimits
	Audit  GatewayAudit
	// Telemetry is where traces and metrics go.
	Telemetry GatewayTelemetry
	// SessionKeyEnv and VaultKeyEnv name the variables that hold the
	// deployment's keys (never the keys themselves).
	SessionKeyEnv, VaultKeyEnv string
	// MaxRequestKB bounds one request body, in KiB
	// (DefaultGatewayMaxRequestKB).
	MaxRequestKB int
}

// DefaultGatewayMaxRequestKB is gateway.max_request_kb: 4 MiB.
const DefaultGatewayMaxRequestKB = 4096

// GatewayIssuer is one entry of issuers:.
type GatewayIssuer struct {
	// Issuer is the iss tokens carry, and the base of OIDC discovery.
	Issuer string
	// Audience is the aud tokens must carry; the gateway's Resource
	// unless set.
	Audience string
	// GroupsClaim and ScopesClaim name the claims holding the person's
	// groups and the token's scopes.
	GroupsClaim, ScopesClaim string
	// Algorithms are the signature algorithms accepted (JWTAlgorithms);
	// empty leaves the choice to the identity package.
	Algorithms []string
	// Introspection, when set, validates opaque tokens (RFC 7662).
	Introspection *GatewayIntrospection
}

// GatewayIntrospection is issuers[].introspection: the endpoint of RFC
// 7662 and the gateway's client credentials there.
type GatewayIntrospection struct {
	URL, ClientID, ClientSecret string
}

// GatewayToken is one static bearer token of tokens:.
type GatewayToken struct {
	Subject string
	// SHA256 is the hex sha256 of the token, lower case.
	SHA256         string
	Groups, Scopes []string
}

// GatewayRule is one rule of policy: allow or deny, with the globs and the
// CEL condition it matches on (the gateway's policy package compiles it).
type GatewayRule struct {
	// Allow is true for an allow: rule, false for a deny: rule.
	Allow                                    bool
	Subjects, Groups, Scopes, Servers, Tools []string
	// Prompts and Resources are globs over served prompt names and
	// resource URIs; a rule naming none of tools, prompts and resources
	// applies to all three.
	Prompts, Resources []string
	// When is a CEL expression; "" for none.
	When string
	// Limits of the calls the rule allows, per person and tool; zero
	// leaves the gateway's.
	Limits GatewayLimits
}

// GatewayLimits are calls_per_minute and concurrent; 0 is no limit.
type GatewayLimits struct {
	CallsPerMinute, Concurrent int
}

// GatewayAudit is the audit: block: one JSON line per call and per denial.
type GatewayAudit struct {
	// File is the audit file ("" with Stdout).
	File string
	// Stdout writes the lines to standard output instead.
	Stdout bool
	// MaxSizeMB rotates File at this size; Keep rotated files are kept.
	MaxSizeMB, Keep int
	// Redact keeps argument values out of the lines (only their sha256
	// is written); false is an opt-in to write them.
	Redact bool
}

// GatewayTelemetry is the telemetry: block.
type GatewayTelemetry struct {
	// OTLPEndpoint is the OTLP/HTTP collector traces and metrics are sent
	// to; "" sends none.
	OTLPEndpoint string
	// Prometheus serves /metrics.
	Prometheus bool
	// ServiceName is the service.name of the resource.
	ServiceName string
}

// LoadGateway reads the gateway: block of <home>/config.yaml; a missing
// file or key gives nil. A ${VAR} is looked up in env (the run's
// environment; nil is the process's), then in <home>/.env. A wrong value is
// one line naming the key.
func LoadGateway(home string, env func(string) (string, bool)) (*Gateway, error) {
	return LoadGatewayFile(homedir.Dir(home).Config(), home, env)
}

// LoadGatewayFile is LoadGateway of the config file at path.
func LoadGatewayFile(path, home string, env func(string) (string, bool)) (*Gateway, error) {
	src, err := readLimited(path, MaxConfigBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dotenv, err := LoadDotEnv(home)
	if err != nil {
		return nil, err
	}
	return ParseGateway(path, src, varLookupEnv(env, dotenv))
}

// ParseGateway reads the gateway: block of the config file src (path names
// it in errors), resolving ${VAR}s through lookup (nil resolves none); nil
// when the file has no such block.
func ParseGateway(path string, src []byte, lookup func(string) (string, bool)) (*Gateway, error) {
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	block, err := decodeTopMapping(path, src, GatewayKey, "a mapping of settings (resource, issuers, policy, ...)")
	if err != nil || block == nil {
		return nil, err
	}
	for _, it := range block {
		var missing []string
		interpolateValue(it.Value, lookup, &missing)
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s: %s.%s needs ${%s}: set it in the environment or in %s", path, GatewayKey, keyString(it.Key), missing[0], homedir.DotEnvName)
		}
	}
	var missing []string
	v, _ := plain(interpolateValue(block, lookup, &missing)).(map[string]any)
	raw, _ := plain(block).(map[string]any)
	d := &decoder{}
	g := d.gateway(v, raw)
	if d.err != nil {
		return nil, fmt.Errorf("%s: %w; fix the file", path, d.err)
	}
	return g, nil
}

// gk is the full name of a key of the gateway block, for errors.
func gk(parts ...string) string { return GatewayKey + "." + strings.Join(parts, "") }

// unknownKeys fails on the first key of m not in known.
func (d *decoder) unknownKeys(prefix string, m map[string]any, known []string) {
	for _, k := range fields.Keys(m) {
		if !slices.Contains(known, k) {
			d.fail(prefix+"."+k, "hermes does not know this key; check its spelling (known: %s)", strings.Join(known, ", "))
			return
		}
	}
}

// section returns the mapping under key (nil when absent), failing when it
// is something else.
func (d *decoder) section(key string, v, raw any, known []string) map[string]any {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(key, "want a mapping, got %s", got(raw))
		return nil
	}
	d.unknownKeys(key, m, known)
	return m
}

// list returns the list under key, failing when it is something else or
// longer than limit.
func (d *decoder) list(key string, v, raw any, limit int) []any {
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		d.fail(key, "want a list, got %s", got(raw))
		return nil
	}
	if len(l) > limit {
		d.fail(key, "lists %d entries, more than the %d allowed", len(l), limit)
		return nil
	}
	return l
}

func index(raw any, i int) any {
	if l, ok := raw.([]any); ok && i < len(l) {
		return l[i]
	}
	return nil
}

// count reads a whole number from 0 to limit (0: none), def when absent.
func (d *decoder) count(key string, v, raw any, def, limit int) int {
	if v == nil {
		return def
	}
	f, ok := fields.Number(v)
	if !ok || f < 0 || f > float64(limit) || f != float64(int(f)) {
		d.fail(key, "want a whole number from 0 to %d, got %s", limit, got(raw))
		return def
	}
	return int(f)
}

// httpsURL reads a URL that must be https, or http on a loopback host.
func (d *decoder) httpsURL(key string, v, raw any) string {
	s := strings.TrimSpace(d.str(key, v, raw))
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Fragment != "" || u.User != nil {
		d.fail(key, "want an https:// URL with a host name and no #fragment, got %s", got(raw))
		return ""
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		d.fail(key, "want https:// (http:// only on a loopback address), got %s", got(raw))
		return ""
	}
	return s
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// envName reads the name of an environment variable.
func (d *decoder) envName(key string, v, raw any, def string) string {
	s := strings.TrimSpace(d.str(key, v, raw))
	if s == "" {
		return def
	}
	if !envNameRE.MatchString(s) {
		d.fail(key, "want the name of an environment variable (letters, digits, _), got %s; the key itself belongs in that variable, not here", got(raw))
		return def
	}
	return s
}

func (d *decoder) gateway(v, raw map[string]any) *Gateway {
	g := &Gateway{
		Limits:        GatewayLimits{CallsPerMinute: DefaultGatewayCallsPerMinute, Concurrent: DefaultGatewayConcurrent},
		Audit:         GatewayAudit{Stdout: true, MaxSizeMB: DefaultAuditMaxSizeMB, Keep: DefaultAuditKeep, Redact: true},
		Telemetry:     GatewayTelemetry{ServiceName: DefaultTelemetryServiceName},
		SessionKeyEnv: DefaultSessionKeyEnv,
		VaultKeyEnv:   DefaultVaultKeyEnv,
	}
	d.unknownKeys(GatewayKey, v, knownGatewayKeys)
	g.Resource = d.httpsURL(gk("resource"), v["resource"], raw["resource"])
	if g.Resource == "" && d.err == nil {
		d.fail(gk("resource"), "is required: the gateway's public URL (https://host/path), the audience its tokens carry")
	}
	for i, it := range d.list(gk("issuers"), v["issuers"], raw["issuers"], MaxGatewayIssuers) {
		g.Issuers = append(g.Issuers, d.issuer(fmt.Sprintf("%s[%d]", gk("issuers"), i), it, index(raw["issuers"], i), g.Resource))
	}
	seen := map[string]int{}
	for i, it := range d.list(gk("tokens"), v["tokens"], raw["tokens"], MaxGatewayTokens) {
		key := fmt.Sprintf("%s[%d]", gk("tokens"), i)
		t := d.token(key, it, index(raw["tokens"], i))
		if j, dup := seen[t.SHA256]; dup && t.SHA256 != "" {
			d.fail(key+".sha256", "is the same token as %s[%d]; give each person their own", gk("tokens"), j)
		}
		seen[t.SHA256] = i
		g.Tokens = append(g.Tokens, t)
	}
	for i, it := range d.list(gk("policy"), v["policy"], raw["policy"], MaxGatewayRules) {
		g.Policy = append(g.Policy, d.rule(fmt.Sprintf("%s[%d]", gk("policy"), i), it, index(raw["policy"], i)))
	}
	if m := d.section(gk("limits"), v["limits"], raw["limits"], knownLimitsKeys); m != nil {
		g.Limits = d.limits(gk("limits"), m, sub(raw, "limits"), g.Limits)
	}
	if m := d.section(gk("audit"), v["audit"], raw["audit"], knownAuditKeys); m != nil {
		g.Audit = d.audit(m, sub(raw, "audit"))
	}
	if m := d.section(gk("telemetry"), v["telemetry"], raw["telemetry"], knownTelemKeys); m != nil {
		rt := sub(raw, "telemetry")
		g.Telemetry.OTLPEndpoint = d.endpoint(gk("telemetry.otlp_endpoint"), m["otlp_endpoint"], sub(rt, "otlp_endpoint"))
		g.Telemetry.Prometheus = d.boolish(gk("telemetry.prometheus"), m["prometheus"], sub(rt, "prometheus"), false)
		if n := strings.TrimSpace(d.str(gk("telemetry.service_name"), m["service_name"], sub(rt, "service_name"))); n != "" {
			g.Telemetry.ServiceName = n
		}
	}
	if n := d.count(gk("max_request_kb"), v["max_request_kb"], raw["max_request_kb"], DefaultGatewayMaxRequestKB, 1<<20); n > 0 {
		g.MaxRequestKB = n
	} else if d.err == nil {
		d.fail(gk("max_request_kb"), "want at least 1 (KiB)")
	}
	g.SessionKeyEnv = d.envName(gk("session_key_env"), v["session_key_env"], raw["session_key_env"], DefaultSessionKeyEnv)
	g.VaultKeyEnv = d.envName(gk("vault_key_env"), v["vault_key_env"], raw["vault_key_env"], DefaultVaultKeyEnv)
	if g.SessionKeyEnv == g.VaultKeyEnv && d.err == nil {
		d.fail(gk("vault_key_env"), "names the same variable as session_key_env; use two keys, one per purpose")
	}
	return g
}

// endpoint reads an http(s) URL (a collector inside a cluster may be plain
// http).
func (d *decoder) endpoint(key string, v, raw any) string {
	s := strings.TrimSpace(d.str(key, v, raw))
	if s == "" {
		return ""
	}
	if u, err := url.Parse(s); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		d.fail(key, "want an http:// or https:// URL with a host name, got %s", got(raw))
		return ""
	}
	return s
}

func (d *decoder) issuer(key string, v, raw any, resource string) GatewayIssuer {
	is := GatewayIssuer{Audience: resource, GroupsClaim: DefaultGroupsClaim, ScopesClaim: DefaultScopesClaim}
	m := d.section(key, v, raw, knownIssuerKeys)
	if m == nil {
		if v == nil {
			d.fail(key, "want a mapping with issuer, got nothing")
		}
		return is
	}
	is.Issuer = d.httpsURL(key+".issuer", m["issuer"], sub(raw, "issuer"))
	if is.Issuer == "" && d.err == nil {
		d.fail(key+".issuer", "is required: the iss URL of the identity provider")
	}
	if a := strings.TrimSpace(d.str(key+".audience", m["audience"], sub(raw, "audience"))); a != "" {
		is.Audience = a
	}
	if c := strings.TrimSpace(d.str(key+".groups_claim", m["groups_claim"], sub(raw, "groups_claim"))); c != "" {
		is.GroupsClaim = c
	}
	if c := strings.TrimSpace(d.str(key+".scopes_claim", m["scopes_claim"], sub(raw, "scopes_claim"))); c != "" {
		is.ScopesClaim = c
	}
	for _, a := range d.strList(key+".algorithms", m["algorithms"], sub(raw, "algorithms")) {
		if !slices.Contains(JWTAlgorithms, a) {
			d.fail(key+".algorithms", "%q is not an algorithm hermes accepts; want some of %s", a, strings.Join(JWTAlgorithms, ", "))
			break
		}
		is.Algorithms = append(is.Algorithms, a)
	}
	if im := d.section(key+".introspection", m["introspection"], sub(raw, "introspection"), knownIntrospKeys); im != nil {
		ri := sub(raw, "introspection")
		in := &GatewayIntrospection{
			URL:          d.httpsURL(key+".introspection.url", im["url"], sub(ri, "url")),
			ClientID:     strings.TrimSpace(d.str(key+".introspection.client_id", im["client_id"], sub(ri, "client_id"))),
			ClientSecret: d.str(key+".introspection.client_secret", im["client_secret"], sub(ri, "client_secret")),
		}
		if in.URL == "" && d.err == nil {
			d.fail(key+".introspection.url", "is required: the token introspection endpoint (RFC 7662)")
		}
		is.Introspection = in
	}
	return is
}

func (d *decoder) token(key string, v, raw any) GatewayToken {
	var t GatewayToken
	m := d.section(key, v, raw, knownTokenKeys)
	if m == nil {
		if v == nil {
			d.fail(key, "want a mapping with subject and sha256, got nothing")
		}
		return t
	}
	t.Subject = strings.TrimSpace(d.str(key+".subject", m["subject"], sub(raw, "subject")))
	if t.Subject == "" && d.err == nil {
		d.fail(key+".subject", "is required: who the token stands for")
	}
	h := strings.TrimSpace(d.str(key+".sha256", m["sha256"], sub(raw, "sha256")))
	if !sha256RE.MatchString(h) {
		// The value is a secret's hash, or a secret pasted by mistake:
		// it is never shown.
		d.fail(key+".sha256", "want the 64 hex digits of the token's sha256 (printf %%s TOKEN | sha256sum), not the token itself")
	}
	if b, err := hex.DecodeString(h); err == nil && len(b) == 32 {
		t.SHA256 = strings.ToLower(h)
	}
	t.Groups = d.strList(key+".groups", m["groups"], sub(raw, "groups"))
	t.Scopes = d.strList(key+".scopes", m["scopes"], sub(raw, "scopes"))
	return t
}

func (d *decoder) rule(key string, v, raw any) GatewayRule {
	var r GatewayRule
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		d.fail(key, "want a mapping with one key, allow or deny, got %s", got(raw))
		return r
	}
	effect := fields.Keys(m)[0]
	switch effect {
	case "allow":
		r.Allow = true
	case "deny":
	default:
		d.fail(key+"."+effect, "want allow or deny")
		return r
	}
	key += "." + effect
	raw = sub(raw, effect)
	body := d.section(key, m[effect], raw, knownRuleKeys)
	if body == nil {
		if d.err == nil {
			d.fail(key, "names nothing to match; write tools: [\"*\"] for a rule over every tool")
		}
		return r
	}
	r.Subjects = d.patterns(key+".subjects", body["subjects"], sub(raw, "subjects"))
	r.Groups = d.patterns(key+".groups", body["groups"], sub(raw, "groups"))
	r.Scopes = d.patterns(key+".scopes", body["scopes"], sub(raw, "scopes"))
	r.Servers = d.patterns(key+".servers", body["servers"], sub(raw, "servers"))
	r.Tools = d.patterns(key+".tools", body["tools"], sub(raw, "tools"))
	r.Prompts = d.patterns(key+".prompts", body["prompts"], sub(raw, "prompts"))
	r.Resources = d.patterns(key+".resources", body["resources"], sub(raw, "resources"))
	r.When = strings.TrimSpace(d.str(key+".when", body["when"], sub(raw, "when")))
	if lm := d.section(key+".limits", body["limits"], sub(raw, "limits"), knownLimitsKeys); lm != nil {
		r.Limits = d.limits(key+".limits", lm, sub(raw, "limits"), GatewayLimits{})
	}
	if len(r.Subjects)+len(r.Groups)+len(r.Scopes)+len(r.Servers)+len(r.Tools)+len(r.Prompts)+len(r.Resources) == 0 && r.When == "" && d.err == nil {
		d.fail(key, "names nothing to match; write tools: [\"*\"] for a rule over every tool")
	}
	return r
}

// patterns reads a list of globs (a single string is a list of one); an
// empty pattern, which matches nothing, is refused.
func (d *decoder) patterns(key string, v, raw any) []string {
	l := d.strList(key, v, raw)
	for i, p := range l {
		if strings.TrimSpace(p) == "" {
			d.fail(fmt.Sprintf("%s[%d]", key, i), "an empty pattern matches nothing; write the name, or * for any")
			return nil
		}
	}
	return l
}

func (d *decoder) limits(key string, m map[string]any, raw any, def GatewayLimits) GatewayLimits {
	return GatewayLimits{
		CallsPerMinute: d.count(key+".calls_per_minute", m["calls_per_minute"], sub(raw, "calls_per_minute"), def.CallsPerMinute, maxGatewayLimit),
		Concurrent:     d.count(key+".concurrent", m["concurrent"], sub(raw, "concurrent"), def.Concurrent, maxGatewayLimit),
	}
}

func (d *decoder) audit(m map[string]any, raw any) GatewayAudit {
	a := GatewayAudit{MaxSizeMB: DefaultAuditMaxSizeMB, Keep: DefaultAuditKeep}
	a.File = d.expandHome(strings.TrimSpace(d.str(gk("audit.file"), m["file"], sub(raw, "file"))))
	a.Stdout = d.boolish(gk("audit.stdout"), m["stdout"], sub(raw, "stdout"), false)
	switch {
	case a.File != "" && a.Stdout:
		d.fail(gk("audit"), "sets both file and stdout; keep one")
	case a.File == "" && !a.Stdout && d.err == nil:
		d.fail(gk("audit"), "says where the lines go with file: PATH or stdout: true")
	}
	if n := d.count(gk("audit.max_size_mb"), m["max_size_mb"], sub(raw, "max_size_mb"), DefaultAuditMaxSizeMB, 1<<20); n > 0 {
		a.MaxSizeMB = n
	} else if d.err == nil {
		d.fail(gk("audit.max_size_mb"), "want at least 1 megabyte")
	}
	a.Keep = d.count(gk("audit.keep"), m["keep"], sub(raw, "keep"), DefaultAuditKeep, 10000)
	a.Redact = d.boolish(gk("audit.redact"), m["redact"], sub(raw, "redact"), true)
	return a
}

// isolation reads a server entry's isolation key: shared or per_user, ""
// when not set (shared).
func (d *decoder) isolation(v, raw any) string {
	switch s := strings.ToLower(strings.TrimSpace(d.str("isolation", v, raw))); s {
	case "", IsolationShared, IsolationPerUser:
		return s
	default:
		d.fail("isolation", "want shared or per_user, got %s", got(raw))
		return ""
	}
}

// PerUser reports whether `hermes mcp gateway` runs one process of the
// server per person (isolation: per_user).
func (s *Server) PerUser() bool { return s.Isolation == IsolationPerUser }
