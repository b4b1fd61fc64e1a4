package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/rawio"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// maxRedirects is how many redirects one request may follow.
const maxRedirects = 10

// newHTTPClient builds the client every request of one server goes through:
// its TLS settings, a dial bounded by connect_timeout, per-request headers
// from the host when cfg.DynamicHeaders is set, and redirects that never
// carry credentials to another origin. It sets no overall timeout: the
// long-lived GET and SSE streams must survive; requests are bounded by their
// context instead.
func newHTTPClient(cfg transport.Config, origin *url.URL, host transport.Host) (*http.Client, error) {
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = tc
	// A zero connect_timeout leaves the dial and the TLS handshake bounded
	// by the request's context only.
	// Connections are read and written with raw system calls (sdk/rawio):
	// through package net, the first read or write after an idle spell
	// wakes the runtime's monitor thread, which then polls every 20 µs
	// until the process idles again; between one host message and the
	// next that is every exchange (a futex and a few nanosleeps each).
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return rawio.Conn(c), nil
	}
	base.TLSHandshakeTimeout = cfg.ConnectTimeout
	base.ForceAttemptHTTP2 = true
	rt := &roundTripper{base: base, origin: origin, host: host, dynamic: cfg.DynamicHeaders}
	secret := secretHeaderNames(cfg.Headers)
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if !sameOrigin(req.URL, via[0].URL) {
				// Go keeps Authorization when only the port differs;
				// credentials belong to the origin they were given for.
				for _, h := range secret {
					req.Header.Del(h)
				}
			}
			return nil
		},
	}, nil
}

// secretHeaderNames are the headers dropped on a redirect to another origin:
// the credential headers HTTP knows, and configured headers whose name says
// they hold a key, token or secret.
func secretHeaderNames(configured map[string]string) []string {
	out := []string{"Authorization", "Proxy-Authorization", "Cookie"}
	for k := range configured {
		if looksSecret(k) {
			out = append(out, k)
		}
	}
	return out
}

// looksSecret reports whether a header name suggests a credential.
func looksSecret(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "key", "token", "secret", "cookie", "session", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether a and b share scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// roundTripper adds the host's per-request headers (only for the server's
// own origin) and takes 401 and 403 answers to the host.
//
// The host's headers are added here because only the round tripper knows
// each request's method and URL, which the host (and an auth plugin behind
// it) is asked about, and because a redirect to another origin then never
// receives them.
type roundTripper struct {
	base    http.RoundTripper
	origin  *url.URL
	host    transport.Host
	dynamic bool
}

// RoundTrip implements http.RoundTripper. A 401, or a 403 that carries a
// challenge, to a request made with the host's headers goes to the host
// (challenge); when it has new credentials the request is sent again, at
// most transport.MaxChallengeRetries times.
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	authed := rt.dynamic && rt.host != nil && sameOrigin(req.URL, rt.origin)
	resp, err := rt.send(req, authed)
	for attempt := 1; err == nil && authed && challenged(resp); attempt++ {
		if attempt > transport.MaxChallengeRetries {
			break
		}
		ans, ok := rt.challenge(req, resp, attempt)
		if !ok || !ans.Retry || (req.Body != nil && req.GetBody == nil) {
			break
		}
		again := req.Clone(req.Context())
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				break
			}
			again.Body = body
		}
		// The answer carries the headers to retry with: no Headers call.
		for k, v := range ans.Headers {
			again.Header.Set(k, v)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		resp, err = rt.send(again, len(ans.Headers) == 0)
	}
	return resp, err
}

// challenge hands one 401 or 403 to the host, with the response's
// WWW-Authenticate lines as they came (the auth side reads them), and
// returns the host's answer (whether to send the request again, and the
// headers to send it with). The host's error, when it has one, is recorded
// as the error of the exchange and ok is false. This is the one place the
// plugin talks to the host about a challenge.
func (rt *roundTripper) challenge(req *http.Request, resp *http.Response, attempt int) (ans transport.ChallengeAnswer, ok bool) {
	ans, err := rt.host.Challenge(req.Context(), transport.ChallengeRequest{
		Method: req.Method, URL: req.URL.String(), Status: resp.StatusCode,
		WWWAuthenticate: resp.Header.Values("WWW-Authenticate"), Attempt: attempt,
		DPoPNonce: resp.Header.Get("DPoP-Nonce"),
	})
	if err != nil {
		if info := infoFrom(req.Context()); info != nil {
			info.authFailed(sdk.AsError(err))
		}
		return ans, false
	}
	return ans, true
}

// send sends one request, with the host's headers when authed.
func (rt *roundTripper) send(req *http.Request, authed bool) (*http.Response, error) {
	if authed {
		h, err := rt.host.Headers(req.Context(), transport.HeadersRequest{Method: req.Method, URL: req.URL.String()})
		if err != nil {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
		if len(h) > 0 {
			req = req.Clone(req.Context())
			for k, v := range h {
				req.Header.Set(k, v)
			}
		}
	}
	return rt.base.RoundTrip(req)
}

// challenged reports whether a response asks for (other) credentials: a
// 401, or a 403 with a challenge (the auth side reads what it asks for).
func challenged(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		return len(resp.Header.Values("WWW-Authenticate")) > 0
	}
	return false
}

// respInfo is what the host said about one exchange: its answer to the
// exchange's last challenge, when that was an error (a login is needed),
// is the error to report.
type respInfo struct {
	mu      sync.Mutex
	authErr *sdk.Error
}

// authFailed records the host's error for a challenge.
func (i *respInfo) authFailed(e *sdk.Error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.authErr = e
}

// hostAuthError returns the host's error for the exchange's challenge, or
// nil.
func (i *respInfo) hostAuthError() *sdk.Error {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.authErr
}

type infoKey struct{}

// withInfo returns a context whose exchange's challenges are recorded in
// the returned respInfo.
func withInfo(ctx context.Context) (context.Context, *respInfo) {
	i := &respInfo{}
	return context.WithValue(ctx, infoKey{}, i), i
}

func infoFrom(ctx context.Context) *respInfo {
	i, _ := ctx.Value(infoKey{}).(*respInfo)
	return i
}
