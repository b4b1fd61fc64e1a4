// Command hermes-auth-tokenfile is an example auth plugin: it sends the
// token a file holds (tokenfile: {path: ...} in the server entry) as a
// Bearer token, and reads the file again when the server refuses it.
// Build it as hermes-auth-tokenfile; a server entry with `auth: tokenfile`
// then uses it.
package main

import (
	"context"
	"os"
	"strings"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
)

func main() {
	auth.Serve(open)
}

func open(_ context.Context, cfg auth.Config) (auth.Authenticator, error) {
	path, _ := cfg.Settings["path"].(string)
	if path == "" {
		return nil, sdk.NewError(sdk.CodeConfig, "server %q: set tokenfile.path to the file holding the token", cfg.Server)
	}
	return &tokenFile{server: cfg.Server, path: path}, nil
}

type tokenFile struct {
	server, path string
}

// read returns the token, or "" when the file holds none.
func (f *tokenFile) read() (string, error) {
	b, err := os.ReadFile(f.path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", sdk.NewError(sdk.CodeConfig, "read the token file of %q: %v", f.server, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (f *tokenFile) Headers(context.Context, auth.HeadersRequest) (auth.Headers, error) {
	tok, err := f.read()
	if err != nil || tok == "" {
		return auth.Headers{}, err // no token: the request goes without
	}
	return auth.Headers{Headers: map[string]string{"Authorization": "Bearer " + tok}}, nil
}

// Challenge reads the file again; a token other than the refused one is
// worth a retry, and goes back with the answer.
func (f *tokenFile) Challenge(ctx context.Context, c auth.Challenge, _ auth.UI) (auth.Answer, error) {
	h, err := f.Headers(ctx, auth.HeadersRequest{Method: c.Method, URL: c.URL})
	if err != nil {
		return auth.Answer{}, err
	}
	if len(h.Headers) == 0 || c.Attempt > 1 {
		return auth.Answer{}, auth.LoginNeeded(f.server, "the token in "+f.path+" was refused")
	}
	return auth.Answer{Retry: true, Headers: h}, nil
}

func (f *tokenFile) Login(context.Context, auth.LoginOptions, auth.UI) (auth.Status, error) {
	return f.Status(context.Background())
}

func (f *tokenFile) Logout(context.Context) (auth.LogoutResult, error) {
	return auth.LogoutResult{Detail: "the token file is yours to delete"}, nil
}

func (f *tokenFile) Status(context.Context) (auth.Status, error) {
	tok, err := f.read()
	return auth.Status{Method: "tokenfile", LoggedIn: tok != "", Detail: "token read from " + f.path}, err
}
