package pluginhost_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// fakeConn is an in-memory server side: what the host writes is recorded
// (and, for "echo" messages, sent back), what the test pushes is read.
type fakeConn struct {
	concurrent bool
	in         chan []byte
	end        chan error

	mu       sync.Mutex
	written  []string
	headers  []http.Header
	sid      string
	version  string
	closed   bool
	blocked  chan context.Context // Writes of "block" park here until ctx ends
	writeErr error
	host     transport.Host
}

func newFake() *fakeConn {
	return &fakeConn{in: make(chan []byte, 16), end: make(chan error, 1), blocked: make(chan context.Context, 4)}
}

func (f *fakeConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-f.in:
		return m, nil
	case err := <-f.end:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeConn) Write(ctx context.Context, msg []byte) error {
	f.mu.Lock()
	f.written = append(f.written, string(msg))
	f.headers = append(f.headers, transport.MessageHeader(ctx))
	err := f.writeErr
	f.mu.Unlock()
	switch string(msg) {
	case "block":
		f.blocked <- ctx
		<-ctx.Done()
		return ctx.Err()
	case "session":
		f.mu.Lock()
		f.sid = "sess-1"
		f.mu.Unlock()
	}
	if strings.HasPrefix(string(msg), "echo:") {
		f.in <- []byte(strings.TrimPrefix(string(msg), "echo:"))
	}
	return err
}

func (f *fakeConn) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}

func (f *fakeConn) SessionID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sid
}

func (f *fakeConn) ConcurrentWrites() bool { return f.concurrent }

func (f *fakeConn) Properties() transport.Properties {
	return transport.Properties{HTTP: true, LegacyOnly: true}
}

func (f *fakeConn) SetProtocolVersion(v string) {
	f.mu.Lock()
	f.version = v
	f.mu.Unlock()
}

// events collects what the host side hears.
type events struct {
	msgs      chan []byte
	writeErrs chan *sdk.Error
	closed    chan *sdk.Error
	warnings  chan *sdk.Error
}

func (e *events) options() pluginhost.TransportOptions {
	return pluginhost.TransportOptions{
		OnMessage: func(m []byte) { e.msgs <- m },
		OnWriteError: func(seq uint64, err *sdk.Error) {
			e.writeErrs <- &sdk.Error{Code: err.Code, Message: err.Message, Status: int(seq)}
		},
		OnClosed:  func(err *sdk.Error) { e.closed <- err },
		OnWarning: func(w *sdk.Error) { e.warnings <- w },
	}
}

func newEvents() *events {
	return &events{msgs: make(chan []byte, 16), writeErrs: make(chan *sdk.Error, 16), closed: make(chan *sdk.Error, 1), warnings: make(chan *sdk.Error, 4)}
}

