package main

import (
	"bytes"
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
	"github.com/hermes-agent/hermes/sdk/transport"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
)

// maxRedirects is how many redirects one request may follow.
const maxRedirects = 10

// newHTTPClient builds the client every request of one server goes through:
// its TLS settings, a dial bounded by connect_timeout, per-request headers
// from the host when cfg.DynamicHeaders is set, and redirects that never
// carry credentials to another origin. It sets no overall timeout: the
// long-lived GET and SSE streams must survive; requests are bounded by their
// context instead. It returns the client's round tripper too.
func newHTTPClient(cfg transport.Config, origin *url.URL, host transport.Host) (*http.Client, *roundTripper, error) {
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = tc
	// A zero connect_timeout leaves the dial and the TLS handshake bounded
	// by the request's context only.
	base.DialContext = (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	base.TLSHandshakeTimeout = cfg.ConnectTimeout
	base.ForceAttemptHTTP2 = true
	rt := &roundTripper{base: base, origin: origin, host: host, dynamic: cfg.DynamicHeaders, limit: newBodyLimit(cfg)}
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
	}, rt, nil
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
// own origin) and records what each response said, for the errors.
//
// The host's headers are added here rather than through mcp-go's header
// function because only the round tripper knows each request's method and
// URL, which the host (and an auth plugin behind it) is asked about, and
// because a redirect to another origin then never receives them.
type roundTripper struct {
	base    http.RoundTripper
	origin  *url.URL
	host    transport.Host
	dynamic bool
	// onStream is called when a GET for an event stream got its answer
	// (or failed).
	onStream func()
	// limit bounds every response body.
	limit *bodyLimit
}

// RoundTrip implements http.RoundTripper. A 401 (or a 403 asking for more
// scope) to a request made with the host's headers goes to the host's
// auth plugin (Host.Challenge); when it has new credentials the request is
// sent again, at most transport.MaxChallengeRetries times.
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if rt.limit != nil && rt.limit.gate.busy() {
		// The answer to a request of the server's own frees its room
		// once it has gone out.
		if id, ok := answered(req); ok {
			defer rt.limit.gate.release(id)
		}
	}
	authed := rt.dynamic && rt.host != nil && sameOrigin(req.URL, rt.origin)
	resp, err := rt.send(req, authed)
	for attempt := 1; err == nil && authed && challenged(resp); attempt++ {
		if attempt > transport.MaxChallengeRetries {
			break
		}
		ans, cerr := rt.host.Challenge(req.Context(), transport.ChallengeRequest{
			Method: req.Method, URL: req.URL.String(), Status: resp.StatusCode,
			WWWAuthenticate: resp.Header.Values("WWW-Authenticate"), Attempt: attempt,
		})
		if cerr != nil {
			if info := infoFrom(req.Context()); info != nil {
				info.authFailed(sdk.AsError(cerr))
			}
			break
		}
		if !ans.Retry || (req.Body != nil && req.GetBody == nil) {
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
	if rt.onStream != nil && req.Method == http.MethodGet && strings.Contains(req.Header.Get("Accept"), "text/event-stream") {
		rt.onStream()
	}
	if err == nil {
		if info := infoFrom(req.Context()); info != nil {
			info.record(req, resp)
			info.keepErrorBody(resp)
		}
		rt.limit.wrap(req, resp)
	}
	return resp, err
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
// 401, or a 403 whose challenge says insufficient_scope.
func challenged(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		for _, v := range resp.Header.Values("WWW-Authenticate") {
			if strings.Contains(strings.ToLower(v), "insufficient_scope") {
				return true
			}
		}
	}
	return false
}

// respInfo is what the last HTTP response of one exchange said; mcp-go's
// errors do not carry the status or the challenge.
type respInfo struct {
	mu          sync.Mutex
	status      int
	challenge   string
	contentType string
	withSession bool // the request carried a session id
	tooLarge    *sdk.Error
	// authErr is the host's answer to the exchange's last challenge, when
	// it was an error (a login is needed): it is the error to report.
	authErr *sdk.Error
	// errorBody is the start of a 4xx response's JSON body (at most
	// maxErrorBody bytes): mcp-go drops the body of a refused initialize,
	// which says why (e.g. which protocol revisions the server speaks).
	errorBody []byte
}

// maxErrorBody bounds the part of a refusal's body kept for the host.
const maxErrorBody = 64 << 10

// keepErrorBody keeps the start of a 4xx JSON body, leaving resp's body
// readable from its start for mcp-go.
func (i *respInfo) keepErrorBody(resp *http.Response) {
	if resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.Body == nil || !isJSONType(resp.Header.Get("Content-Type")) {
		return
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	i.mu.Lock()
	i.errorBody = head
	i.mu.Unlock()
}

// errorBodyBytes returns the kept start of a refusal's body, or nil.
func (i *respInfo) errorBodyBytes() []byte {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.errorBody
}

// isJSONType reports whether a Content-Type is JSON.
func isJSONType(ct string) bool {
	ct = strings.ToLower(strings.TrimSpace(ct))
	return strings.HasPrefix(ct, "application/json") || (strings.HasPrefix(ct, "application/") && strings.Contains(ct, "+json"))
}

// authFailed records the host's error for a challenge.
func (i *respInfo) authFailed(e *sdk.Error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.authErr = e
}

// authError returns the host's error for the exchange's challenge, or nil.
func (i *respInfo) hostAuthError() *sdk.Error {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.authErr
}

// overLimit records that a response of the exchange went over the message
// limit; mcp-go's errors do not always carry why a body failed.
func (i *respInfo) overLimit(e *sdk.Error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.tooLarge == nil {
		i.tooLarge = e
	}
}

// overLimitError returns the error of a response over the limit, or nil.
func (i *respInfo) overLimitError() *sdk.Error {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.tooLarge
}

func (i *respInfo) record(req *http.Request, resp *http.Response) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.status = resp.StatusCode
	i.challenge = resp.Header.Get("WWW-Authenticate")
	i.contentType = resp.Header.Get("Content-Type")
	i.withSession = req.Header.Get(mcptransport.HeaderKeySessionID) != ""
}

// sentSession reports whether the request of the last response carried a
// session id.
func (i *respInfo) sentSession() bool {
	if i == nil {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.withSession
}

func (i *respInfo) get() (status int, challenge, contentType string) {
	if i == nil {
		return 0, "", ""
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.status, i.challenge, i.contentType
}

type infoKey struct{}

// withInfo returns a context whose HTTP responses are recorded in the
// returned respInfo.
func withInfo(ctx context.Context) (context.Context, *respInfo) {
	i := &respInfo{}
	return context.WithValue(ctx, infoKey{}, i), i
}

func infoFrom(ctx context.Context) *respInfo {
	i, _ := ctx.Value(infoKey{}).(*respInfo)
	return i
}
