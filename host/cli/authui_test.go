package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/cli/mcp/login"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/ui"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/hermes-agent/hermes/sdk/auth"
)

// A prompt abandoned when its context ends (the login's callback came
// first) takes nothing from the input: the next reader, an Ask or the
// Printer's own prompt, gets every byte typed.
func TestInputAbandonedPromptLosesNothing(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	reading := make(chan struct{}, 1)
	src, in := cmdkit.NewInput(&notifyingReader{r: pr, reading: reading})
	out := &lockedBuffer{}
	u := &cmdkit.TermUI{P: ui.New(out, out, in), Out: out, In: src}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := u.Ask(ctx, "Paste the redirect URL:"); done <- err }()
	// The read is under way (blocked in the pipe) when the prompt ends.
	<-reading
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned Ask = %v", err)
	}
	go func() { _, _ = io.WriteString(pw, "first line\nsecond\n"); _ = pw.Close() }()
	line, err := u.Ask(context.Background(), "again:")
	if err != nil || line != "first line" {
		t.Fatalf("Ask = %q, %v", line, err)
	}
	// The rest goes to whoever reads next, byte by byte.
	rest, _ := io.ReadAll(in)
	if string(rest) != "second\n" {
		t.Fatalf("rest = %q", rest)
	}
	if _, err := u.Ask(context.Background(), "more:"); err == nil || !strings.Contains(err.Error(), "the input ended") {
		t.Fatalf("Ask at the end of input = %v", err)
	}
	if got := out.String(); got != "  Paste the redirect URL: \n  again: \n  more: \n" {
		t.Errorf("output %q", got)
	}
}

// notifyingReader tells when a Read starts.
type notifyingReader struct {
	r       io.Reader
	reading chan struct{}
}

func (n *notifyingReader) Read(p []byte) (int, error) {
	select {
	case n.reading <- struct{}{}:
	default:
	}
	return n.r.Read(p)
}

// lockedBuffer is a buffer written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A pasted line is bounded: a longer one is read to its end and refused,
// and the next line is read as it is.
func TestInputLongLineRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", cmdkit.MaxAnswerBytes+10)
	src, _ := cmdkit.NewInput(strings.NewReader(long + "\nok\r\n"))
	if _, err := src.ReadLine(context.Background(), cmdkit.MaxAnswerBytes); !errors.Is(err, cmdkit.ErrLineTooLong) {
		t.Fatalf("long line: %v", err)
	}
	if l, err := src.ReadLine(context.Background(), cmdkit.MaxAnswerBytes); l != "ok" || err != nil {
		t.Fatalf("next line = %q, %v", l, err)
	}
}

// Show escapes what the plugin (and the network) sent: no escape sequence
// reaches the terminal, the URL stays on a line of its own.
func TestShowEscapes(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	u := &cmdkit.TermUI{P: ui.New(&out, &out, nil), Out: &out}
	_ = u.Show(context.Background(), auth.Notice{
		Text:     "Log in\x1b]0;pwned\x07 here\nsecond line\u202e",
		URL:      "https://as.example/authorize?x=1\x1b[2J",
		UserCode: "AB\rCD",
	})
	got := out.String()
	want := "  Log in\\x1b]0;pwned\\x07 here\n  second line\\u202e\n\n    https://as.example/authorize?x=1\\x1b[2J\n\n  Code: AB\\rCD\n"
	if got != want {
		t.Fatalf("Show printed %q\nwant %q", got, want)
	}
}

// OpenURL runs $BROWSER (its words, then the URL; no shell) and does not
// wait for it; without it, no browser opens over SSH or without a display;
// anything but an http(s) URL is refused.
func TestOpenURL(t *testing.T) {
	t.Parallel()
	environ := map[string]string{}
	u := &cmdkit.TermUI{Getenv: func(k string) string { return environ[k] }}
	log := filepath.Join(t.TempDir(), "browser.log")
	environ["BROWSER"] = testbin.Path(t, "fakebrowser") + " --no-fetch --log " + log
	if err := u.OpenURL(context.Background(), "https://as.example/authorize?a=1&b=$(touch x)"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 30*time.Second, "the browser to log the URL", func() bool {
		b, _ := os.ReadFile(log)
		return string(b) == "https://as.example/authorize?a=1&b=$(touch x)\n"
	})
	for _, bad := range []string{"file:///etc/passwd", "javascript:alert(1)", "-flag", "https://"} {
		if err := u.OpenURL(context.Background(), bad); err == nil {
			t.Errorf("OpenURL(%q) opened it", bad)
		}
	}

	environ = map[string]string{"SSH_CONNECTION": "10.0.0.1 22 10.0.0.2 22", "DISPLAY": ":0"}
	if err := u.OpenURL(context.Background(), "https://as.example/"); !errors.Is(err, auth.ErrNoBrowser) {
		t.Errorf("over SSH: %v", err)
	}
	environ = map[string]string{}
	if runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		if err := u.OpenURL(context.Background(), "https://as.example/"); !errors.Is(err, auth.ErrNoBrowser) {
			t.Errorf("without a display: %v", err)
		}
	}
}

func TestLoggedInLineAndDurations(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		st   auth.Status
		want string
	}{
		{auth.Status{}, "Logged in to 's'"},
		{auth.Status{Account: "a@b", Scopes: []string{"x", "y"}, ExpiresAt: now.Add(59*time.Minute + 10*time.Second)}, "Logged in to 's' as a@b (scopes: x y; expires in 59m)"},
		{auth.Status{ExpiresAt: now.Add(-time.Second)}, "Logged in to 's' (expired)"},
		{auth.Status{Scopes: []string{"x"}}, "Logged in to 's' (scopes: x)"},
	} {
		if got := login.LoggedInLine("s", c.st, now); got != c.want {
			t.Errorf("loggedInLine(%+v) = %q, want %q", c.st, got, c.want)
		}
	}
	for d, want := range map[time.Duration]string{
		45 * time.Second: "45s", 299*time.Second + 500*time.Millisecond: "5m", 3*time.Hour + 5*time.Minute: "3h5m",
		2 * time.Hour: "2h", 52 * time.Hour: "2d4h", -90 * time.Second: "2m", 72 * time.Hour: "3d",
	} {
		if got := login.ShortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestAuthState(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		st   auth.Status
		want string
	}{
		{auth.Status{}, login.AuthLoginNeeded},
		{auth.Status{CanRefresh: true}, login.AuthOK},
		{auth.Status{LoggedIn: true}, login.AuthOK},
		{auth.Status{LoggedIn: true, ExpiresAt: now.Add(time.Minute)}, login.AuthOK},
		{auth.Status{LoggedIn: true, ExpiresAt: now.Add(-time.Minute), CanRefresh: true}, login.AuthExpiredRefreshable},
		{auth.Status{LoggedIn: true, ExpiresAt: now.Add(-time.Minute)}, login.AuthLoginNeeded},
	} {
		if got := login.AuthState(c.st, now); got != c.want {
			t.Errorf("authState(%+v) = %q, want %q", c.st, got, c.want)
		}
	}
}
