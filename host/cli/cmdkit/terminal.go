package cmdkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/pkg/browser"
	"golang.org/x/term"
)

// Limits on what an auth plugin shows and what the user types back: a
// notice comes from a plugin and the network, an answer from a paste.
const (
	MaxAnswerBytes   = 16 << 10 // one line typed or pasted at a prompt
	MaxNoticeBytes   = 4 << 10  // a notice's text
	MaxNoticeLines   = 20
	MaxURLBytes      = 8 << 10
	MaxUserCodeBytes = 64
	// BrowserStartWait is how long a browser launcher (xdg-open) may take
	// to fail before it is taken to be opening the page: launchers often
	// run until the browser is up, or for as long as it is.
	BrowserStartWait = 3 * time.Second
)

// ErrLineTooLong is an answer longer than maxAnswerBytes.
var ErrLineTooLong = fmt.Errorf("the line typed is longer than %d KiB", MaxAnswerBytes>>10)

// TermUI is the terminal relayed to auth plugins during a login
// (sdk/auth.UI): it opens the browser, shows the plugin's notices escaped,
// and reads the answers from stdin. It is always interactive: a login is a
// command the user typed, also when stdin is a pipe.
type TermUI struct {
	P   *ui.Printer
	Out io.Writer
	In  *InputSource
	// Getenv reads BROWSER and the display and SSH variables.
	Getenv func(string) string
}

// Interactive reports true: the user asked for the login.
func (u *TermUI) Interactive() bool { return true }

// OpenURL opens rawURL with $BROWSER when it is set (its words, then the
// URL; no shell, its output discarded, not waited for), else with the
// system's browser where one can open: not over SSH, and on macOS, Windows,
// or a Linux/BSD desktop (DISPLAY or WAYLAND_DISPLAY). Elsewhere it returns
// auth.ErrNoBrowser, and the plugin shows the URL instead.
func (u *TermUI) OpenURL(ctx context.Context, rawURL string) error {
	parsed, err := url.Parse(rawURL)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return errors.New("not opening the login page: it is not an http(s) URL")
	}
	if words := strings.Fields(u.Getenv("BROWSER")); len(words) > 0 {
		cmd := exec.Command(words[0], append(words[1:], rawURL)...)
		// Stdin, Stdout and Stderr stay nil: /dev/null.
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting $BROWSER (%s): %w", words[0], err)
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
	if !CanOpenBrowser(u.Getenv) {
		return auth.ErrNoBrowser
	}
	return OpenSystemBrowser(ctx, rawURL)
}

// BrowserOnce sets pkg/browser's output once: a launcher's chatter must
// not reach hermes' stdout or stderr.
var BrowserOnce sync.Once

// OpenSystemBrowser runs pkg/browser, which waits for the launcher; a
// launcher still running after browserStartWait is taken to be opening the
// page.
func OpenSystemBrowser(ctx context.Context, rawURL string) error {
	BrowserOnce.Do(func() { browser.Stdout, browser.Stderr = io.Discard, io.Discard })
	done := make(chan error, 1)
	go func() { done <- browser.OpenURL(rawURL) }()
	t := time.NewTimer(BrowserStartWait)
	defer t.Stop()
	select {
	case err := <-done:
		if errors.Is(err, exec.ErrNotFound) {
			return auth.ErrNoBrowser
		}
		return err
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CanOpenBrowser reports whether a browser can open where hermes runs.
func CanOpenBrowser(getenv func(string) string) bool {
	for _, k := range []string{"SSH_CLIENT", "SSH_TTY", "SSH_CONNECTION"} {
		if getenv(k) != "" {
			return false
		}
	}
	switch runtime.GOOS {
	case "darwin", "windows":
		return true
	}
	return getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != ""
}

// Show prints the notice: its text, the URL on a line of its own, the user
// code. All of it is the plugin's (and the network's) text: each line is
// escaped and bounded.
func (u *TermUI) Show(_ context.Context, n auth.Notice) error {
	text := strings.TrimRight(Cut(n.Text, MaxNoticeBytes), "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > MaxNoticeLines {
		lines = append(lines[:MaxNoticeLines], "...")
	}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			u.P.Line("%s", strings.TrimRight(l, "\r"))
		}
	}
	if n.URL != "" {
		u.P.Line("")
		u.P.Line("  %s", Cut(n.URL, MaxURLBytes))
		u.P.Line("")
	}
	if n.UserCode != "" {
		u.P.Line("Code: %s", Cut(n.UserCode, MaxUserCodeBytes))
	}
	return nil
}

