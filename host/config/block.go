package config

import (
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io/fs"
)

// loadSettingsBlock returns the top-level mapping key of <home>/config.yaml
// (model:, approval:, ...) with ${VAR}s resolved from env (the run's
// environment, as LoadEnv's; nil is the process's) and .env, and the
// file's path for errors; a missing file or key gives a nil block. want
// names what the key holds, for the error of another shape. The values are
// the reading package's to check.
func loadSettingsBlock(home, key, want string, env func(string) (string, bool)) (map[string]any, string, error) {
	path := homedir.Dir(home).Config()
	src, err := readLimited(path, MaxConfigBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	block, err := decodeTopMapping(path, src, key, want)
	if err != nil || block == nil {
		return nil, path, err
	}
	dotenv, err := LoadDotEnv(home)
	if err != nil {
		return nil, path, err
	}
	lookup := varLookupEnv(env, dotenv)
	out := make(map[string]any, len(block))
	for _, it := range block {
		k := keyString(it.Key)
		var missing []string
		v := plain(interpolateValue(it.Value, lookup, &missing))
		if len(missing) > 0 {
			return nil, path, fmt.Errorf("%s: %s.%s needs ${%s}: set it in the environment or in %s", path, key, k, missing[0], homedir.Dir(home).DotEnv())
		}
		out[k] = v
	}
	return out, path, nil
}
