package testserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hermes-agent/hermes/internal/testserver"
)

// modernMeta is the _meta every 2026-07-28 request carries.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func initializeMsg(id int, version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, id, version)
}

func discoverMsg(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{%s}}`, id, modernMeta)
}

func modernListMsg(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`, id, modernMeta)
}

func legacyListMsg(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id)
}

// reply is the answer to one request, with its HTTP status (0 over stdio).
type reply struct {
	Status      int
	ContentType string
	raw         string

	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// peer speaks raw JSON-RPC to a hermes-testserver, one request at a time.
type peer interface {
	call(t *testing.T, msg string) reply
}

// protoPeer starts the binary with args over transport "stdio" or "http".
func protoPeer(t *testing.T, transport string, args ...string) peer {
	t.Helper()
	if transport == "http" {
		return &httpPeer{url: startHTTP(t, append([]string{"--http", "127.0.0.1:0"}, args...)...) + testserver.MCPPath}
	}
	return stdioPeer{startLines(t, args...)}
}

type stdioPeer struct{ r *rawStdio }

func (p stdioPeer) call(t *testing.T, msg string) reply {
	t.Helper()
	p.r.send(msg)
	line := p.r.line()
	rep := reply{raw: line}
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		t.Fatalf("answer to %s: %v: %s", msg, err, line)
	}
	return rep
}

// httpPeer POSTs each request to the streamable HTTP endpoint. A modern
// request carries the headers 2026-07-28 requires; a legacy one the session
// and version initialize established.
type httpPeer struct {
	url, session, version string
}

func (p *httpPeer) call(t *testing.T, msg string) reply {
	t.Helper()
	var m struct {
		Method string `json:"method"`
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	switch {
	case strings.Contains(msg, modernMeta):
		req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
		req.Header.Set(mcp.HeaderMethod, m.Method)
	case m.Method != "initialize" && p.session != "":
		req.Header.Set("Mcp-Session-Id", p.session)
		req.Header.Set(mcp.HeaderProtocolVersion, p.version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	rep := reply{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), raw: string(body)}
	if !strings.HasPrefix(rep.ContentType, "application/json") {
		return rep
	}
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("answer to %s: %v: %s", msg, err, body)
	}
	if m.Method == "initialize" && rep.Result != nil {
		p.session = resp.Header.Get("Mcp-Session-Id")
		p.version = initializedVersion(t, rep)
	}
	return rep
}

// initializedVersion is the protocolVersion of an initialize result.
func initializedVersion(t *testing.T, rep reply) string {
	t.Helper()
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if rep.Result == nil || json.Unmarshal(rep.Result, &res) != nil {
		t.Fatalf("initialize: no result: %s", rep.raw)
	}
	return res.ProtocolVersion
}

// wantInitialized checks that rep answers initialize with version.
func wantInitialized(t *testing.T, rep reply, version string) {
	t.Helper()
	if got := initializedVersion(t, rep); got != version {
		t.Fatalf("initialize answered protocolVersion %q, want %q: %s", got, version, rep.raw)
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		t.Fatalf("initialize: HTTP status %d", rep.Status)
	}
}

// wantUnsupported checks that rep is the UNSUPPORTED_PROTOCOL_VERSION error
// naming supported and requested; over HTTP with status 400 and a JSON body.
func wantUnsupported(t *testing.T, rep reply, supported []string, requested string) {
	t.Helper()
	if rep.Status != 0 && (rep.Status != http.StatusBadRequest || !strings.HasPrefix(rep.ContentType, "application/json")) {
		t.Fatalf("HTTP %d %q, want 400 with a JSON body: %s", rep.Status, rep.ContentType, rep.raw)
	}
	if rep.Error == nil || rep.Error.Code != mcp.UNSUPPORTED_PROTOCOL_VERSION {
		t.Fatalf("want error %d: %s", mcp.UNSUPPORTED_PROTOCOL_VERSION, rep.raw)
	}
	var data mcp.UnsupportedProtocolVersionData
	if err := json.Unmarshal(rep.Error.Data, &data); err != nil {
		t.Fatalf("error data: %v: %s", err, rep.raw)
	}
	if !slices.Equal(data.Supported, supported) || data.Requested != requested {
		t.Fatalf("error data %+v, want supported %q, requested %q", data, supported, requested)
	}
}

// wantDiscovered checks that rep answers server/discover listing versions.
func wantDiscovered(t *testing.T, rep reply, versions []string) {
	t.Helper()
	var res mcp.DiscoverResult
	if rep.Error != nil || rep.Result == nil || json.Unmarshal(rep.Result, &res) != nil {
		t.Fatalf("server/discover: %s", rep.raw)
	}
	if !slices.Equal(res.SupportedVersions, versions) {
		t.Fatalf("supportedVersions %q, want %q", res.SupportedVersions, versions)
	}
}

// wantMethodNotFound checks that rep is -32601, as from a server that
// predates the method; over HTTP in a 200 JSON response.
func wantMethodNotFound(t *testing.T, rep reply) {
	t.Helper()
	if rep.Status != 0 && (rep.Status != http.StatusOK || !strings.HasPrefix(rep.ContentType, "application/json")) {
		t.Fatalf("HTTP %d %q, want 200 with a JSON body: %s", rep.Status, rep.ContentType, rep.raw)
	}
	if rep.Error == nil || rep.Error.Code != mcp.METHOD_NOT_FOUND || rep.Error.Message != "Method not found" {
		t.Fatalf("want -32601 Method not found: %s", rep.raw)
	}
}

// wantTools checks that rep lists the tools, echo among them.
func wantTools(t *testing.T, rep reply) {
	t.Helper()
	if rep.Error != nil || !strings.Contains(string(rep.Result), `"name":"echo"`) {
		t.Fatalf("tools/list: %s", rep.raw)
	}
}

// eachTransport runs f over stdio and over streamable HTTP.
func eachTransport(t *testing.T, f func(t *testing.T, transport string)) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			f(t, tr)
		})
	}
}

