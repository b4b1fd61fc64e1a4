package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hermes-agent/hermes/sdk"
)

// authPrivateKeyJWT is RFC 7523 §2.2 client authentication: the client
// signs a short-lived JWT with its private key.
const authPrivateKeyJWT = "private_key_jwt"

// clientAssertionType is the client_assertion_type of a JWT client
// assertion (RFC 7523 §2.2).
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid: short, as
// RFC 7523 §3 advises (the authorization server keeps its jti until then).
const assertionLifetime = 2 * time.Minute

// signingKey is the client's private key for private_key_jwt
// (oauth.private_key_file), with the algorithm it signs with.
type signingKey struct {
	key crypto.Signer
	alg jose.SignatureAlgorithm
	kid string
}

// maxKeyFile bounds oauth.private_key_file.
const maxKeyFile = 64 << 10

// loadSigningKey reads a PEM private key (PKCS#8, SEC 1 EC or PKCS#1 RSA)
// from path, which only its owner may read (0600), and settles the
// algorithm: alg when given (it must fit the key), else the key's own
// (ES256 for P-256, ES384 for P-384, ES512 for P-521, RS256 for RSA,
// EdDSA for Ed25519).
func loadSigningKey(path, alg, kid string) (*signingKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, sdk.NewError(sdk.CodeConfig, "oauth.private_key_file: %v", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, sdk.NewError(sdk.CodeConfig, "oauth.private_key_file %s is readable by others (mode %04o); make it the owner's alone: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if fi.Size() > maxKeyFile {
		return nil, sdk.NewError(sdk.CodeConfig, "oauth.private_key_file %s is over the 64 KiB a PEM key needs", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, sdk.NewError(sdk.CodeConfig, "oauth.private_key_file: %v", err)
	}
	key, err := parsePrivateKey(raw)
	if err != nil {
		return nil, sdk.NewError(sdk.CodeConfig, "oauth.private_key_file %s: %v", path, err)
	}
	fits := keyAlgorithms(key)
	if len(fits) == 0 {
		return nil, sdk.NewError(sdk.CodeConfig, "oauth.private_key_file %s: a %T cannot sign client assertions; use an EC (P-256, P-384, P-521), RSA or Ed25519 key", path, key.Public())
	}
	sk := &signingKey{key: key, alg: fits[0], kid: kid}
	if alg != "" {
		if !slices.Contains(fits, jose.SignatureAlgorithm(alg)) {
			return nil, sdk.NewError(sdk.CodeConfig, "oauth.signing_alg %s does not fit the key in %s; it signs with %s", alg, path, joinAlgs(fits))
		}
		sk.alg = jose.SignatureAlgorithm(alg)
	}
	return sk, nil
}

// parsePrivateKey reads the first private key block of a PEM file.
func parsePrivateKey(raw []byte) (crypto.Signer, error) {
	for rest := raw; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no PEM private key in it (want PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)")
		}
		var k any
		var err error
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the %s block does not parse: %w", b.Type, err)
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("a %T cannot sign", k)
		}
		return s, nil
	}
}

// keyAlgorithms lists the JWS algorithms key can sign with, its default
// first.
func keyAlgorithms(key crypto.Signer) []jose.SignatureAlgorithm {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return []jose.SignatureAlgorithm{jose.ES256}
		case elliptic.P384():
			return []jose.SignatureAlgorithm{jose.ES384}
		case elliptic.P521():
			return []jose.SignatureAlgorithm{jose.ES512}
		}
	case *rsa.PrivateKey:
		return []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}
	case ed25519.PrivateKey:
		return []jose.SignatureAlgorithm{jose.EdDSA}
	}
	return nil
}

func joinAlgs(algs []jose.SignatureAlgorithm) string {
	s := make([]string, len(algs))
	for i, a := range algs {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

// clientAssertion signs the JWT a private_key_jwt client authenticates
// with: iss and sub the client_id, aud the authorization server's issuer
// identifier, a random jti, issued now and valid assertionLifetime.
func (k *signingKey) clientAssertion(clientID, audience string) (string, error) {
	opts := (&jose.SignerOptions{}).WithType("JWT")
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.key, KeyID: k.kid}}, opts)
	if err != nil {
		return "", fmt.Errorf("private_key_jwt: %w", err)
	}
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", fmt.Errorf("private_key_jwt: %w", err)
	}
	now := clock()
	claims := jwt.Claims{
		Issuer: clientID, Subject: clientID, Audience: jwt.Audience{audience},
		ID: hex.EncodeToString(jti[:]), IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(assertionLifetime)),
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("private_key_jwt: signing the client assertion: %w", err)
	}
	return s, nil
}

