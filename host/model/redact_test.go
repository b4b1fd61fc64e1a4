package model_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// A key not shaped like sk-..., refused by an endpoint that echoes it,
// appears nowhere in the error: not in its message, its detail, nor its
// cause.
func TestEchoedKeyIsRedacted(t *testing.T) {
	const key = "zz-custom-KEY-123"
	srv := testmodel.New(t)
	srv.Key = "the-right-key"
	srv.EchoKey = true
	s := settings(t, srv.URL)
	s.APIKey = key
	_, err := chat(t, s, model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}})
	me := kindOf(t, err)
	if me.Kind != model.KindAuth {
		t.Fatalf("kind %s: %v", me.Kind, err)
	}
	if req := srv.Last(t); req.Authorization != "Bearer "+key {
		t.Fatalf("the endpoint did not receive the key: %q", req.Authorization)
	}
	shown := fmt.Sprintf("%v|%+v|%s", err, me, me.Detail)
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		shown += "|" + e.Error()
	}
	if strings.Contains(shown, key) {
		t.Errorf("the key is shown: %s", shown)
	}
	if !strings.Contains(err.Error(), model.Redacted) {
		t.Errorf("the echo was not redacted but dropped, or never came: %v", err)
	}
}

// Redact takes out the key as it is, URL-encoded and base64 (Basic auth,
// with and without a user name), and leaves the rest of the text.
func TestRedactForms(t *testing.T) {
	const key = "zz+custom/KEY=123"
	s := &model.Settings{APIKey: key}
	for _, user := range []string{"", "u", "us", "use"} {
		b64 := base64.StdEncoding.EncodeToString([]byte(user + ":" + key))
		text := "refused Basic " + b64 + " and " + url.QueryEscape(key) + " and " + url.PathEscape(key) + " and " + key + " end"
		got := s.Redact(text)
		if strings.Contains(got, key) || strings.Contains(got, url.QueryEscape(key)) || strings.Contains(got, b64) {
			t.Errorf("user %q: %s", user, got)
		}
		inner := base64.StdEncoding.EncodeToString([]byte(key))
		if strings.Contains(got, inner[:len(inner)-4]) {
			t.Errorf("user %q: base64 of the key left in %s", user, got)
		}
		if !strings.HasPrefix(got, "refused Basic ") || !strings.HasSuffix(got, " end") {
			t.Errorf("user %q: the rest of the text changed: %s", user, got)
		}
	}
	// Without a key nothing changes.
	if got := (&model.Settings{}).Redact("a text"); got != "a text" {
		t.Errorf("no key: %q", got)
	}
}
