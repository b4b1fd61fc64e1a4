package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// ModelKey is the top-level key of config.yaml holding the model endpoint
// settings (base_url, default, api_key_env and the limits), which
// host/model reads.
const ModelKey = "model"

// LoadModel returns the model: block of <home>/config.yaml with ${VAR}s
// resolved, and the file's path for errors; a missing file or key gives a
// nil block. The values are host/model's to check.
func LoadModel(home string) (map[string]any, string, error) {
	path := filepath.Join(home, File)
	src, err := readLimited(path, MaxConfigBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	block, err := decodeTopMapping(path, src, ModelKey, "a mapping of settings (base_url, default, api_key_env)")
	if err != nil || block == nil {
		return nil, path, err
	}
	dotenv, err := LoadDotEnv(home)
	if err != nil {
		return nil, path, err
	}
	lookup := varLookup(dotenv)
	out := make(map[string]any, len(block))
	for _, it := range block {
		key := keyString(it.Key)
		var missing []string
		v := plain(interpolateValue(it.Value, lookup, &missing))
		if len(missing) > 0 {
			return nil, path, fmt.Errorf("%s: %s.%s needs ${%s}: set it in the environment or in %s", path, ModelKey, key, missing[0], filepath.Join(home, DotEnvFile))
		}
		out[key] = v
	}
	return out, path, nil
}
