package session

import "github.com/hermes-agent/hermes/host/config"

// ChildEnv returns the environment of a stdio server: config.ChildEnv,
// the one rule for what a child of hermes inherits.
func ChildEnv(serverEnv map[string]string) []string { return config.ChildEnv(serverEnv) }
