package importer

import (
	"net/url"
	"strings"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
	"github.com/hermes-agent/hermes/host/toolview"
)

// Secret is a value that goes to $HERMES_HOME/.env instead of config.yaml,
// where the entry refers to it as ${Var}.
type Secret struct {
	// Var is the .env variable: MCP_<NAME>_<KEY> (VarName).
	Var string
	// Value is the secret itself. Never print it.
	Value string
	// From says where it was found: "env GITHUB_TOKEN", "header
	// Authorization", "oauth clientSecret".
	From string
}

// secretWords are the name parts (split at "_", "-" and ".") that make a
// variable or header name a secret's.
var secretWords = map[string]bool{
	"TOKEN": true, "KEY": true, "SECRET": true, "PASSWORD": true, "PASSWD": true, "PASS": true, "PWD": true,
	"AUTH": true, "AUTHORIZATION": true, "CREDENTIAL": true, "CREDENTIALS": true, "COOKIE": true,
	"APIKEY": true, "PAT": true, "BEARER": true, "PRIVATE": true, "SESSION": true,
}

// secretSuffixes make a name a secret's when one of its parts ends in them
// (ACCESSTOKEN, CLIENTSECRET, DBPASSWORD).
var secretSuffixes = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIALS"}

// IsSecretName reports whether an environment variable or HTTP header
// called name holds a secret: one of its parts (split at "_", "-", ".") is
// TOKEN, KEY, SECRET, PASSWORD, AUTH, AUTHORIZATION, CREDENTIALS, COOKIE,
// APIKEY, PAT, ... or ends in TOKEN, SECRET, PASSWORD or APIKEY, in any
// case. GITHUB_PERSONAL_ACCESS_TOKEN, X-Api-Key and Authorization are;
// GIT_AUTHOR_NAME and KEYBOARD are not.
func IsSecretName(name string) bool {
	parts := strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
	for _, p := range parts {
		if secretWords[p] {
			return true
		}
		for _, s := range secretSuffixes {
			if strings.HasSuffix(p, s) {
				return true
			}
		}
	}
	return false
}

// looksSecret reports whether a value has the shape of a secret whatever
// its name: a GitHub or OpenAI-style key, "Bearer <token>", name=value
// with a secret's name (toolview.Redact would hide it).
func looksSecret(v string) bool {
	if toolview.Redact(v) != v {
		return true
	}
	// A URL with a password in it (postgres://user:pw@host/db).
	if i := strings.Index(v, "://"); i > 0 {
		if u, err := url.Parse(strings.TrimSpace(v)); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && pw != "" && !strings.HasPrefix(pw, "${") {
				return true
			}
		}
	}
	return false
}

var refRE = lazyregexp.New(`\$\{[^}]*\}`)

// literalPart is v without its ${...} references and a leading auth scheme
// ("Bearer ", "Basic ", "token "), trimmed: what of v is written out.
func literalPart(v string) string {
	s := strings.TrimSpace(refRE.ReplaceAllString(v, ""))
	if scheme, rest, ok := strings.Cut(s, " "); ok && isScheme(scheme) {
		s = strings.TrimSpace(rest)
	} else if isScheme(s) {
		s = ""
	}
	return s
}

func isScheme(s string) bool {
	switch strings.ToLower(s) {
	case "bearer", "basic", "token", "bot", "apikey":
		return true
	}
	return false
}

var nonVarChars = lazyregexp.New(`[^A-Z0-9_]+`)

// VarName is the .env variable for key of server name: MCP_<NAME>_<KEY>,
// both upper-cased with every run of characters other than letters,
// digits and "_" turned into "_" (the rule of 'hermes mcp add').
func VarName(name, key string) string {
	n := strings.Trim(nonVarChars.ReplaceAllString(strings.ToUpper(name), "_"), "_")
	k := strings.Trim(nonVarChars.ReplaceAllString(strings.ToUpper(key), "_"), "_")
	if k == "" {
		k = "SECRET"
	}
	return "MCP_" + n + "_" + k
}

// OnlyReferences reports whether v writes out nothing of a secret: it is
// made of ${...} references alone, optionally after an auth scheme
// ("Bearer ${TOKEN}"). Such a value can be shown as it is; any other value
// of an env variable or header must be masked.
func OnlyReferences(v string) bool { return literalPart(v) == "" }

// MoveSecret is what an entry keeps of the value val of the environment
// variable or header key of server (header says which), by the rules import
// uses: when key names a secret or val looks like one, val goes to a Secret
// and written is its ${VAR} reference (a header's auth scheme, "Bearer ",
// stays written out); otherwise written is val and sec is nil. A value
// already made of ${...} references is kept as written, with a note when it
// mixes them with written-out text.
func MoveSecret(server, key, val string, header bool) (written string, sec *Secret, notes []string) {
	m := &mapper{s: &Server{Name: server}}
	from, scheme := "env "+key, ""
	if header {
		from = "header " + key
		if s, rest, ok := strings.Cut(strings.TrimSpace(val), " "); ok && isScheme(s) && strings.TrimSpace(rest) != "" {
			scheme, val = s+" ", strings.TrimSpace(rest)
		}
	}
	written = m.secret(key, val, from, scheme)
	if len(m.s.Secrets) > 0 {
		sec = &m.s.Secrets[0]
	}
	return written, sec, m.s.Notes
}

// MaskArgv is argv as it may be shown: a word that looks like a secret
// (a key's shape, NAME=VALUE with a secret's name, a URL with a
// password) has its secret part masked, and so has the word after a flag
// named like a secret (--api-key X, --token=X). ${VAR} references stay
// as they are: they show a name, never a value. argv is not changed.
func MaskArgv(argv []string) []string {
	out := make([]string, len(argv))
	for i, w := range argv {
		out[i] = w
		switch {
		case OnlyReferences(w):
		case i > 0 && secretFlag(argv[i-1]) && !strings.Contains(argv[i-1], "="):
			out[i] = maskWord(w)
		case strings.HasPrefix(w, "-") && strings.Contains(w, "=") && secretFlag(w):
			name, val, _ := strings.Cut(w, "=")
			out[i] = name + "=" + maskWord(val)
		case looksSecret(w):
			if name, val, ok := strings.Cut(w, "="); ok && name != "" && !strings.ContainsAny(name, " :/") {
				out[i] = name + "=" + maskWord(val)
			} else {
				out[i] = toolview.Redact(w)
				if out[i] == w {
					out[i] = maskWord(w)
				}
			}
		}
	}
	return out
}

// secretFlag reports whether w is a flag ("--api-key", "-token=...") whose
// name is a secret's.
func secretFlag(w string) bool {
	if !strings.HasPrefix(w, "-") {
		return false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
	return name != "" && IsSecretName(name)
}

// maskWord hides a value, keeping a ${VAR} reference visible.
func maskWord(v string) string {
	if v == "" || OnlyReferences(v) {
		return v
	}
	return "***"
}