// A server speaking only 2026-07-28 refuses initialize with
// UNSUPPORTED_PROTOCOL_VERSION (HTTP 400) and lists only 2026-07-28 in
// server/discover.
func TestProtocolsModernOnly(t *testing.T) {
	t.Parallel()
	modern := []string{mcp.ProtocolVersion20260728}
	eachTransport(t, func(t *testing.T, tr string) {
		p := protoPeer(t, tr, "--protocols", "2026-07-28")
		wantUnsupported(t, p.call(t, initializeMsg(1, "2025-11-25")), modern, "2025-11-25")
		wantUnsupported(t, p.call(t, initializeMsg(2, "2024-11-05")), modern, "2024-11-05")
		wantDiscovered(t, p.call(t, discoverMsg(3)), modern)
		wantTools(t, p.call(t, modernListMsg(4)))
	})
}

// A server speaking only legacy revisions answers server/discover with
// -32601, refuses requests declaring 2026-07-28, and answers initialize
// with the revision asked when listed, else the newest listed.
func TestProtocolsLegacyOnly(t *testing.T) {
	t.Parallel()
	listed := []string{"2025-11-25", "2025-06-18"}
	eachTransport(t, func(t *testing.T, tr string) {
		p := protoPeer(t, tr, "--protocols", "2025-06-18,2025-11-25")
		wantMethodNotFound(t, p.call(t, discoverMsg(1)))
		wantUnsupported(t, p.call(t, modernListMsg(2)), listed, "2026-07-28")
		wantInitialized(t, p.call(t, initializeMsg(3, "2025-06-18")), "2025-06-18")
		wantTools(t, p.call(t, legacyListMsg(4)))

		q := protoPeer(t, tr, "--protocols", "2025-06-18,2025-11-25")
		wantInitialized(t, q.call(t, initializeMsg(1, "2024-11-05")), "2025-11-25")
		wantTools(t, q.call(t, legacyListMsg(2)))
	})
}

// --protocols 2025-03-26 answers initialize(2025-11-25) with 2025-03-26 and
// then serves that revision.
func TestProtocolsOldRevision(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr string) {
		p := protoPeer(t, tr, "--protocols", "2025-03-26")
		wantInitialized(t, p.call(t, initializeMsg(1, "2025-11-25")), "2025-03-26")
		wantTools(t, p.call(t, legacyListMsg(2)))
		wantMethodNotFound(t, p.call(t, discoverMsg(3)))
	})
}

// A mixed list serves both eras, each restricted to the list.
func TestProtocolsMixed(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr string) {
		p := protoPeer(t, tr, "--protocols", "2025-06-18, 2026-07-28")
		wantDiscovered(t, p.call(t, discoverMsg(1)), []string{"2026-07-28", "2025-06-18"})
		wantTools(t, p.call(t, modernListMsg(2)))
		wantInitialized(t, p.call(t, initializeMsg(3, "2025-11-25")), "2025-06-18")
		wantTools(t, p.call(t, legacyListMsg(4)))
	})
}

// Over HTTP, a request after initialize naming an unlisted revision in its
// Mcp-Protocol-Version header gets the 400 of an unknown revision.
func TestProtocolsHTTPHeader(t *testing.T) {
	t.Parallel()
	p := protoPeer(t, "http", "--protocols", "2025-06-18").(*httpPeer)
	wantInitialized(t, p.call(t, initializeMsg(1, "2025-06-18")), "2025-06-18")
	p.version = "2025-11-25"
	if rep := p.call(t, legacyListMsg(2)); rep.Status != http.StatusBadRequest || !strings.Contains(rep.raw, "Unsupported protocol version: 2025-11-25") {
		t.Fatalf("HTTP %d: %s", rep.Status, rep.raw)
	}
}

// Without --protocols the server speaks every revision mcp-go knows.
func TestProtocolsDefault(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr string) {
		p := protoPeer(t, tr)
		wantDiscovered(t, p.call(t, discoverMsg(1)), mcp.ValidProtocolVersions)
		wantInitialized(t, p.call(t, initializeMsg(2, "2024-11-05")), "2024-11-05")
	})
}

