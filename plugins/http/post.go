package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// maxErrorBody bounds what is read of a refusal's body.
const maxErrorBody = 64 << 10

// defaultRetry is the wait before an answer's stream is resumed when the
// server named no reconnection time; minRetry the shortest wait taken from
// one, so that a server asking for none is not polled in a tight loop.
const (
	defaultRetry = time.Second
	minRetry     = 10 * time.Millisecond
)

// maxResumes bounds how often one answer's stream is resumed in a row
// without bringing anything new.
const maxResumes = 3

// post sends one message of Streamable HTTP and reads its answer: nothing
// (202), one message as JSON, or an event stream that ends with the answer
// to a request. Every message it reads goes to the host as it came.
func (t *httpTransport) post(ctx context.Context, msg []byte, p peeked) error {
	limit, key := t.limitOf(p)
	bctx, cancel := bound(ctx, limit)
	defer cancel()
	bctx, info := withInfo(bctx)
	req, err := t.newRequest(bctx, http.MethodPost, t.cfg.URL, msg, transport.MessageHeader(ctx))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	session := ""
	if p.method != "initialize" {
		// initialize starts a session of its own.
		if t.sessionEnded.Load() {
			return t.sessionExpiredError(what(p))
		}
		session = t.SessionID()
	}
	if session != "" {
		req.Header.Set(headerSessionID, session)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return t.exchangeError(ctx, bctx, err, p, limit, key)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 && p.method == "initialize" {
		t.setSession(resp.Header.Get(headerSessionID))
		t.sessionEnded.Store(false)
	}
	if resp.StatusCode == http.StatusNotFound && session != "" {
		t.endSession(session)
	}
	if resp.StatusCode/100 != 2 {
		return t.refused(resp, p, session != "", info)
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent || resp.ContentLength == 0 {
		return nil
	}
	ct := resp.Header.Get("Content-Type")
	switch mediaType(ct) {
	case "application/json":
		body, err := readBody(resp.Body, resp.ContentLength, t.max)
		if err != nil {
			return t.bodyError(ctx, bctx, err, p, limit, key, false)
		}
		if len(bytes.TrimSpace(body)) > 0 {
			t.deliver(body)
		}
		return nil
	case "text/event-stream":
		err := t.readAnswer(bctx, resp.Body, p, session)
		if err != nil {
			return t.bodyError(ctx, bctx, err, p, limit, key, true)
		}
		return nil
	case "":
		// An empty answer without a type (a notification accepted).
		if b, _ := readBody(resp.Body, -1, 1); len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
	}
	return t.notMCPError(ct)
}

// refused turns a non-2xx answer into the answer or the error the host
// gets. A JSON-RPC error in the body of a refused request is the request's
// answer, passed on (with the request's id when the server could not name
// it), so that the host sees why at once: a server that does not know
// server/discover, or refuses a revision, says so this way.
func (t *httpTransport) refused(resp *http.Response, p peeked, sentSession bool, info *respInfo) error {
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	}
	status := resp.StatusCode
	if p.request && isJSONType(resp.Header.Get("Content-Type")) && status != http.StatusUnauthorized && status != http.StatusForbidden &&
		!(status == http.StatusNotFound && sentSession) {
		if answer := refusalAnswer(body, p.id); answer != nil {
			t.log.Debug("request refused with a JSON-RPC error", "method", p.method, "status", status)
			t.deliver(answer)
			return nil
		}
	}
	return t.statusError(what(p), status, resp.Header.Get("WWW-Authenticate"), sentSession, body, info)
}

// readAnswer reads the event stream answering the request p (or a
// notification's stream) and passes every message on; it returns once the
// request's answer has come. A stream cut off before the answer, after it
// named its events, is resumed with a GET carrying Last-Event-ID, as the
// server asked for.
func (t *httpTransport) readAnswer(ctx context.Context, body io.ReadCloser, p peeked, session string) error {
	lastID := ""
	var retry time.Duration
	for resumes := 0; ; {
		answered, got, err := t.readEvents(body, p, &lastID, &retry)
		if answered {
			return nil
		}
		if errors.Is(err, errTooLarge) || ctx.Err() != nil {
			return err
		}
		if !p.request {
			return nil // a notification's stream is over
		}
		if got {
			resumes = 0
		}
		if lastID == "" || resumes >= maxResumes {
			if err == nil {
				err = io.EOF
			}
			return &cutOff{err}
		}
		resumes++
		// The reconnection time the server asked for, else a second.
		wait := defaultRetry
		if retry > 0 {
			wait = max(retry, minRetry)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		t.log.Debug("resuming the answer's stream", "method", p.method, "last_event_id", lastID)
		resp, rerr := t.get(ctx, session, lastID)
		if rerr != nil {
			return &cutOff{rerr}
		}
		if resp.StatusCode != http.StatusOK || mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
			_ = resp.Body.Close()
			return &cutOff{err}
		}
		body = resp.Body
		defer resp.Body.Close() //nolint:gocritic // each resumed body is closed when the exchange ends
	}
}

// readEvents passes the messages of one event stream on until it ends or
// brings the answer to p; got says whether any message came. It records
// the last event id and the reconnection time the stream named.
func (t *httpTransport) readEvents(body io.Reader, p peeked, lastID *string, retry *time.Duration) (answered, got bool, err error) {
	er := newEventReader(body, t.max)
	defer func() {
		if er.retry > 0 {
			*retry = er.retry
		}
	}()
	for {
		ev, err := er.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return false, got, err
		}
		if ev.id != "" {
			*lastID = ev.id
		}
		if !ev.isMessage() {
			continue
		}
		got = true
		isAnswer := p.request && answers(ev.data, p.id)
		t.deliver(ev.data)
		if isAnswer {
			return true, got, nil
		}
	}
}

