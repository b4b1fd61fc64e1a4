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
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
)

// connectionMarkers are how a broken connection shows in the errors of Go's
// HTTP client and mcp-go (not in anything the server wrote).
var connectionMarkers = []string{
	"closedresourceerror", "closed resource", "transport is closed",
	"connection closed", "broken pipe", "end of file",
}

func hasMarker(msg string, markers []string) bool {
	m := strings.ToLower(msg)
	for _, k := range markers {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}

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
		if strings.Contains(strings.ToLower(challenge), "resource_metadata") {
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

// classify turns an error of an mcp-go transport into an *sdk.Error the
// host can act on. info is what the HTTP responses of the exchange said.
// It reads the wire only: what the server wrote in a JSON-RPC error is the
// host's to interpret.
func (t *httpTransport) classify(err error, info *respInfo, method string) error {
	if err == nil {
		return nil
	}
	if e := info.overLimitError(); e != nil {
		return e
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		return se
	}
	status, challenge, ct := info.get()
	msg := t.scrub(err.Error())
	switch {
	case errors.Is(err, context.Canceled):
		return sdk.NewError(sdk.CodeCanceled, "%s to MCP server '%s' was cancelled", method, t.cfg.Server)
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "timeout waiting for"):
		return sdk.NewError(sdk.CodeTimeout, "%s to MCP server '%s' timed out: %s", method, t.cfg.Server, msg)
	}
	var are *mcptransport.AuthorizationRequiredError
	if errors.As(err, &are) || errors.Is(err, mcptransport.ErrUnauthorized) || status == http.StatusUnauthorized || status == http.StatusForbidden {
		if e := info.hostAuthError(); e != nil {
			return e
		}
		return t.authError(status, challenge)
	}
	if errors.Is(err, mcptransport.ErrSessionTerminated) {
		// mcp-go says so for every 404, and for every request after the
		// server answered 404 to the session. A 404 to a request without a
		// session id is a wrong URL, not a lost session.
		if status != http.StatusNotFound || info.sentSession() {
			return t.sessionExpiredError(method)
		}
		e := sdk.NewError(sdk.CodeHTTP, "MCP server '%s' at %s answered %s with HTTP 404 Not Found; check the URL", t.cfg.Server, t.shownURL, method)
		e.Status = status
		return e
	}
	if errors.Is(err, mcptransport.ErrLegacySSEServer) {
		var e *sdk.Error
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			// What a legacy SSE server (or a wrong path) answers a POST.
			e = sdk.NewError(sdk.CodeHTTP, "MCP server '%s' at %s answered initialize with HTTP %d %s: it is not a Streamable HTTP endpoint; check the URL, or set transport: sse if it is a legacy SSE server", t.cfg.Server, t.shownURL, status, http.StatusText(status))
		} else {
			detail := ""
			if body := info.errorBodyBytes(); len(body) > 0 {
				detail = " (" + t.scrub(oneLine(string(body), 200)) + ")"
			}
			e = sdk.NewError(sdk.CodeHTTP, "MCP server '%s' at %s refused initialize with HTTP %d %s%s; check the URL and the server's log", t.cfg.Server, t.shownURL, status, http.StatusText(status), detail)
		}
		e.Status = status
		return e
	}
	if strings.Contains(msg, "unexpected content type") && ct != "" && !isMCPContentType(ct) {
		return t.notMCPError(ct)
	}
	if status >= 400 {
		detail := ""
		if _, body, ok := strings.Cut(msg, fmt.Sprintf("status %d: ", status)); ok {
			detail = ": " + oneLine(body, 200)
		}
		e := sdk.NewError(sdk.CodeHTTP, "MCP server '%s' at %s answered %s with HTTP %d %s%s", t.cfg.Server, t.shownURL, method, status, http.StatusText(status), detail)
		e.Status = status
		return e
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
	if strings.Contains(msg, "unexpected nil response") || strings.Contains(msg, "failed to resume the SSE stream") ||
		strings.Contains(msg, "connection has been closed") || hasMarker(msg, connectionMarkers) {
		return sdk.NewError(sdk.CodeClosed, "MCP server '%s' ended the response to %s before answering (%s); try again", t.cfg.Server, method, msg)
	}
	return sdk.NewError(sdk.CodeOther, "%s to MCP server '%s' failed: %s", method, t.cfg.Server, msg)
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
