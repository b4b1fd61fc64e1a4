package catalog

import (
	"fmt"
	"path"
	"strings"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// Registries of a Pin.
const (
	// RegistryNPM: a package of the npm registry, run by npx, bunx or pnpx.
	RegistryNPM = "npm"
	// RegistryPyPI: a package of PyPI, run by uvx or pipx run.
	RegistryPyPI = "pypi"
)

// Pin is one exact package version a stdio entry runs through a launcher.
type Pin struct {
	// Registry is RegistryNPM or RegistryPyPI.
	Registry string
	// Package and Version are as written ("@scope/pkg", "1.2.3").
	Package, Version string
}

func (p Pin) String() string {
	if p.Registry == RegistryPyPI {
		return p.Package + "==" + p.Version
	}
	return p.Package + "@" + p.Version
}

// exactVersion is a version with no range or wildcard: dot-separated
// numbers, then optionally a PEP 440 pre-, post- or dev-release part and a
// semver pre-release or build suffix.
var exactVersion = lazyregexp.New(`^[0-9]+(\.[0-9]+)*((a|b|rc|\.post|\.dev)[0-9]+)?([-+][0-9A-Za-z][0-9A-Za-z.+-]*)?$`)

// npmLaunchers and pypiLaunchers run a package named on their command line.
var (
	npmLaunchers  = map[string]bool{"npx": true, "bunx": true, "pnpx": true}
	pypiLaunchers = map[string]bool{"uvx": true, "pipx": true}
)

// npm and uv flags that take the next word as their value.
var (
	npmValueFlags = map[string]bool{"-p": true, "--package": true, "-c": true, "--call": true, "--registry": true, "--cache": true, "--userconfig": true}
	uvxValueFlags = map[string]bool{"--from": true, "--with": true, "--python": true, "-p": true, "--index": true, "--index-url": true, "--extra-index-url": true, "--with-requirements": true, "--cache-dir": true}
)

// Pins returns the package versions m runs, and what is not pinned
// exactly by the catalog's policy (docs/CATALOG.md): a stdio server runs
// either a launcher with one exact version (npx pkg@X.Y.Z, uvx
// pkg==X.Y.Z) or a program inside its install folder, whose clone is
// pinned to a commit. transport.version, when set, must be that version.
// An http server runs nothing here and has nothing to pin.
func (m *Manifest) Pins() (pins []Pin, problems []string) {
	t := m.Transport
	if t.Type != "stdio" {
		return nil, nil
	}
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	launcher := path.Base(t.Command)
	switch {
	case npmLaunchers[launcher]:
		pkg := launcherPackage(t.Args, npmValueFlags, map[string]bool{"-p": true, "--package": true})
		if pkg == "" {
			bad("%s runs no package; name it as pkg@X.Y.Z", launcher)
			break
		}
		name, version := splitNPM(pkg)
		if !exactVersion.MatchString(version) {
			bad("%s %s is not pinned exactly; write %s@X.Y.Z", launcher, pkg, name)
			break
		}
		pins = append(pins, Pin{Registry: RegistryNPM, Package: name, Version: version})
	case pypiLaunchers[launcher]:
		args := t.Args
		if launcher == "pipx" {
			if len(args) == 0 || args[0] != "run" {
				bad("pipx is used only as pipx run pkg==X.Y.Z")
				break
			}
			args = args[1:]
		}
		pkg := launcherPackage(args, uvxValueFlags, map[string]bool{"--from": true, "--spec": true})
		if pkg == "" {
			bad("%s runs no package; name it as pkg==X.Y.Z", launcher)
			break
		}
		name, version, ok := strings.Cut(pkg, "==")
		if !ok || name == "" || !exactVersion.MatchString(version) || strings.ContainsAny(name, "<>=!~;[ ") {
			base := name
			if i := strings.IndexAny(base, "<>=!~;[ "); i >= 0 {
				base = base[:i]
			}
			bad("%s %s is not pinned exactly; write %s==X.Y.Z", launcher, pkg, base)
			break
		}
		pins = append(pins, Pin{Registry: RegistryPyPI, Package: name, Version: version})
	case strings.HasPrefix(t.Command, installDirRef+"/"):
		if m.Install == nil {
			bad("%s runs from the install folder, and there is no install block", t.Command)
		}
	default:
		bad("command %s is neither a pinned launcher (npx pkg@X.Y.Z, uvx pkg==X.Y.Z) nor a program inside the install folder", t.Command)
	}
	if t.Version != "" && len(pins) == 1 && pins[0].Version != t.Version {
		bad("transport.version %s is not the version run, %s", t.Version, pins[0].Version)
	}
	return pins, problems
}

// launcherPackage is the package a launcher runs: the value of one of
// pkgFlags, else its first word that is not a flag.
func launcherPackage(args []string, valueFlags, pkgFlags map[string]bool) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, value, hasValue := strings.Cut(a, "=")
		if pkgFlags[flag] {
			if hasValue {
				return value
			}
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		if strings.HasPrefix(a, "-") {
			if valueFlags[flag] && !hasValue {
				i++
			}
			continue
		}
		return a
	}
	return ""
}

// splitNPM splits "@scope/pkg@1.2.3" or "pkg@1.2.3" at the version.
func splitNPM(spec string) (name, version string) {
	at := strings.LastIndex(spec, "@")
	if at <= 0 {
		return spec, ""
	}
	return spec[:at], spec[at+1:]
}
