package transport

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/sdk"
)

// fakeConn is a Conn that records its Close.
type fakeConn struct {
	closed chan struct{}
	once   sync.Once
}

func (c *fakeConn) Read(ctx context.Context) ([]byte, error) { <-ctx.Done(); return nil, ctx.Err() }
func (c *fakeConn) Write(context.Context, []byte) error      { return nil }
func (c *fakeConn) SessionID() string                        { return "" }
func (c *fakeConn) Close() error                             { c.once.Do(func() { close(c.closed) }); return nil }
func (c *fakeConn) wasClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// recordingHost is a Host that records the warnings it gets.
type recordingHost struct {
	mu       sync.Mutex
	warnings []string
}

func (h *recordingHost) Headers(context.Context, HeadersRequest) (map[string]string, error) {
	return nil, nil
}
func (h *recordingHost) Challenge(context.Context, ChallengeRequest) (ChallengeAnswer, error) {
	return ChallengeAnswer{}, nil
}
func (h *recordingHost) Warn(w *sdk.Error) {
	h.mu.Lock()
	h.warnings = append(h.warnings, w.Message)
	h.mu.Unlock()
}

// earlyFixture starts an early open of cfg through a real pipe named by
// sdk.EarlyOpenFDEnv; the opener warns once, then waits for release.
func earlyFixture(t *testing.T, cfg Config) (e *earlyOpen, raw []byte, conn *fakeConn, release chan struct{}) {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// startEarly owns the descriptor it is given (it closes it): a copy.
	fd, err := syscall.Dup(int(r.Fd()))
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(sdk.EarlyOpenFDEnv, strconv.Itoa(fd))
	go func() { _, _ = w.Write(raw); w.Close() }()
	conn = &fakeConn{closed: make(chan struct{})}
	release = make(chan struct{})
	open := func(_ context.Context, got Config, host Host) (Conn, error) {
		if got.Server != cfg.Server {
			return nil, errors.New("another config opened")
		}
		host.Warn(&sdk.Error{Code: sdk.CodeGarbage, Message: "said before the Open"})
		<-release
		return conn, nil
	}
	e = startEarly(open, hclog.NewNullLogger())
	if e == nil {
		t.Fatal("no early open with the pipe named")
	}
	return e, raw, conn, release
}

// The Open of the same bytes takes the connection, and the warning it gave
// before is handed to that Open's host; a second Open gets nothing early.
func TestEarlyOpenTaken(t *testing.T) {
	e, raw, conn, release := earlyFixture(t, Config{Server: "s", Command: "srv"})
	close(release)
	host := &recordingHost{}
	got, err, ok := e.take(context.Background(), raw, host)
	if !ok || err != nil || got != conn {
		t.Fatalf("take: %v, %v, %v", got, err, ok)
	}
	if len(host.warnings) != 1 || host.warnings[0] != "said before the Open" {
		t.Fatalf("warnings handed on: %q", host.warnings)
	}
	if _, _, ok := e.take(context.Background(), raw, host); ok {
		t.Fatal("a second Open took the connection again")
	}
	if conn.wasClosed() {
		t.Fatal("the taken connection was closed")
	}
}

// An Open of other bytes does not take it, and it is closed.
func TestEarlyOpenOtherConfigCloses(t *testing.T) {
	e, _, conn, release := earlyFixture(t, Config{Server: "s", Command: "srv"})
	other, _ := json.Marshal(Config{Server: "s", Command: "other"})
	if _, _, ok := e.take(context.Background(), other, &recordingHost{}); ok {
		t.Fatal("an Open of another config took the early connection")
	}
	close(release)
	<-conn.closed
}

// An Open whose context ends while the early opening still runs fails
// with that context's error, and the connection is closed once open.
func TestEarlyOpenCancelled(t *testing.T) {
	e, raw, conn, release := earlyFixture(t, Config{Server: "s", Command: "srv"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err, ok := e.take(ctx, raw, &recordingHost{}); !ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("take with an ended context: %v, %v", err, ok)
	}
	close(release)
	<-conn.closed
}

// Never taken: shutdown closes it.
func TestEarlyOpenShutdown(t *testing.T) {
	e, _, conn, release := earlyFixture(t, Config{Server: "s", Command: "srv"})
	close(release)
	e.shutdown()
	if !conn.wasClosed() {
		t.Fatal("shutdown left the early connection open")
	}
}

// No pipe named: no early open.
func TestNoEarlyOpenWithoutPipe(t *testing.T) {
	t.Setenv(sdk.EarlyOpenFDEnv, "")
	if e := startEarly(func(context.Context, Config, Host) (Conn, error) { return nil, nil }, hclog.NewNullLogger()); e != nil {
		t.Fatal("an early open without a pipe")
	}
}
