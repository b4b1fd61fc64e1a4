package main

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// streamWait bounds how long a message waits for the GET stream to be
// answered after the host asked for it: servers send what is not tied to a
// request (list_changed, their own requests right after the handshake) only
// on that stream, and drop it while there is none, so the host's next
// message goes out once the stream is there.
const streamWait = 2 * time.Second

// listenBackoff bounds the wait before the GET stream is opened again.
var listenBackoff = [2]time.Duration{time.Second, 30 * time.Second}

// waitListen waits, within streamWait, for the GET stream's first answer
// once it was asked for.
func (t *httpTransport) waitListen(ctx context.Context) {
	if !t.listening.Load() {
		return
	}
	select {
	case <-t.listenReady:
		return
	default:
	}
	timer := time.NewTimer(streamWait)
	defer timer.Stop()
	select {
	case <-t.listenReady:
	case <-timer.C:
		t.log.Debug("GET stream not answered yet; sending on", "url", t.shownURL)
		t.streamAnswered()
	case <-ctx.Done():
	}
}

func (t *httpTransport) streamAnswered() { t.readyOnce.Do(func() { close(t.listenReady) }) }

// listen keeps the GET stream of Streamable HTTP open for the connection's
// life and passes its messages on: it is opened again (after a backoff,
// with the last event id seen) when it ends, and given up when the server
// offers none (405) or no longer knows the session (404; the host hears it
// from its next request). An event over the limit ends the connection:
// the stream would only be opened again and again.
func (t *httpTransport) listen() {
	defer t.streamAnswered()
	wait := listenBackoff[0]
	lastID := ""
	var retry time.Duration
	for {
		session := t.SessionID()
		resp, err := t.get(t.ctx, session, lastID)
		t.streamAnswered()
		if t.ctx.Err() != nil {
			if resp != nil {
				_ = resp.Body.Close()
			}
			return
		}
		switch {
		case err != nil:
			t.log.Debug("GET stream failed", "error", t.scrub(err.Error()))
		case resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotFound:
			_ = resp.Body.Close()
			t.log.Debug("the server offers no GET stream", "status", resp.StatusCode)
			return
		case resp.StatusCode == http.StatusOK && mediaType(resp.Header.Get("Content-Type")) == "text/event-stream":
			_, got, rerr := t.readEvents(resp.Body, peeked{}, &lastID, &retry)
			_ = resp.Body.Close()
			if errors.Is(rerr, errTooLarge) {
				t.log.Warn("event stream over the message limit; ending the connection", "url", t.shownURL)
				t.finish(t.tooLargeError(true))
				return
			}
			if got {
				wait = listenBackoff[0]
			}
			if retry > 0 {
				// The reconnection time the server asked for.
				wait = retry
			}
		default:
			_ = resp.Body.Close()
			t.log.Debug("GET stream refused", "status", resp.StatusCode)
		}
		select {
		case <-time.After(wait):
		case <-t.ctx.Done():
			return
		}
		wait = min(2*wait, listenBackoff[1])
	}
}
