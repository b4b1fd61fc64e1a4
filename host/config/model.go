package config

// ModelKey is the top-level key of config.yaml holding the model endpoint
// settings (base_url, default, api_key_env and the limits), which
// host/model reads.
const ModelKey = "model"

// LoadModel returns the model: block of <home>/config.yaml with ${VAR}s
// resolved (from env, the run's environment, then .env; nil env is the
// process's), and the file's path for errors; a missing file or key gives
// a nil block. The values are host/model's to check.
func LoadModel(home string, env func(string) (string, bool)) (map[string]any, string, error) {
	return loadSettingsBlock(home, ModelKey, "a mapping of settings (base_url, default, api_key_env)", env)
}
