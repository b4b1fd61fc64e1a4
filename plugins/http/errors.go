package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-agent/hermes/sdk"
)

// isMCPContentType reports whether ct is a content type of an MCP endpoint.
func isMCPContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	}
	return mt == "application/json" || mt == "text/event-stream"
}

func mediaType(ct string) string {
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	return strings.TrimSpace(strings.SplitN(ct, ";", 2)[0])
}

// notMCPError is the error for an endpoint that answers like a web page.
func (t *httpTransport) notMCPError(ct string) *sdk.Error {
	return sdk.NewError(sdk.CodeNotMCP, "MCP server '%s' at %s returned Content-Type '%s', not an MCP response (expected one of: application/json, text/event-stream). The URL most likely points at a web page rather than an MCP endpoint — check it resolves to a Streamable HTTP / SSE endpoint (e.g. https://host/mcp, not https://host/).",
		t.cfg.Server, t.shownURL, mediaType(ct))
}

// authError is the error for a 401 or 403: it says how to add credentials.
func (t *httpTransport) authError(status int, challenge string) *sdk.Error {
	if status == 0 {
		status = http.StatusUnauthorized
	}
	name := t.cfg.Server
	var hint string
	switch {
	case t.cfg.DynamicHeaders:
		hint = fmt.Sprintf("log in again with: hermes mcp login %s", name)
	case hasHeader(t.cfg.Headers, "Authorization"):
		hint = fmt.Sprintf("the configured Authorization header was refused; check the token (e.g. %s in .env) or replace it with: hermes mcp add %s --url %s --header 'Authorization: Bearer ...'", envKeyName(name), name, t.shownURL)
	default:
		hint = fmt.Sprintf("add a header with: hermes mcp add %s --url %s --header 'Authorization: Bearer ...', or put Authorization: \"Bearer ${%s}\" under headers in config.yaml", name, t.shownURL, envKeyName(name))
		if challenge != "" {
			hint += fmt.Sprintf("; if it uses OAuth, set auth: oauth and run: hermes mcp login %s", name)
		}
	}
	e := sdk.NewError(sdk.CodeAuth, "MCP server '%s' at %s needs credentials (HTTP %d %s); %s", name, t.shownURL, status, http.StatusText(status), hint)
	e.Status = status
	e.WWWAuthenticate = challenge
	return e
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

var nonKeyChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

// envKeyName is the .env variable hermes suggests for a server's API key.
func envKeyName(server string) string {
	return "MCP_" + strings.Trim(nonKeyChars.ReplaceAllString(strings.ToUpper(server), "_"), "_") + "_API_KEY"
}

// timeoutError is the error for an exchange that passed its bound.
func (t *httpTransport) timeoutError(method string, limit time.Duration, key string) *sdk.Error {
	return sdk.NewError(sdk.CodeTimeout, "MCP server '%s' did not answer %s within %s (%s in config.yaml)", t.cfg.Server, method, limit, key)
}

// sessionExpiredError is the error for a request the server refused because
// it no longer knows the session.
func (t *httpTransport) sessionExpiredError(method string) *sdk.Error {
	e := sdk.NewError(sdk.CodeSessionExpired, "MCP server '%s' at %s no longer knows the session (HTTP 404 to %s); a new session is needed", t.cfg.Server, t.shownURL, method)
	e.Status = http.StatusNotFound
	return e
}

// statusError is the error of an HTTP answer to the exchange of method the
// transport cannot pass on: a 404 to a request that carried a session id is
// the lost session, a 401 or 403 wants credentials (the host's own error
// when it handled the challenge), and other statuses say the status and the
// start of the body. body is the start of the answer's body (maxErrorBody).
func (t *httpTransport) statusError(method string, status int, challenge string, sentSession bool, body []byte, info *respInfo) *sdk.Error {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		if e := info.hostAuthError(); e != nil {
			return e
		}
		return t.authError(status, challenge)
	case status == http.StatusNotFound && sentSession:
		return t.sessionExpiredError(method)
	}
	var e *sdk.Error
	detail := ""
	if len(body) > 0 {
		detail = oneLine(t.scrub(string(body)), 200)
	}
	switch {
	case method == "initialize" && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed):
		// What a legacy SSE server (or a wrong path) answers a POST.
		e = sdk.NewError(sdk.CodeHTTP, "MCP server '%s' at %s answered initialize with HTTP %d %s: it is not a Streamable HTTP endpoint; check the URL, or set transport: sse if it is a legacy SSE server", t.cfg.Server, t.shownURL, status, http.StatusText(status))
	case status == http.StatusNotFound:
		e = sdk.NewError(sdk.CodeHTTP, "MCP server '%s' at %s answered %s with HTTP 404 Not Found; check the URL", t.cfg.Server, t.shownURL, method)
	case method == "initialize" && status >= 400 && status < 500:
		if detail != "" {
			detail = " (" + detail + ")"
		}
		e = sdk.NewError(sdk.CodeHTTP, "MCP server '%s' at %s refused initialize with HTTP %d %s%s; check the URL and the server's log", t.cfg.Server, t.shownURL, status, http.StatusText(status), detail)
	default:
		if detail != "" {
			detail = ": " + detail
		}
		e = sdk.NewError(sdk.CodeHTTP, "MCP server '%s' at %s answered %s with HTTP %d %s%s", t.cfg.Server, t.shownURL, method, status, http.StatusText(status), detail)
	}
	e.Status = status
	return e
}