// Ask prints the prompt and returns the next line typed (pasted), up to
// MaxAnswerBytes. It ends with ctx's error when ctx ends first (the
// browser's callback arrived): the line is then left to whoever reads next.
func (u *TermUI) Ask(ctx context.Context, prompt string) (string, error) {
	fmt.Fprintf(u.Out, "  %s ", termsafe.Escape(Cut(strings.TrimSpace(prompt), 200)))
	line, err := u.In.ReadLine(ctx, MaxAnswerBytes)
	if err != nil {
		// End the prompt's line: what is printed next starts a line.
		fmt.Fprintln(u.Out)
		if errors.Is(err, io.EOF) {
			return "", errors.New("no answer: the input ended")
		}
		return "", err
	}
	if !u.In.Terminal() {
		// A pasted line from a pipe was not echoed.
		fmt.Fprintln(u.Out)
	}
	return strings.TrimSpace(line), nil
}

// Cut bounds s to n bytes, on a rune boundary, marking the cut.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "..."
}

// InputSource is the process's only reader of stdin, shared by the
// Printer's prompts and the auth UI's Ask. One goroutine reads, one byte
// at a time and only when a reader wants one, so a prompt abandoned when
// its context ended (a login's callback arrived first) leaves at most the
// byte it was waiting for, which the next reader gets: nothing typed is
// lost or taken by a reader that no longer wants it.
type InputSource struct {
	Src  io.Reader
	once sync.Once
	req  chan struct{}
	res  chan InputByte
	// turn (capacity 1) is held by the one reader at a time; pending
	// (guarded by turn) says a byte was asked for and not yet taken.
	turn    chan struct{}
	pending bool
	isTerm  bool
}

type InputByte struct {
	b   byte
	err error
}

// FileInput is an inputSource over a file (the real stdin): the Printer
// finds its descriptor to tell a terminal and switch it to raw mode.
type FileInput struct {
	*InputSource
	fd uintptr
}

// Fd returns the descriptor of the file behind the source.
func (f *FileInput) Fd() uintptr { return f.fd }

// NewInput returns the shared source over r and the reader the Printer
// uses (the same source, with a descriptor when r is a file).
func NewInput(r io.Reader) (*InputSource, io.Reader) {
	s := &InputSource{Src: r, req: make(chan struct{}), res: make(chan InputByte, 1), turn: make(chan struct{}, 1)}
	if f, ok := r.(*os.File); ok && f != nil {
		fd := f.Fd()
		s.isTerm = term.IsTerminal(int(fd))
		return s, &FileInput{InputSource: s, fd: fd}
	}
	return s, s
}

func (s *InputSource) Terminal() bool { return s.isTerm }

// loop reads one byte per request.
func (s *InputSource) loop() {
	var one [1]byte
	for range s.req {
		for {
			n, err := s.Src.Read(one[:])
			if n == 1 {
				s.res <- InputByte{b: one[0]}
				break
			}
			if err != nil {
				s.res <- InputByte{err: err}
				break
			}
		}
	}
}

// readByte returns the next byte of input, or ctx's error when ctx ends
// first.
func (s *InputSource) readByte(ctx context.Context) (byte, error) {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-s.turn }()
	s.once.Do(func() { go s.loop() })
	if !s.pending {
		select {
		case s.req <- struct{}{}:
			s.pending = true
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	select {
	case r := <-s.res:
		s.pending = false
		return r.b, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Read reads one byte (the Printer reads its prompts byte by byte).
func (s *InputSource) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b, err := s.readByte(context.Background())
	if err != nil {
		return 0, err
	}
	p[0] = b
	return 1, nil
}

// ReadLine reads up to a newline (dropped, with a carriage return before
// it). A line longer than max is read to its end and refused. At the end
// of input it returns what was read, or io.EOF when nothing was.
func (s *InputSource) ReadLine(ctx context.Context, max int) (string, error) {
	var buf []byte
	long := false
	for {
		b, err := s.readByte(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) && len(buf) > 0 && !long {
				return string(buf), nil
			}
			if long && errors.Is(err, io.EOF) {
				return "", ErrLineTooLong
			}
			return "", err
		}
		if b == '\n' {
			if long {
				return "", ErrLineTooLong
			}
			return strings.TrimSuffix(string(buf), "\r"), nil
		}
		if len(buf) >= max {
			long = true
			continue
		}
		buf = append(buf, b)
	}
}
