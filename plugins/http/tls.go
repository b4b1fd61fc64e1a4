package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// tlsConfig turns the TLS settings into a tls.Config: certificates are
// verified (against the CA bundle ssl_verify names, if any) unless
// InsecureSkipVerify says ssl_verify: false; a client certificate is
// presented when set. A file that is missing or unusable is a config error
// naming the key and the file.
func tlsConfig(cfg transport.Config) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CABundle != "" {
		path := expandHome(cfg.CABundle)
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, fileError(cfg.Server, "ssl_verify", path, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, sdk.NewError(sdk.CodeConfig, "ssl_verify of server %q: %s holds no PEM certificate; point ssl_verify at a CA bundle", cfg.Server, path)
		}
		tc.RootCAs = pool
	}
	if cfg.InsecureSkipVerify {
		tc.InsecureSkipVerify = true //nolint:gosec // the user turned verification off with ssl_verify: false
	}
	switch {
	case cfg.ClientCert != "":
		certPath := expandHome(cfg.ClientCert)
		keyPath, keyName := certPath, "client_cert"
		if cfg.ClientKey != "" {
			keyPath, keyName = expandHome(cfg.ClientKey), "client_key"
		}
		if _, err := os.Stat(certPath); err != nil {
			return nil, fileError(cfg.Server, "client_cert", certPath, err)
		}
		if _, err := os.Stat(keyPath); err != nil {
			return nil, fileError(cfg.Server, keyName, keyPath, err)
		}
		cert, err := tls.LoadX509KeyPair(certPath, keyPath)
		if err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "client_cert of server %q: cannot load %s (key %s): %v; use a PEM certificate and its key (or one combined PEM)", cfg.Server, certPath, keyPath, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case cfg.ClientKey != "":
		return nil, sdk.NewError(sdk.CodeConfig, "client_key of server %q is set without client_cert; add client_cert or remove client_key", cfg.Server)
	}
	return tc, nil
}

func fileError(server, key, path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return sdk.NewError(sdk.CodeConfig, "%s of server %q: file %s does not exist; fix %s in config.yaml", key, server, path, key)
	}
	return sdk.NewError(sdk.CodeConfig, "%s of server %q: cannot read %s: %v; fix %s in config.yaml", key, server, path, err, key)
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
