package config

// ApprovalKey is the top-level key of config.yaml holding the approval
// settings of tool calls (require, timeout), which host/approval reads.
const ApprovalKey = "approval"

// LoadApproval returns the approval: block of <home>/config.yaml with
// ${VAR}s resolved (from env, the run's environment, then .env; nil env is
// the process's), and the file's path for errors; a missing file or key
// gives a nil block. The values are host/approval's to check.
func LoadApproval(home string, env func(string) (string, bool)) (map[string]any, string, error) {
	return loadSettingsBlock(home, ApprovalKey, "a mapping of settings (require, timeout)", env)
}
