package identity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// maxRedirects bounds the redirects one fetch follows.
const maxRedirects = 3

// fetcher makes the package's outbound requests (discovery, keys,
// introspection), each bounded in time and size.
type fetcher struct {
	client  *http.Client
	timeout time.Duration
	limit   int
}

func newFetcher(rt http.RoundTripper, timeout time.Duration, limit int) *fetcher {
	if rt == nil {
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &fetcher{
		client: &http.Client{
			Transport: rt,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= maxRedirects {
					return fmt.Errorf("more than %d redirects", maxRedirects)
				}
				return checkURL(req.URL.String(), false)
			},
		},
		timeout: timeout,
		limit:   limit,
	}
}

// get fetches url's document; what names it in errors ("the keys of
// issuer X").
func (f *fetcher) get(ctx context.Context, url, what string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s from %s: %w", what, url, err)
	}
	req.Header.Set("Accept", "application/json")
	return f.do(ctx, req, what)
}

// do sends req and returns the body of a 200 answer, within the fetch
// timeout and size bound; errors name the bound that was hit by its key.
func (f *fetcher) do(ctx context.Context, req *http.Request, what string) ([]byte, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	where := req.URL.Redacted()
	fail := func(err error) error {
		if parent.Err() != nil {
			return fmt.Errorf("%s from %s: %w", what, where, context.Cause(parent))
		}
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("%s from %s: no complete answer within %s (gateway.fetch_timeout)", what, where, f.timeout)
		}
		return fmt.Errorf("%s from %s: %w", what, where, err)
	}
	resp, err := f.client.Do(req.WithContext(ctx))
	if err != nil {
		return nil, fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fail(fmt.Errorf("status %s", resp.Status))
	}
	if resp.ContentLength > int64(f.limit) {
		return nil, fail(fmt.Errorf("the answer has %d bytes, more than %d (gateway.max_fetch_bytes)", resp.ContentLength, f.limit))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(f.limit)+1))
	if err != nil {
		return nil, fail(err)
	}
	if len(body) > f.limit {
		return nil, fail(fmt.Errorf("the answer exceeds %d bytes (gateway.max_fetch_bytes)", f.limit))
	}
	return body, nil
}
