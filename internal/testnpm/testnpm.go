// Package testnpm finds the npm MCP servers that tests run: the official
// example servers, pinned in scripts/npm-deps.sh and installed by
// `make npm-deps` into the git-ignored .npm-deps/ folder at the repository
// root. It owns the one rule for a server that is not installed: the test
// is skipped on a developer's machine, and fails when CI=true, because CI
// must have run the install step and a silent skip would hide that it did
// not. It belongs to tests only; nothing in a shipped binary imports it.
package testnpm

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/internal/testbin"
)

// InstallCommand installs every npm package the tests use.
const InstallCommand = "make npm-deps"

// Server returns the node executable and the entry script of the installed
// npm package pkg (for example "@modelcontextprotocol/server-everything"):
// the file its package.json names as its command ("bin"), or else its
// "main". Run it as node, script, args... When node or the package is
// missing the test is skipped, or fails under CI=true.
func Server(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, fmt.Sprintf("node is not installed (Node.js 20 or newer is needed to run %s): %v", pkg, err))
		return "", ""
	}
	dir := filepath.Join(testbin.Root(), ".npm-deps", "node_modules", filepath.FromSlash(pkg))
	script, err = entryPoint(dir)
	if err != nil {
		missing(t, fmt.Sprintf("npm package %s is not installed in .npm-deps: %v", pkg, err))
		return "", ""
	}
	return node, script
}

// Package returns the node executable and the folder of the installed npm
// package pkg, for a library (such as an SDK) that a test's own script
// imports. The rule for a missing install is Server's.
func Package(t testing.TB, pkg string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, fmt.Sprintf("node is not installed (Node.js 20 or newer is needed to run %s): %v", pkg, err))
		return "", ""
	}
	dir = filepath.Join(testbin.Root(), ".npm-deps", "node_modules", filepath.FromSlash(pkg))
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		missing(t, fmt.Sprintf("npm package %s is not installed in .npm-deps: %v", pkg, err))
		return "", ""
	}
	return node, dir
}

// missing skips the test, or fails it under CI=true, saying how to install
// what is missing.
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true requires it: run %s", why, InstallCommand)
	} else {
		t.Skipf("%s; run %s to install it", why, InstallCommand)
	}
}

// entryPoint reads the package.json in dir and returns the absolute path of
// the script it runs: its only "bin" entry, or its "main".
func entryPoint(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	var manifest struct {
		Bin  json.RawMessage `json:"bin"`
		Main string          `json:"main"`
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		return "", fmt.Errorf("%s/package.json: %w", dir, err)
	}
	rel := manifest.Main
	var one string
	var many map[string]string
	switch {
	case json.Unmarshal(manifest.Bin, &one) == nil && one != "":
		rel = one
	case json.Unmarshal(manifest.Bin, &many) == nil && len(many) == 1:
		for _, v := range many {
			rel = v
		}
	}
	if rel == "" {
		return "", fmt.Errorf("%s/package.json names no single bin or main script", dir)
	}
	script := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(script); err != nil {
		return "", err
	}
	return script, nil
}