// mcp-go's own client settles on the era the list allows.
func TestProtocolsClient(t *testing.T) {
	t.Parallel()
	if c := stdioClient(t, "", nil, "--protocols", "2025-06-18"); c.ProtocolVersion() != "2025-06-18" {
		t.Errorf("legacy-only server: negotiated %q", c.ProtocolVersion())
	}
	if c := stdioClient(t, "", nil, "--protocols", "2026-07-28"); c.ProtocolVersion() != "2026-07-28" {
		t.Errorf("modern-only server: negotiated %q", c.ProtocolVersion())
	}
}

// The filter passes the messages it does not refuse through unchanged,
// whatever their size or shape.
func TestProtocolsPassThrough(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr string) {
		p := protoPeer(t, tr, "--protocols", "2026-07-28,2025-11-25")
		wantInitialized(t, p.call(t, initializeMsg(1, "2025-11-25")), "2025-11-25")
		big := strings.Repeat("é", 1<<20)
		rep := p.call(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, big))
		if rep.Error != nil || !bytes.Contains(rep.Result, []byte(big)) {
			t.Fatalf("echo of 2 MiB: %.200s", rep.raw)
		}
		if tr == "stdio" {
			rep := p.call(t, `not json`)
			if rep.Error == nil || rep.Error.Code != mcp.PARSE_ERROR {
				t.Fatalf("not json: %s", rep.raw)
			}
		}
	})
}

func TestProtocolsFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string // nil: every revision
		err  string
	}{
		{args: nil},
		{args: []string{"--protocols", ""}},
		{args: []string{"--protocols", "2025-03-26"}, want: []string{"2025-03-26"}},
		{args: []string{"--protocols", "2024-11-05,2026-07-28,2025-06-18,2026-07-28"}, want: []string{"2026-07-28", "2025-06-18", "2024-11-05"}},
		{args: []string{"--protocols", "2025-11-25", "--sse", "127.0.0.1:0"}, want: []string{"2025-11-25"}},
		{args: []string{"--protocols", "2025-11-25,2025-13-01"}, err: `unknown revision "2025-13-01"; valid revisions are 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05`},
		{args: []string{"--protocols", "2025-11-25,"}, err: `unknown revision ""`},
		{args: []string{"--protocols", "2026-07-28", "--sse", "127.0.0.1:0"}, err: "cannot be served over --sse"},
		{args: []string{"--protocols", "2026-07-28", "--huge-result", "10"}, err: "--protocols does not apply to a hostile server"},
	} {
		cfg, err := testserver.ParseConfig(tc.args, "", nil)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case !slices.Equal(cfg.Protocols, tc.want) || (tc.want == nil) != (cfg.Protocols == nil):
			t.Errorf("%q: Protocols %q, want %q", tc.args, cfg.Protocols, tc.want)
		}
	}
	_, stderr, code := runBinary(t, nil, "", "--protocols", "2026-01-01")
	if code != 2 || !strings.Contains(stderr, "valid revisions are 2026-07-28, 2025-11-25") {
		t.Errorf("bad --protocols: exit %d, stderr %q", code, stderr)
	}
}

// In process, so that the race detector sees the filter: refusals and
// mcp-go's answers share stdout one whole line each, every request is
// answered once, and Run ends when stdin does.
func TestProtocolsStdioInProcess(t *testing.T) {
	t.Parallel()
	cfg, err := testserver.ParseConfig([]string{"--protocols", "2025-11-25"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- testserver.Run(context.Background(), cfg, inR, outW, io.Discard) }()
	go func() {
		fmt.Fprintln(inW, initializeMsg(0, "2025-06-18"))
		for i := 1; i <= 200; i++ {
			switch i % 3 {
			case 0:
				fmt.Fprintln(inW, discoverMsg(i))
			case 1:
				fmt.Fprintln(inW, modernListMsg(i))
			default:
				fmt.Fprintln(inW, legacyListMsg(i))
			}
		}
		inW.Close()
	}()
	seen := map[int]bool{}
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	for len(seen) < 201 && sc.Scan() {
		var rep struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if seen[rep.ID] {
			t.Fatalf("id %d answered twice", rep.ID)
		}
		seen[rep.ID] = true
		want := 0
		switch {
		case rep.ID == 0:
			if !strings.Contains(string(rep.Result), `"protocolVersion":"2025-11-25"`) {
				t.Fatalf("initialize: %s", sc.Text())
			}
		case rep.ID%3 == 0:
			want = mcp.METHOD_NOT_FOUND
		case rep.ID%3 == 1:
			want = mcp.UNSUPPORTED_PROTOCOL_VERSION
		}
		got := 0
		if rep.Error != nil {
			got = rep.Error.Code
		}
		if got != want {
			t.Fatalf("id %d: %s, want error code %d", rep.ID, sc.Text(), want)
		}
	}
	if len(seen) < 201 {
		t.Fatalf("%d answers (%v)", len(seen), sc.Err())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end with stdin")
	}
}
