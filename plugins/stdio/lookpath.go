package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/hermes-agent/hermes/sdk"
)

// envValue returns the value of key in a KEY=value list.
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// lookPath finds command on the child's PATH (not the plugin's), so the
// server runs exactly what its own environment names.
func lookPath(command, pathEnv, cwd string) (string, error) {
	if command == "" {
		return "", sdk.NewError(sdk.CodeConfig, "no command given; set 'command' in config.yaml")
	}
	if strings.Contains(command, "/") {
		p := command
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		if isExecutable(p) {
			return p, nil
		}
		return "", notFound(command, "")
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, command)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", notFound(command, pathEnv)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// notFound builds the missing-executable error with a hint for well-known
// launchers.
func notFound(command, pathEnv string) error {
	hint := "install it or set 'command' to its full path"
	switch filepath.Base(command) {
	case "npx", "npm", "node":
		hint = "install Node.js (it provides node, npm and npx) or set 'command' to its full path"
	case "uvx", "uv":
		hint = "install uv (https://docs.astral.sh/uv/) or set 'command' to its full path"
	case "python", "python3", "pip":
		hint = "install Python 3 or set 'command' to its full path"
	case "docker", "podman":
		hint = "install " + filepath.Base(command) + " or set 'command' to its full path"
	}
	where := "on PATH"
	if strings.Contains(command, "/") {
		where = "(no such executable file)"
	}
	_ = pathEnv
	return sdk.NewError(sdk.CodeNotFound, "missing executable '%s' %s; %s", command, where, hint)
}
