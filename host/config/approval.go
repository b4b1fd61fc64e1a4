package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// ApprovalKey is the top-level key of config.yaml holding the approval
// settings of tool calls (require, timeout), which host/approval reads.
const ApprovalKey = "approval"

// LoadApproval returns the approval: block of <home>/config.yaml with
// ${VAR}s resolved, and the file's path for errors; a missing file or key
// gives a nil block. The values are host/approval's to check.
func LoadApproval(home string) (map[string]any, string, error) {
	path := filepath.Join(home, File)
	src, err := readLimited(path, MaxConfigBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	block, err := decodeTopMapping(path, src, ApprovalKey, "a mapping of settings (require, timeout)")
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
			return nil, path, fmt.Errorf("%s: %s.%s needs ${%s}: set it in the environment or in %s", path, ApprovalKey, key, missing[0], filepath.Join(home, DotEnvFile))
		}
		out[key] = v
	}
	return out, path, nil
}
