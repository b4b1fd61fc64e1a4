package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/sdk/sandboxpath"
)

// maxRepoEntries bounds the entries checkRepoLinks looks at: far more than
// any MCP server's repository holds.
const maxRepoEntries = 1_000_000

// checkRepoLinks refuses a cloned repository in dir (its install folder)
// that holds a symbolic link leading out of dir, followed as the kernel
// would (through other links, ".." after a link). Such a link would let an
// innocent-looking path of the manifest (writable: ${INSTALL_DIR}/data)
// name $HERMES_HOME or anything else. The error names the link as it sits
// in the repository and its target.
func checkRepoLinks(name, dir string) error {
	root, err := sandboxpath.Resolve(dir)
	if err != nil {
		return fmt.Errorf("resolve the install folder of '%s': %w", name, err)
	}
	n := 0
	errStop := errors.New("stop")
	var refusal error
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxRepoEntries {
			refusal = fmt.Errorf("the repository of '%s' holds more than %d entries; it was not installed", name, maxRepoEntries)
			return errStop
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		r, rerr := sandboxpath.Resolve(filepath.Join(root.Path, rel))
		switch {
		case rerr != nil:
			refusal = fmt.Errorf("the repository of '%s' has a symbolic link %s -> %s that cannot be resolved (%v), so it may leave its install folder; it was not installed: ask its authors to remove the link",
				name, sandboxpath.Show(filepath.ToSlash(rel)), sandboxpath.Show(target), errors.Unwrap(rerr))
		case !sandboxpath.Within(r.Path, root.Path):
			refusal = fmt.Errorf("the repository of '%s' has a symbolic link %s -> %s that leaves its install folder (to %s); it was not installed: a catalog repository may only link inside itself, ask its authors to remove the link",
				name, sandboxpath.Show(filepath.ToSlash(rel)), sandboxpath.Show(target), sandboxpath.Show(r.Path))
		default:
			return nil
		}
		return errStop
	})
	if refusal != nil {
		return refusal
	}
	if err != nil {
		return fmt.Errorf("check the links of the repository of '%s': %w", name, err)
	}
	return nil
}

// checkSandboxPaths resolves the manifest's sandbox paths in the clone, as
// every start of the server will ("~" as $HOME of env, the run's
// environment), and refuses one the start would refuse (a writable path
// into $HERMES_HOME home or a deny path, or carried out of the install
// folder dir by a link), before the bootstrap runs.
func checkSandboxPaths(m *catalog.Manifest, o Options, home, dir string, env func(string) (string, bool)) error {
	if m.Sandbox == nil || o.NoSandbox {
		return nil
	}
	s, err := m.SandboxIn(dir, env)
	if err != nil {
		return fmt.Errorf("the sandbox of '%s' is not valid: %s", m.Name, err)
	}
	if err := s.CheckPaths(home, dir); err != nil {
		return fmt.Errorf("the sandbox of '%s' is refused: %s; it was not installed", m.Name, catalog.ShowRefs(err.Error()))
	}
	return nil
}
