package config

import (
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io/fs"
)

// RootsKey is the top-level key of config.yaml listing the folders offered
// to servers as roots, besides the working folder.
const RootsKey = "roots"

// MaxRoots bounds the entries of roots:.
const MaxRoots = 100

// RootEntry is one entry of roots: as written (${VAR}s resolved): a path
// (maybe "~/..." or relative) or a file:// URI, and a name or "".
type RootEntry struct {
	Path, URI, Name string
}

// LoadRoots reads the roots: list of <home>/config.yaml; a missing file or
// key gives none. Each entry is a string (a path, or a file:// URI) or a
// mapping with path (or uri) and name. A wrong entry is an error naming it.
// A ${VAR} is looked up in env (the run's environment, as LoadEnv's; nil
// is the process's), then in <home>/.env.
func LoadRoots(home string, env func(string) (string, bool)) ([]RootEntry, error) {
	path := homedir.Dir(home).Config()
	src, err := readLimited(path, MaxConfigBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	value, err := decodeTopValue(path, src, RootsKey)
	if err != nil {
		return nil, err
	}
	if value == nil {
		return nil, nil
	}
	list, ok := value.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: %s must be a list of folders, got %s; fix the file", path, RootsKey, typeName(value))
	}
	if len(list) > MaxRoots {
		return nil, fmt.Errorf("%s: %s lists %d folders, more than the %d hermes accepts; list fewer", path, RootsKey, len(list), MaxRoots)
	}
	dotenv, err := LoadDotEnv(home)
	if err != nil {
		return nil, err
	}
	lookup := varLookupEnv(env, dotenv)
	out := make([]RootEntry, 0, len(list))
	for i, it := range list {
		var missing []string
		v := plain(interpolateValue(it, lookup, &missing))
		where := fmt.Sprintf("%s: %s[%d]", path, RootsKey, i)
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s needs ${%s}: set it in the environment or in %s", where, missing[0], homedir.Dir(home).DotEnv())
		}
		var e RootEntry
		switch t := v.(type) {
		case string:
			e.Path = t
		case map[string]any:
			for k, x := range t {
				s, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("%s.%s: want a string, got %s; fix the file", where, k, got(x))
				}
				switch k {
				case "path":
					e.Path = s
				case "uri":
					e.URI = s
				case "name":
					e.Name = s
				default:
					return nil, fmt.Errorf("%s: unknown key %q (path, uri, name); fix the file", where, k)
				}
			}
		default:
			return nil, fmt.Errorf("%s: want a folder or a mapping of path and name, got %s; fix the file", where, got(v))
		}
		if (e.Path == "") == (e.URI == "") {
			return nil, fmt.Errorf("%s: give exactly one of path or uri; fix the file", where)
		}
		out = append(out, e)
	}
	return out, nil
}
