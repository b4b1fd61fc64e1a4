package config

import (
	"strings"
	"testing"
	"time"
)

func TestLazyKeys(t *testing.T) {
	cfg, _ := loadString(t, `mcp_servers:
  plain:
    command: x
  eager:
    command: x
    start: Eager
    idle_timeout: 0
    prestart: true
  short:
    command: x
    start: lazy
    idle_timeout: 2.5
`)
	p, e, s := cfg.Server("plain"), cfg.Server("eager"), cfg.Server("short")
	for _, srv := range []*Server{p, e, s} {
		if srv.Err != nil {
			t.Fatalf("%s: %v", srv.Name, srv.Err)
		}
	}
	if p.Start != "" || p.IdleAfter() != DefaultIdleTimeout || p.Prestart {
		t.Fatalf("defaults: %+v", p)
	}
	if e.Start != StartEager || e.IdleAfter() != 0 || !e.Prestart {
		t.Fatalf("eager: start %q idle %v prestart %v", e.Start, e.IdleAfter(), e.Prestart)
	}
	if s.Start != StartLazy || s.IdleAfter() != 2500*time.Millisecond {
		t.Fatalf("short: start %q idle %v", s.Start, s.IdleAfter())
	}
}

func TestLazyKeysBadValues(t *testing.T) {
	for _, c := range []struct{ entry, want string }{
		{"start: sometimes", `server "a": key "start": want lazy or eager, got "sometimes"`},
		{"idle_timeout: -3", `server "a": key "idle_timeout": want a number of seconds (0 for never), got -3`},
		{"idle_timeout: soon", `server "a": key "idle_timeout": want a number of seconds (0 for never), got "soon"`},
		{"idle_timeout: 99999999", `key "idle_timeout": want at most 604800 seconds (a week)`},
		{"prestart: maybe", `server "a": key "prestart": want true or false, got "maybe"`},
	} {
		cfg, _ := loadString(t, "mcp_servers:\n  a:\n    command: x\n    "+c.entry+"\n")
		err := cfg.Server("a").Err
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want %q on one line", c.entry, err, c.want)
		}
	}
}

func TestSearchOver(t *testing.T) {
	for _, c := range []struct {
		v    any
		want SearchOver
	}{
		{uint64(40), SearchOver{Tools: 40}},
		{"40", SearchOver{Tools: 40}},
		{"20000 tokens", SearchOver{Tokens: 20000}},
		{"20k tokens", SearchOver{Tokens: 20000}},
	} {
		got, err := ParseSearchOver(c.v)
		if err != nil || got != c.want {
			t.Errorf("%v: got %+v, %v", c.v, got, err)
		}
	}
	for _, v := range []any{"lots", -1, 0, "0 tokens", 2.5} {
		if _, err := ParseSearchOver(v); err == nil || !strings.HasPrefix(err.Error(), "want a number of tools") {
			t.Errorf("%v: got %v", v, err)
		}
	}
	h := home(t, []byte("tools:\n  search_over: 30k tokens\nmcp_servers: {}\n"))
	o, err := LoadSearchOver(h)
	if err != nil || o.Tokens != 30000 || o.Off() {
		t.Fatalf("%+v %v", o, err)
	}
	h = home(t, []byte("tools:\n  search_over: many\n"))
	if _, err := LoadSearchOver(h); err == nil || !strings.Contains(err.Error(), "tools.search_over: want a number") {
		t.Fatalf("got %v", err)
	}
	h = home(t, []byte("mcp_servers: {}\n"))
	if o, err := LoadSearchOver(h); err != nil || !o.Off() {
		t.Fatalf("%+v %v", o, err)
	}
}