// cutOff is a stream that ended before the answer.
type cutOff struct{ err error }

func (c *cutOff) Error() string { return "stream ended before the answer" }
func (c *cutOff) Unwrap() error { return c.err }

// bodyError is the error of an answer whose body failed.
func (t *httpTransport) bodyError(ctx, bctx context.Context, err error, p peeked, limit time.Duration, key string, sse bool) error {
	if errors.Is(err, errTooLarge) {
		return t.tooLargeError(sse)
	}
	var co *cutOff
	if errors.As(err, &co) && ctx.Err() == nil && bctx.Err() == nil {
		return t.cutOffError(what(p), co.err)
	}
	return t.exchangeError(ctx, bctx, err, p, limit, key)
}

// exchangeError is the error of an exchange that failed without an
// answer: past its bound, cancelled by the host, or the request failed.
func (t *httpTransport) exchangeError(ctx, bctx context.Context, err error, p peeked, limit time.Duration, key string) error {
	if bctx.Err() == context.DeadlineExceeded && ctx.Err() == nil && limit > 0 {
		return t.timeoutError(what(p), limit, key)
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return sdk.NewError(sdk.CodeTimeout, "%s to MCP server '%s' timed out", what(p), t.cfg.Server)
		}
		return sdk.NewError(sdk.CodeCanceled, "%s to MCP server '%s' was cancelled", what(p), t.cfg.Server)
	}
	var co *cutOff
	if errors.As(err, &co) {
		return t.cutOffError(what(p), co.err)
	}
	return t.requestError(err, what(p))
}

// get opens an event stream with a GET: the listen stream, or the
// resumption of an answer's stream after lastID.
func (t *httpTransport) get(ctx context.Context, session, lastID string) (*http.Response, error) {
	req, err := t.newRequest(ctx, http.MethodGet, t.cfg.URL, nil, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if session != "" {
		req.Header.Set(headerSessionID, session)
	}
	if lastID != "" {
		req.Header.Set(headerLastEventID, lastID)
	}
	return t.client.Do(req)
}
