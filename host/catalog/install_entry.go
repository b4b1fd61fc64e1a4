package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
)

// installDirPlaceholder is the placeholder of a manifest for the entry's install
// folder.
const installDirPlaceholder = "${INSTALL_DIR}"

// maxPluginBytes bounds the plugin binary an install hashes.
const maxPluginBytes = 1 << 30

// installEntry translates m into the server entry an install saves, with
// ${INSTALL_DIR} replaced by dir: stdio command, args and env (each
// auth.env value wired in as NAME: ${NAME}), or http url and headers (an
// api_key entry sends its MCP_<NAME>_API_KEY as a bearer token), auth:
// oauth, enabled: true, and the manifest's sandbox unless noSandbox. The
// plugin: block is added once the binary was checked (withPlugin) and the
// tools: block once they were picked.
func installEntry(m *Manifest, dir string, noSandbox bool) (*config.ServerEntry, error) {
	if m.Install == nil && installUsesDir(m) {
		return nil, fmt.Errorf("manifest of '%s' references %s but has no install block", m.Name, installDirPlaceholder)
	}
	sub := func(s string) string { return strings.ReplaceAll(s, installDirPlaceholder, dir) }
	e := config.NewServerEntry()
	switch m.Transport.Type {
	case "stdio":
		e.Command(sub(m.Transport.Command))
		if len(m.Transport.Args) > 0 {
			args := make([]string, len(m.Transport.Args))
			for i, a := range m.Transport.Args {
				args[i] = sub(a)
			}
			e.Args(args...)
		}
		for _, k := range installSortedKeys(m.Transport.Env) {
			e.Env(k, sub(m.Transport.Env[k]))
		}
		for _, p := range m.Auth.Env {
			if _, set := m.Transport.Env[p.Name]; !set {
				e.Env(p.Name, "${"+p.Name+"}")
			}
		}
	case "http":
		e.URL(sub(m.Transport.URL))
		hasAuthorization := false
		for _, k := range installSortedKeys(m.Transport.Headers) {
			e.Header(k, sub(m.Transport.Headers[k]))
			hasAuthorization = hasAuthorization || strings.EqualFold(k, "Authorization")
		}
		if m.Auth.Type == "api_key" && !hasAuthorization {
			key := installAPIKeyVar(m.Name)
			for _, p := range m.Auth.Env {
				if p.Name == key {
					e.Header("Authorization", "Bearer ${"+key+"}")
				}
			}
		}
		if m.Auth.Type == "oauth" {
			e.Auth("oauth")
		}
	default:
		return nil, fmt.Errorf("manifest of '%s': transport.type %q is not stdio or http", m.Name, m.Transport.Type)
	}
	e.Enabled(true)
	if m.Sandbox != nil && !noSandbox {
		e.Set("sandbox", installSubst(m.Sandbox, sub))
	}
	return e, nil
}

// installUsesDir reports whether m refers to ${INSTALL_DIR} anywhere it
// would be substituted.
func installUsesDir(m *Manifest) bool {
	texts := append([]string{m.Transport.Command, m.Transport.URL}, m.Transport.Args...)
	for _, v := range m.Transport.Env {
		texts = append(texts, v)
	}
	for _, v := range m.Transport.Headers {
		texts = append(texts, v)
	}
	for _, s := range texts {
		if strings.Contains(s, installDirPlaceholder) {
			return true
		}
	}
	return false
}

// installSubst applies sub to every string inside a decoded YAML value.
func installSubst(v any, sub func(string) string) any {
	switch t := v.(type) {
	case string:
		return sub(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = installSubst(x, sub)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = installSubst(x, sub)
		}
		return out
	case []string:
		out := make([]string, len(t))
		for i, x := range t {
			out[i] = sub(x)
		}
		return out
	}
	return v
}

func installSortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var installNonKeyChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

