package elicit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/mark3labs/mcp-go/mcp"
)

// revisions are the two protocol eras: a server-initiated request
// (2025-11-25) and an input_required result (2026-07-28).
var revisions = []string{"2025-11-25", "2026-07-28"}

// script is a person at a terminal who types the given lines in turn;
// once they are used up the input ends (io.EOF), or, with wait, nobody
// types anything more.
type script struct {
	mu      sync.Mutex
	lines   []string
	wait    bool
	said    strings.Builder
	prompts []string
	noTerm  bool
}

func (s *script) Converse(ctx context.Context, fn func(elicit.Terminal) error) error {
	if s.noTerm {
		return elicit.ErrNoPerson
	}
	return fn(s)
}

func (s *script) Say(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.said.WriteString(text + "\n")
}

func (s *script) Ask(ctx context.Context, prompt string) (string, error) {
	s.mu.Lock()
	s.prompts = append(s.prompts, prompt)
	s.said.WriteString(prompt + "\n")
	if len(s.lines) == 0 {
		wait := s.wait
		s.mu.Unlock()
		if wait {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "", io.EOF
	}
	l := s.lines[0]
	s.lines = s.lines[1:]
	s.mu.Unlock()
	return l, nil
}

func (s *script) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.said.String()
}

// connect opens a session to the Go test server speaking rev, with h as
// its elicitation handler.
func connect(t *testing.T, rev string, h *elicit.Handler) *session.Session {
	t.Helper()
	dir := testbin.Dir(t)
	testbin.Path(t, "hermes-transport-stdio")
	testbin.Path(t, "hermes-testserver")
	t.Setenv("HERMES_PLUGIN_PATH", dir)
	home := t.TempDir()
	sup := supervisor.New(supervisor.Options{Home: home, Logger: hclog.NewNullLogger()})
	t.Cleanup(sup.KillAll)
	srv := &config.Server{
		Name: "ts", Transport: "stdio", Command: filepath.Join(dir, "hermes-testserver"),
		Enabled: true, ConnectTimeout: 60 * time.Second, Timeout: 60 * time.Second,
		KeepaliveInterval: config.DefaultKeepaliveInterval, Protocol: rev,
	}
	s, err := session.Connect(context.Background(), session.PlanFor(srv, home, nil), session.Deps{Home: home, Supervisor: sup, Logger: hclog.NewNullLogger(), Elicitation: h})
	if err != nil {
		t.Fatalf("connect (%s): %v", rev, err)
	}
	t.Cleanup(func() { s.Close() })
	if s.Protocol.Revision != rev {
		t.Fatalf("speaks %s, want %s", s.Protocol.Revision, rev)
	}
	return s
}

// answer is what the test server's elicit tool returns.
type answer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// elicitCall calls the test server's elicit tool; err is the call's
// failure (or an isError result's text).
func elicitCall(t *testing.T, s *session.Session, args map[string]any) (answer, error) {
	t.Helper()
	res, err := s.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "elicit", Arguments: args}})
	if err != nil {
		return answer{}, err
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return answer{}, errors.New(text)
	}
	var a answer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("elicit answered %q: %v", text, err)
	}
	return a, nil
}

func handler(p elicit.Prompter) *elicit.Handler {
	return elicit.New("ts", elicit.DefaultSettings(), p, nil, nil)
}

func schemaJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// formSchema has a field of every kind MCP allows, with bounds, formats,
// defaults and required fields.
var formSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":  map[string]any{"type": "string", "title": "Name", "minLength": 2},
		"email": map[string]any{"type": "string", "format": "email"},
		"born":  map[string]any{"type": "string", "format": "date"},
		"age":   map[string]any{"type": "integer", "minimum": 1, "maximum": 150, "default": 42},
		"score": map[string]any{"type": "number", "minimum": 0, "maximum": 10},
		"agree": map[string]any{"type": "boolean"},
		"color": map[string]any{"type": "string", "enum": []any{"red", "green", "blue"}, "default": "green"},
		"hero": map[string]any{"type": "string", "oneOf": []any{
			map[string]any{"const": "h1", "title": "Superman"},
			map[string]any{"const": "h2", "title": "Wonder Woman"},
		}},
		"fish": map[string]any{"type": "array", "minItems": 1, "maxItems": 2, "items": map[string]any{"anyOf": []any{
			map[string]any{"const": "f1", "title": "Tuna"},
			map[string]any{"const": "f2", "title": "Salmon"},
			map[string]any{"const": "f3", "title": "Trout"},
		}}},
		"note":    map[string]any{"type": "string", "default": "none"},
		"skipped": map[string]any{"type": "string"},
	},
	"required": []any{"name", "agree", "email"},
}

// TestFormTypedBySchema: a person answers a form of every field kind;
// wrong answers are asked again with what is wrong, an empty answer takes
// the default or leaves an optional field out, a required field insists,
// and the server gets the typed values, in both protocol eras.
func TestFormTypedBySchema(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			// Fields: name, agree, email (required, in that order), then
			// age, born, color, fish, hero, note, score, skipped.
			p := &script{lines: []string{
				"y",
				"", "A", "Ada",
				"maybe", "y",
				"not-an-email", "ada@example.com",
				"1.5", "", // age: not whole, then the default
				"1999-13-01", "1990-02-03", // born
				"",                      // color: default green
				"9", "1,2,3", "Tuna, 3", // fish: no such choice, too many, then two
				"2",         // hero: Wonder Woman
				"",          // note: default
				"11", "7.5", // score: above maximum, then fine
				"", // skipped: optional, left out
			}}
			s := connect(t, rev, handler(p))
			a, err := elicitCall(t, s, map[string]any{"message": "Tell me about you", "schema": schemaJSON(t, formSchema)})
			if err != nil {
				t.Fatalf("elicit: %v\n%s", err, p.output())
			}
			want := map[string]any{
				"name": "Ada", "agree": true, "email": "ada@example.com", "age": float64(42), "born": "1990-02-03",
				"color": "green", "fish": []any{"f1", "f3"}, "hero": "h2", "note": "none", "score": 7.5,
			}
			if a.Action != "accept" || fmt.Sprint(a.Content) != fmt.Sprint(want) {
				t.Fatalf("got %s %v, want accept %v\n%s", a.Action, a.Content, want, p.output())
			}
			out := p.output()
			for _, w := range []string{
				"MCP server 'ts' asks for information:", "| Tell me about you",
				"A value is required.", "at least 2 characters", "y or n, please", "an email address",
				"a whole number, please", "a date as YYYY-MM-DD", "numbers shown (1-3), separated by commas", "choose at most 2", "at most 10, please",
				"age (integer) [42]:", "color (number) [green]:", "2) Wonder Woman (h2)", "Name (text, required):",
			} {
				if !strings.Contains(out, w) {
					t.Errorf("the person was not shown %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestDeclineCancel: the person's no is a decline, their cancel (or the
// end of input) a cancel, in both eras.
func TestDeclineCancel(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			for _, c := range []struct {
				lines []string
				want  string
			}{
				{[]string{"n"}, "decline"},
				{[]string{"c"}, "cancel"},
				{[]string{"y"}, "cancel"}, // then the input ends
			} {
				p := &script{lines: c.lines}
				s := connect(t, rev, handler(p))
				a, err := elicitCall(t, s, map[string]any{"message": "ok?"})
				if err != nil || a.Action != c.want || a.Content != nil {
					t.Errorf("typing %q: got %+v, %v; want %s without content\n%s", c.lines, a, err, c.want, p.output())
				}
			}
		})
	}
}

// TestNoPersonDeclines: without a terminal (or a prompter), and with
// elicitation.enabled false, a request is declined without asking.
func TestNoPersonDeclines(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			off, err := elicit.ParseSettings("ts", map[string]any{"enabled": "false"})
			if err != nil {
				t.Fatal(err)
			}
			asked := &script{lines: []string{"y", "x"}}
			for name, h := range map[string]*elicit.Handler{
				"no terminal":   handler(&script{noTerm: true}),
				"no prompter":   elicit.New("ts", elicit.DefaultSettings(), nil, nil, nil),
				"enabled false": elicit.New("ts", off, asked, nil, nil),
			} {
				s := connect(t, rev, h)
				a, err := elicitCall(t, s, map[string]any{"message": "ok?"})
				if err != nil || a.Action != "decline" {
					t.Errorf("%s: got %+v, %v; want decline", name, a, err)
				}
			}
			if asked.output() != "" {
				t.Errorf("a disabled elicitation asked the person:\n%s", asked.output())
			}
		})
	}
}

