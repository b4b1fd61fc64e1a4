package discovery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	// MaxDocumentSize bounds every body this package reads: metadata
	// documents and registration responses alike.
	MaxDocumentSize = 1 << 20
	// FetchTimeout bounds each single request, within the caller's context.
	FetchTimeout = 10 * time.Second
	// maxString bounds any one string taken from a document.
	maxString = 4096
	// maxList bounds any one list taken from a document.
	maxList = 256
	// maxQuoted is how many characters of a hostile value an error shows.
	maxQuoted = 200
)

var (
	// ErrTooLarge is returned when a server's document exceeds
	// MaxDocumentSize.
	ErrTooLarge = errors.New("document too large")
	// ErrScheme is returned for a URL that is not http or https.
	ErrScheme = errors.New("only http and https URLs are allowed")
)

// fetchResult is one GET: either a body to parse, or a miss (nothing at
// this address: a 4xx, a 502, or an HTML page such as a single-page app's
// catch-all), which lets the caller try the next candidate.
type fetchResult struct {
	body   []byte
	status int
	miss   bool
}

// fetchJSON GETs rawURL, bounded by FetchTimeout and MaxDocumentSize. what
// names the document in errors.
func fetchJSON(ctx context.Context, client *http.Client, rawURL, what string) (fetchResult, error) {
	if _, err := parseHTTPURL(rawURL); err != nil {
		return fetchResult{}, fmt.Errorf("discovery: %s URL: %w", what, err)
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fetchResult{}, fmt.Errorf("discovery: %s %s: %w", what, rawURL, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient(client).Do(req)
	if err != nil {
		return fetchResult{}, fmt.Errorf("discovery: fetch %s %s: %w", what, rawURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		drain(resp.Body)
		if (resp.StatusCode >= 400 && resp.StatusCode < 500) || resp.StatusCode == http.StatusBadGateway {
			return fetchResult{status: resp.StatusCode, miss: true}, nil
		}
		return fetchResult{status: resp.StatusCode}, fmt.Errorf("discovery: fetch %s %s: HTTP %d", what, rawURL, resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
		drain(resp.Body)
		return fetchResult{status: resp.StatusCode, miss: true}, nil
	}
	body, err := readBounded(resp.Body, what, rawURL)
	if err != nil {
		return fetchResult{}, err
	}
	return fetchResult{body: body, status: resp.StatusCode}, nil
}

// readBounded reads at most MaxDocumentSize bytes and fails if there are more.
func readBounded(r io.Reader, what, rawURL string) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxDocumentSize+1))
	if err != nil {
		return nil, fmt.Errorf("discovery: read %s %s: %w", what, rawURL, err)
	}
	if len(body) > MaxDocumentSize {
		return nil, fmt.Errorf("discovery: the server's %s at %s is larger than the %d-byte limit (MaxDocumentSize): %w",
			what, rawURL, MaxDocumentSize, ErrTooLarge)
	}
	return body, nil
}

// drain reads a little of an unused body so the connection can be reused.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<10)) }

func httpClient(c *http.Client) *http.Client {
	if c == nil {
		return http.DefaultClient
	}
	return c
}

// parseHTTPURL parses an absolute http or https URL with a host and no
// user information.
func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the whole URL again
		}
		return nil, fmt.Errorf("%s: %w", quote(raw), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%s: %w", quote(raw), ErrScheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s: no host", quote(raw))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s: user information is not allowed in the URL", quote(raw))
	}
	return u, nil
}

// origin returns scheme://host[:port] with the scheme and host lower-cased
// and a default port left out, so that two spellings of one origin compare
// equal.
func origin(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host
}

// quote renders a value taken from the network for an error message:
// control and invalid characters escaped, at most maxQuoted characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) > maxQuoted {
		n := 0
		for i := range s {
			if n == maxQuoted {
				return strconv.Quote(s[:i]) + "…"
			}
			n++
		}
	}
	return strconv.Quote(s)
}
