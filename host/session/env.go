package session

import (
	"os"
	"sort"
	"strings"
)

// safeEnvNames are the host variables a stdio server inherits (SPEC §2).
var safeEnvNames = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LANG": true, "LC_ALL": true,
	"TERM": true, "SHELL": true, "TMPDIR": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true,
}

// proxyEnvNames are matched case-insensitively.
var proxyEnvNames = map[string]bool{"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true}

// ChildEnv returns the environment of a stdio server: the safe baseline of
// the host's environment plus the server's own env (which wins), sorted so
// the result is stable. Nothing else of the host leaks in.
func ChildEnv(serverEnv map[string]string) []string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if safeEnvNames[k] || strings.HasPrefix(k, "XDG_") || proxyEnvNames[strings.ToUpper(k)] {
			m[k] = v
		}
	}
	for k, v := range serverEnv {
		m[k] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