// installAPIKeyVar is MCP_<NAME>_API_KEY, the bearer token variable of an http
// api_key entry (the rule of 'hermes mcp add').
func installAPIKeyVar(name string) string {
	return "MCP_" + strings.Trim(installNonKeyChars.ReplaceAllString(strings.ToUpper(name), "_"), "_") + "_API_KEY"
}

// pluginBinary checks the plugin binary a bootstrap produced: a regular,
// executable file inside dir (no path or symlink leads out of it), named
// hermes-<kind>-<name>, with the manifest's sha256 when it pins one. It
// returns the binary's absolute path and its sha256.
func pluginBinary(dir string, p *Plugin) (path, sum string, err error) {
	rel := filepath.FromSlash(p.Path)
	want := "hermes-" + p.Kind + "-" + p.Name
	switch {
	case p.Kind != "transport" && p.Kind != "auth":
		return "", "", fmt.Errorf("plugin.kind %q is not transport or auth", p.Kind)
	case !filepath.IsLocal(rel):
		return "", "", fmt.Errorf("plugin.path %q is not a path inside the install folder", p.Path)
	case filepath.Base(rel) != want:
		return "", "", fmt.Errorf("plugin.path %q must name the binary %s", p.Path, want)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", "", err
	}
	defer root.Close()
	fi, err := root.Lstat(rel)
	switch {
	case err != nil && os.IsNotExist(err):
		return "", "", fmt.Errorf("the bootstrap did not produce the plugin binary %s in %s", p.Path, dir)
	case err != nil:
		return "", "", fmt.Errorf("plugin binary %s: %w (it must stay inside the install folder)", p.Path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", "", fmt.Errorf("plugin binary %s is a symlink; it must be a regular file inside the install folder", p.Path)
	case !fi.Mode().IsRegular():
		return "", "", fmt.Errorf("plugin binary %s is not a regular file", p.Path)
	case fi.Mode().Perm()&0o111 == 0:
		return "", "", fmt.Errorf("plugin binary %s is not executable", p.Path)
	}
	f, err := root.Open(rel)
	if err != nil {
		return "", "", fmt.Errorf("plugin binary %s: %w", p.Path, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxPluginBytes+1))
	if err != nil {
		return "", "", fmt.Errorf("reading plugin binary %s: %w", p.Path, err)
	}
	if n > maxPluginBytes {
		return "", "", fmt.Errorf("plugin binary %s is over 1 GiB", p.Path)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	if pin := strings.ToLower(strings.TrimSpace(p.SHA256)); pin != "" && pin != sum {
		return "", "", fmt.Errorf("plugin binary sha256 %s does not match the manifest's pin %s", sum, pin)
	}
	return filepath.Join(dir, rel), sum, nil
}

// withPlugin records the checked plugin binary in the entry and makes the
// entry use it.
func withPlugin(e *config.ServerEntry, p *Plugin, path, sum string) {
	switch p.Kind {
	case "transport":
		e.Transport(p.Name)
	case "auth":
		e.Auth(p.Name)
	}
	e.Set("plugin", config.Map{{Key: "kind", Value: p.Kind}, {Key: "name", Value: p.Name}, {Key: "path", Value: path}, {Key: "sha256", Value: sum}})
}

// launchLine is what the entry runs or reaches, for the plan shown before
// installing.
func launchLine(m *Manifest, dir string) string {
	sub := func(s string) string { return strings.ReplaceAll(s, installDirPlaceholder, dir) }
	if m.Transport.Type == "http" {
		return "connects to " + sub(m.Transport.URL)
	}
	words := []string{installShellQuote(sub(m.Transport.Command))}
	for _, a := range m.Transport.Args {
		words = append(words, installShellQuote(sub(a)))
	}
	return strings.Join(words, " ")
}

var installPlainWordRE = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// installShellQuote quotes s as a POSIX shell word when it needs it.
func installShellQuote(s string) string {
	if installPlainWordRE.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