// addClientAssertion authenticates c in form with a fresh client
// assertion (RFC 7523 §2.2): one per request, as the jti must be.
func addClientAssertion(c client, form url.Values) error {
	if c.Key == nil {
		return errors.New("private_key_jwt: no private key (oauth.private_key_file)")
	}
	a, err := c.Key.clientAssertion(c.ID, c.Audience)
	if err != nil {
		return err
	}
	form.Set("client_id", c.ID)
	form.Set("client_assertion_type", clientAssertionType)
	form.Set("client_assertion", a)
	return nil
}

// signingAlgsSupported reads token_endpoint_auth_signing_alg_values_supported
// of the authorization server's metadata document.
func signingAlgsSupported(rawMeta []byte) []string {
	var m struct {
		Algs []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	}
	if json.Unmarshal(rawMeta, &m) != nil {
		return nil
	}
	return m.Algs
}

// Bounds of a workload's assertion (oauth.assertion_file or
// oauth.assertion_command): a JWT is a few KiB.
const (
	maxAssertion     = 64 << 10
	assertionTimeout = 30 * time.Second
)

// assertionSource is where a grant's assertion comes from: a file read at
// each token request (a Kubernetes projected service-account token
// rotates), or a command run without a shell whose standard output is the
// JWT.
type assertionSource struct {
	File    string
	Command []string
	// timeout bounds the command; tests shorten it.
	timeout time.Duration
}

func (s assertionSource) configured() bool { return s.File != "" || len(s.Command) > 0 }

// read returns the assertion, trimmed of surrounding space.
func (s assertionSource) read(ctx context.Context) (string, error) {
	var raw []byte
	switch {
	case s.File != "":
		f, err := os.Open(s.File)
		if err != nil {
			return "", fmt.Errorf("oauth.assertion_file: %w", err)
		}
		defer f.Close()
		raw, err = io.ReadAll(io.LimitReader(f, maxAssertion+1))
		if err != nil {
			return "", fmt.Errorf("oauth.assertion_file %s: %w", s.File, err)
		}
		if len(raw) > maxAssertion {
			return "", fmt.Errorf("oauth.assertion_file %s is over the %d KiB limit of an assertion", s.File, maxAssertion>>10)
		}
	case len(s.Command) > 0:
		var err error
		if raw, err = s.run(ctx); err != nil {
			return "", err
		}
	default:
		return "", errors.New("no assertion source: set oauth.assertion_file or oauth.assertion_command")
	}
	a := strings.TrimSpace(string(raw))
	if a == "" {
		return "", fmt.Errorf("%s gave an empty assertion", s.what())
	}
	if !printable(a) {
		return "", fmt.Errorf("%s gave an assertion with characters a JWT cannot hold", s.what())
	}
	return a, nil
}

func (s assertionSource) what() string {
	if s.File != "" {
		return "oauth.assertion_file " + s.File
	}
	return "oauth.assertion_command " + s.Command[0]
}

// capped is a writer that keeps up to max bytes; past them it notes the
// excess and calls stop (once).
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
	stop func()
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		if !c.over && c.stop != nil {
			c.stop()
		}
		c.over = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

// run runs the assertion command, bounded in time (assertionTimeout) and
// output (maxAssertion): a command that hangs or prints too much is cut
// with an error naming the limit. Its standard error is shown, one line
// cut short, only when it fails.
func (s assertionSource) run(ctx context.Context) ([]byte, error) {
	timeout := s.timeout
	if timeout <= 0 {
		timeout = assertionTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Command[0], s.Command[1:]...)
	// Output past the limit stops the command at once.
	out, errOut := &capped{max: maxAssertion, stop: cancel}, &capped{max: 4 << 10}
	cmd.Stdout, cmd.Stderr, cmd.Stdin = out, errOut, nil
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	switch {
	case out.over:
		return nil, fmt.Errorf("oauth.assertion_command %s printed over the %d KiB limit of an assertion; it was stopped", s.Command[0], maxAssertion>>10)
	case ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("oauth.assertion_command %s did not finish within %s; it was stopped", s.Command[0], timeout)
	case err != nil:
		msg := fmt.Sprintf("oauth.assertion_command %s: %v", s.Command[0], err)
		if line := lastLine(errOut.buf.String()); line != "" {
			msg += ": " + shown(line, 200)
		}
		return nil, errors.New(msg)
	}
	return out.buf.Bytes(), nil
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
