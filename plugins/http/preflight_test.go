package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

func TestPreflight(t *testing.T) {
	html := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<html></html>")
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		notMCP  bool
	}{
		{"web page", func(w http.ResponseWriter, r *http.Request) { html(w) }, true},
		{"head not allowed, get is a page", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			html(w)
		}, true},
		{"page on GET, MCP on POST", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"_probe","result":{}}`)
				return
			}
			html(w)
		}, false},
		{"json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
		}, false},
		{"status 400", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 400) }, false},
		{"no content type", func(w http.ResponseWriter, r *http.Request) { w.Header()["Content-Type"] = nil }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(c.handler)
			defer ts.Close()
			tr := newTestTransport(t, transport.Config{URL: ts.URL + "/?api_key=hidden"})
			err := tr.preflight(context.Background())
			if c.notMCP {
				if sdk.ErrorCode(err) != sdk.CodeNotMCP {
					t.Fatalf("want not_mcp, got %v", err)
				}
				if !strings.Contains(err.Error(), "returned Content-Type 'text/html'") || strings.Contains(err.Error(), "hidden") {
					t.Fatalf("message %q", err)
				}
			} else if err != nil {
				t.Fatalf("preflight refused: %v", err)
			}
		})
	}
	t.Run("unreachable passes", func(t *testing.T) {
		ts := httptest.NewServer(http.NotFoundHandler())
		url := ts.URL
		ts.Close()
		tr := newTestTransport(t, transport.Config{URL: url})
		if err := tr.preflight(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPreflightWanted(t *testing.T) {
	for _, c := range []struct {
		cfg  transport.Config
		want bool
	}{
		{transport.Config{}, true},
		{transport.Config{Transport: "sse"}, false},
		{transport.Config{DynamicHeaders: true}, false},
		{transport.Config{Extra: map[string]any{"skip_preflight": true}}, false},
		{transport.Config{Extra: map[string]any{"skip_preflight": false}}, true},
		{transport.Config{Extra: map[string]any{"skip_preflight": "yes"}}, false},
	} {
		c.cfg.URL = "http://127.0.0.1:1/mcp"
		if got := newTestTransport(t, c.cfg).preflightWanted(); got != c.want {
			t.Errorf("%+v: preflightWanted = %v", c.cfg, got)
		}
	}
}

func TestBadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/", "http://", "not a url"} {
		if _, err := newTransport(transport.Config{Server: "s", URL: u}, nil, hclog.NewNullLogger()); sdk.ErrorCode(err) != sdk.CodeConfig {
			t.Errorf("url %q: %v", u, err)
		}
	}
}