// connect serves open in-process over go-plugin's test connection (the
// plugin side of the contract) and opens a connection from the host side.
func connect(t *testing.T, open transport.Opener, ev *events, mod func(*pluginhost.TransportOptions)) *pluginhost.TransportConn {
	t.Helper()
	h := sdktest.TransportInProcess(t, open)
	opts := ev.options()
	if mod != nil {
		mod(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := h.Open(ctx, transport.Config{Server: "fake"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fakeOpener(f *fakeConn) transport.Opener {
	return func(_ context.Context, _ transport.Config, host transport.Host) (transport.Conn, error) {
		f.host = host
		return f, nil
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

// Messages cross both ways as the same bytes, headers travel with a
// message, properties, the protocol version and the session id cross too.
func TestMessagesAndMetadata(t *testing.T) {
	f := newFake()
	ev := newEvents()
	c := connect(t, fakeOpener(f), ev, nil)
	if p := c.Properties(); !p.HTTP || !p.LegacyOnly {
		t.Fatalf("properties = %+v", p)
	}
	msg := `echo:{"jsonrpc":"2.0","id":1,"result":{"text":"ü \u2028 \n"}}`
	if _, err := c.Write([]byte(msg), http.Header{"Mcp-Method": {"tools/call"}}); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, ev.msgs, "echoed message"); string(got) != strings.TrimPrefix(msg, "echo:") {
		t.Fatalf("got %q", got)
	}
	f.mu.Lock()
	h := f.headers[0]
	f.mu.Unlock()
	if h.Get("Mcp-Method") != "tools/call" {
		t.Fatalf("message header = %v", h)
	}
	c.SetProtocolVersion("2025-11-25")
	if _, err := c.Write([]byte("session"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("echo:x"), nil); err != nil {
		t.Fatal(err)
	}
	recv(t, ev.msgs, "second echo")
	if c.SessionID() != "sess-1" {
		t.Fatalf("session id = %q", c.SessionID())
	}
	f.mu.Lock()
	v := f.version
	f.mu.Unlock()
	if v != "2025-11-25" {
		t.Fatalf("protocol version = %q", v)
	}
}

// A cancel frame ends the ctx of that message's Write (concurrent conns);
// a failed Write reaches the host with its code and the message's seq.
func TestCancelAndWriteError(t *testing.T) {
	f := newFake()
	f.concurrent = true
	ev := newEvents()
	c := connect(t, fakeOpener(f), ev, nil)
	seq, err := c.Write([]byte("block"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := recv(t, f.blocked, "blocked write")
	c.Cancel(seq)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not end the write's context")
	}
	e := recv(t, ev.writeErrs, "write error of the cancelled message")
	if e.Code != sdk.CodeCanceled || uint64(e.Status) != seq {
		t.Fatalf("write error = %+v, want canceled for seq %d", e, seq)
	}
	f.mu.Lock()
	f.writeErr = sdk.NewError(sdk.CodeAuth, "401")
	f.mu.Unlock()
	seq, _ = c.Write([]byte("x"), nil)
	if e := recv(t, ev.writeErrs, "write error"); e.Code != sdk.CodeAuth || uint64(e.Status) != seq {
		t.Fatalf("write error = %+v", e)
	}
}

// Warnings reach the host; the end of the connection reaches it once, with
// the plugin's reason and code.
func TestWarningAndEnd(t *testing.T) {
	f := newFake()
	ev := newEvents()
	c := connect(t, fakeOpener(f), ev, nil)
	f.host.Warn(sdk.NewError(sdk.CodeGarbage, "noise on stdout"))
	if w := recv(t, ev.warnings, "warning"); w.Code != sdk.CodeGarbage || c.LastWarning() == nil {
		t.Fatalf("warning = %+v", w)
	}
	f.end <- sdk.NewError(sdk.CodeClosed, "server exited with status 3")
	e := recv(t, ev.closed, "end of connection")
	if e.Code != sdk.CodeClosed || !strings.Contains(e.Message, "status 3") {
		t.Fatalf("end = %+v", e)
	}
	<-c.Done()
	if _, err := c.Write([]byte("x"), nil); sdk.ErrorCode(err) != sdk.CodeClosed {
		t.Fatalf("write after the end = %v", err)
	}
}

// A message over the host's limit ends the connection with a too_large
// error that names the server, the size, the limit and the key to raise.
func TestFrameLimit(t *testing.T) {
	f := newFake()
	ev := newEvents()
	connect(t, fakeOpener(f), ev, func(o *pluginhost.TransportOptions) { o.MaxMessageBytes = 1000; o.LimitName = "max_message_mb" })
	f.in <- []byte(strings.Repeat("a", 1001))
	e := recv(t, ev.closed, "end of connection")
	for _, want := range []string{`"fake"`, "1001 bytes", "1000 bytes", "max_message_mb"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("error %q lacks %q", e.Message, want)
		}
	}
	if e.Code != sdk.CodeTooLarge {
		t.Fatalf("code = %q", e.Code)
	}
}

// An open error keeps its code; Close closes the plugin's connection.
func TestOpenErrorAndClose(t *testing.T) {
	h := sdktest.TransportInProcess(t, func(context.Context, transport.Config, transport.Host) (transport.Conn, error) {
		return nil, sdk.NewError(sdk.CodeNotFound, "missing executable 'npx'")
	})
	_, err := h.Open(context.Background(), transport.Config{Server: "x"}, pluginhost.TransportOptions{})
	var se *sdk.Error
	if !errors.As(err, &se) || se.Code != sdk.CodeNotFound {
		t.Fatalf("open error = %v", err)
	}

	f := newFake()
	c := connect(t, fakeOpener(f), newEvents(), nil)
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if !closed {
		t.Fatal("Close did not close the plugin's connection")
	}
}

// Send returns once the plugin has written the message on (even over a
// transport that runs writes concurrently), with the write's error code
// when it failed, and with ctx's error when the write does not finish.
func TestSendWaitsForTheWrite(t *testing.T) {
	f := newFake()
	f.concurrent = true
	c := connect(t, fakeOpener(f), newEvents(), nil)
	if err := c.Send(context.Background(), []byte("first")); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	written := append([]string(nil), f.written...)
	f.mu.Unlock()
	if len(written) != 1 || written[0] != "first" {
		t.Fatalf("after Send the plugin wrote %q", written)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Send(ctx, []byte("block")) }()
	wctx := recv(t, f.blocked, "blocked write")
	select {
	case err := <-errc:
		t.Fatalf("Send returned %v while the write was still running", err)
	default:
	}
	cancel()
	if err := recv(t, errc, "Send's return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Send after cancel = %v", err)
	}
	<-wctx.Done() // the cancel reached the plugin's write too
	f.mu.Lock()
	f.writeErr = sdk.NewError(sdk.CodeAuth, "401")
	f.mu.Unlock()
	if err := c.Send(context.Background(), []byte("x")); sdk.ErrorCode(err) != sdk.CodeAuth {
		t.Fatalf("a failed write: Send = %v", err)
	}
}