// TestTimeoutCancels: a person who does not answer within
// elicitation.timeout gets the request cancelled, and is told so.
func TestTimeoutCancels(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			set, err := elicit.ParseSettings("ts", map[string]any{"timeout": 0.3})
			if err != nil || set.Timeout != 300*time.Millisecond {
				t.Fatalf("ParseSettings: %+v, %v", set, err)
			}
			p := &script{lines: []string{"y"}, wait: true}
			s := connect(t, rev, elicit.New("ts", set, p, nil, nil))
			a, err := elicitCall(t, s, map[string]any{"message": "ok?"})
			if err != nil || a.Action != "cancel" {
				t.Fatalf("got %+v, %v; want cancel", a, err)
			}
			if !strings.Contains(p.output(), "No answer within 300ms (mcp_servers.ts.elicitation.timeout): cancelled.") {
				t.Errorf("the person was not told:\n%s", p.output())
			}
		})
	}
}

// deep nests n objects.
func deep(n int) any {
	var v any = "x"
	for range n {
		v = map[string]any{"a": v}
	}
	return v
}

// TestHostileRequestsRefused: a request past a bound (message, schema
// size, depth, fields, choices) or not a form is refused with an error
// naming what was wrong, and the person is told; nothing of it is asked.
func TestHostileRequestsRefused(t *testing.T) {
	manyFields := map[string]any{}
	for i := range elicit.MaxFields + 1 {
		manyFields[fmt.Sprintf("f%d", i)] = map[string]any{"type": "string"}
	}
	manyChoices := make([]any, elicit.MaxOptions+1)
	for i := range manyChoices {
		manyChoices[i] = fmt.Sprint(i)
	}
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"long message", map[string]any{"message": strings.Repeat("m", elicit.MaxMessageBytes+1)}, "its message has 4097 bytes, more than the 4096"},
		{"deep schema", map[string]any{"schema": `{"type":"object","properties":{"x":` + mustJSON(deep(20)) + `}}`}, "levels of nesting"},
		{"large schema", map[string]any{"schema": `{"type":"object","properties":{"x":{"type":"string","description":"` + strings.Repeat("d", elicit.MaxSchemaBytes) + `"}}}`}, "bytes (or more), more than the 65536"},
		{"many fields", map[string]any{"schema": mustJSON(map[string]any{"type": "object", "properties": manyFields})}, "51 fields, more than the 50"},
		{"many choices", map[string]any{"schema": mustJSON(map[string]any{"type": "object", "properties": map[string]any{"c": map[string]any{"type": "string", "enum": manyChoices}}})}, "choices (or more), more than the 100"},
		{"nested object", map[string]any{"schema": `{"type":"object","properties":{"o":{"type":"object"}}}`}, `field "o" has type "object"`},
		{"not http", map[string]any{"mode": "url", "url": "javascript:alert(1)"}, "is not an http(s) URL"},
	}
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			for _, c := range cases {
				p := &script{lines: []string{"y", "y", "y"}}
				s := connect(t, rev, handler(p))
				a, err := elicitCall(t, s, c.args)
				if err == nil {
					t.Errorf("%s: answered %+v; want the request refused", c.name, a)
					continue
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: the server got %q; want it to say %q", c.name, err, c.want)
				}
				if out := p.output(); !strings.Contains(out, "elicitation request from 'ts' refused") || len(p.prompts) != 0 {
					t.Errorf("%s: the person was not told, or was asked:\n%s", c.name, out)
				}
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEscapesInMessage: escape sequences in the message, the titles, the
// choices and the URL reach the terminal escaped.
func TestEscapesInMessage(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\u202e"
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"f": map[string]any{"type": "string", "title": "T" + evil, "description": "D" + evil, "enum": []any{"v" + evil}, "enumNames": []any{"N" + evil}},
	}}
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			p := &script{lines: []string{"y", "1"}}
			s := connect(t, rev, handler(p))
			a, err := elicitCall(t, s, map[string]any{"message": "line one\n" + evil, "schema": mustJSON(schema)})
			if err != nil || a.Action != "accept" || a.Content["f"] != "v"+evil {
				t.Fatalf("got %+v, %v", a, err)
			}
			u := &script{lines: []string{"n"}}
			s = connect(t, rev, handler(u))
			if a, err := elicitCall(t, s, map[string]any{"mode": "url", "url": "https://example.com/a%1b[31m?x=" + "\x1b[31m", "message": evil}); err == nil {
				t.Logf("url with a raw escape: %+v", a)
			}
			for _, out := range []string{p.output(), u.output()} {
				if strings.ContainsAny(out, "\x1b\x07\u202e") {
					t.Errorf("a control character reached the terminal:\n%q", out)
				}
			}
			if out := p.output(); !strings.Contains(out, `| \x1b]0;pwned\x07`) || !strings.Contains(out, `| line one`) {
				t.Errorf("the message was not shown escaped, line by line:\n%s", out)
			}
		})
	}
}

