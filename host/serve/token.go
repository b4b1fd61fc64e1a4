package serve

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"

	"github.com/hermes-agent/hermes/host/config"
)

// TokenVar is the .env variable holding the bearer token of
// `hermes mcp serve --http`.
const TokenVar = "HERMES_MCP_SERVE_TOKEN"

// MinTokenLength is the shortest token accepted: a guessable token would
// let any local process (or web page, through a rebinding) act as the
// user on their messaging platforms.
const MinTokenLength = 16

// EnsureToken returns the bearer token: HERMES_MCP_SERVE_TOKEN from the
// environment or from <home>/.env, or, when neither has one, a new random
// token saved to .env (created reports that; the caller shows it once).
func EnsureToken(home string) (token string, created bool, err error) {
	if v := os.Getenv(TokenVar); v != "" {
		return checkToken(v, "the environment")
	}
	dotenv, err := config.LoadDotEnv(home)
	if err != nil {
		return "", false, err
	}
	if v := dotenv[TokenVar]; v != "" {
		return checkToken(v, config.DotEnvFile)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, fmt.Errorf("make a token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(b[:])
	if err := config.SetDotEnv(home, TokenVar, token); err != nil {
		return "", false, fmt.Errorf("save the new %s: %w", TokenVar, err)
	}
	return token, true, nil
}

func checkToken(v, where string) (string, bool, error) {
	if len(v) < MinTokenLength {
		return "", false, fmt.Errorf("%s in %s is shorter than %d characters; remove it to have a strong one generated, or set a longer one", TokenVar, where, MinTokenLength)
	}
	return v, false, nil
}
