package install

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hermes-agent/hermes/host/catalog"
)

// maxPluginBytes bounds the plugin binary an install hashes.
const maxPluginBytes = 1 << 30

// pluginBinary checks the plugin binary a bootstrap produced: a regular,
// executable file inside dir (no path or symlink leads out of it), named
// hermes-<kind>-<name>, with the manifest's sha256 when it pins one. It
// returns the binary's absolute path and its sha256.
func pluginBinary(dir string, p *catalog.Plugin) (path, sum string, err error) {
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