// TestURLMode: the URL is shown with the server's name and opened only
// when the person says yes; a no declines.
func TestURLMode(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			var opened []string
			open := func(_ context.Context, u string) error { opened = append(opened, u); return nil }
			p := &script{lines: []string{"y"}}
			s := connect(t, rev, elicit.New("ts", elicit.DefaultSettings(), p, open, nil))
			const page = "https://example.com/connect?state=abc"
			a, err := elicitCall(t, s, map[string]any{"mode": "url", "url": page, "message": "Connect your account"})
			if err != nil || a.Action != "accept" || len(opened) != 1 || opened[0] != page {
				t.Fatalf("yes: got %+v, %v, opened %q", a, err, opened)
			}
			for _, w := range []string{"MCP server 'ts' asks you to open a web page:", "URL:  " + page, "Site: example.com", "Opened in your browser."} {
				if !strings.Contains(p.output(), w) {
					t.Errorf("not shown %q:\n%s", w, p.output())
				}
			}
			n := &script{lines: []string{"n"}}
			s = connect(t, rev, elicit.New("ts", elicit.DefaultSettings(), n, open, nil))
			if a, err := elicitCall(t, s, map[string]any{"mode": "url", "url": page}); err != nil || a.Action != "decline" || len(opened) != 1 {
				t.Fatalf("no: got %+v, %v, opened %q", a, err, opened)
			}
			nb := &script{lines: []string{"y"}}
			s = connect(t, rev, elicit.New("ts", elicit.DefaultSettings(), nb, func(context.Context, string) error { return errors.New("no browser") }, nil))
			if a, err := elicitCall(t, s, map[string]any{"mode": "url", "url": page}); err != nil || a.Action != "accept" || !strings.Contains(nb.output(), "Open this URL in your browser: "+page) {
				t.Fatalf("no browser: got %+v, %v\n%s", a, err, nb.output())
			}
		})
	}
}