// requestError turns the failure of an HTTP request (no answer came) into
// an *sdk.Error: the host's own error (its headers callback refused), a
// cancellation, an untrusted certificate, a server that cannot be
// reached. It reads Go's errors for this wire only.
func (t *httpTransport) requestError(err error, method string) *sdk.Error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return se
	}
	msg := t.scrub(err.Error())
	switch {
	case errors.Is(err, context.Canceled):
		return sdk.NewError(sdk.CodeCanceled, "%s to MCP server '%s' was cancelled", method, t.cfg.Server)
	case errors.Is(err, context.DeadlineExceeded):
		return sdk.NewError(sdk.CodeTimeout, "%s to MCP server '%s' timed out: %s", method, t.cfg.Server, msg)
	}
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	if errors.As(err, &ue) || errors.As(err, &he) || errors.As(err, &ci) || strings.Contains(msg, "x509:") {
		return sdk.NewError(sdk.CodeOther, "TLS certificate of MCP server '%s' at %s is not trusted (%s); set ssl_verify to the path of its CA bundle, or ssl_verify: false for a test server", t.cfg.Server, t.shownURL, msg)
	}
	if strings.Contains(msg, "tls:") {
		return sdk.NewError(sdk.CodeOther, "TLS handshake with MCP server '%s' at %s failed (%s); check client_cert, client_key and ssl_verify", t.cfg.Server, t.shownURL, msg)
	}
	if isConnectionError(err) {
		return sdk.NewError(sdk.CodeClosed, "cannot reach MCP server '%s' at %s: %s; check that it is running", t.cfg.Server, t.shownURL, msg)
	}
	return sdk.NewError(sdk.CodeOther, "%s to MCP server '%s' failed: %s", method, t.cfg.Server, msg)
}

// cutOffError is the error of a response stream that ended before the
// answer came.
func (t *httpTransport) cutOffError(method string, err error) *sdk.Error {
	why := "the stream ended"
	if err != nil && !errors.Is(err, io.EOF) {
		why = t.scrub(err.Error())
	}
	return sdk.NewError(sdk.CodeClosed, "MCP server '%s' ended the response to %s before answering (%s); try again", t.cfg.Server, method, why)
}

// tooLargeError is the error of a response or an event over the limit.
func (t *httpTransport) tooLargeError(sse bool) *sdk.Error {
	what := "a response"
	if sse {
		what = "an SSE event"
	}
	return sdk.NewError(sdk.CodeTooLarge, "MCP server '%s' sent %s over the limit of %d MB (max_message_mb); raise max_message_mb in its entry in config.yaml if it really sends messages that large",
		t.cfg.Server, what, t.max>>20)
}

// isConnectionError reports whether err means the server could not be
// reached or dropped the connection.
func isConnectionError(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	var de *net.DNSError
	return errors.As(err, &de)
}

// scrub makes an error message one line and safe to show: the configured
// URL appears without its query, and no header value appears at all.
func (t *httpTransport) scrub(msg string) string {
	if t.cfg.URL != "" && t.cfg.URL != t.shownURL {
		msg = strings.ReplaceAll(msg, t.cfg.URL, t.shownURL)
	}
	for _, v := range t.cfg.Headers {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "***")
		}
		// The credential of "Bearer TOKEN" may appear on its own.
		if _, cred, ok := strings.Cut(v, " "); ok && len(cred) >= 6 {
			msg = strings.ReplaceAll(msg, cred, "***")
		}
	}
	return oneLine(msg, 400)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}

// isJSONType reports whether a Content-Type is JSON.
func isJSONType(ct string) bool {
	ct = strings.ToLower(strings.TrimSpace(ct))
	return strings.HasPrefix(ct, "application/json") || (strings.HasPrefix(ct, "application/") && strings.Contains(ct, "+json"))
}
