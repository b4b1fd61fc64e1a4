package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Binary is the name of the program that makes the calls: a process of
// its own, so that the OpenAI client library is linked there and not
// into hermes, whose every command would pay its initialisation.
const Binary = "hermes-model-openai"

// KeyVar is the variable the key reaches Binary in (never argv).
const KeyVar = "HERMES_MODEL_API_KEY"

// Call is what hermes sends Binary on its stdin; Binary answers with
// JSON lines: {"text": delta} as the text streams in, then one
// {"response": ...} or {"error": ...}.
type Call struct {
	Settings Settings `json:"settings"`
	Request  Request  `json:"request"`
}

// Line is one line of Binary's answer.
type Line struct {
	Text     string    `json:"text,omitempty"`
	Response *Response `json:"response,omitempty"`
	Error    *Error    `json:"error,omitempty"`
}

// Client calls the endpoint of its settings through Binary. It is safe
// for concurrent use.
type Client struct {
	s *Settings
	// path is Binary's path; env is the environment it runs with.
	path string
	env  []string
}

// New returns a client of the endpoint s describes, calling through the
// program at path (Binary) with the environment env (the run's: proxies,
// certificates); the key is added to it.
func New(s *Settings, path string, env []string) *Client {
	return &Client{s: s, path: path, env: env}
}

// Settings returns the client's settings.
func (c *Client) Settings() *Settings { return c.s }

// maxLine bounds one line of Binary's answer beyond the response bound.
const lineSlack = 1 << 20

// Chat asks the model for one completion, streamed. Errors are *Error
// or say what went wrong with Binary; none of them shows the key
// (Settings.RedactError), whatever the endpoint or Binary echoed.
func (c *Client) Chat(ctx context.Context, req Request) (*Response, error) {
	res, err := c.chat(ctx, req)
	return res, c.s.RedactError(err)
}

func (c *Client) chat(ctx context.Context, req Request) (*Response, error) {
	in, err := json.Marshal(Call{Settings: *c.s, Request: req})
	if err != nil {
		return nil, fmt.Errorf("encode the model request: %w", err)
	}
	// The call's own deadline ends the process too.
	ctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path)
	cmd.Stdin = bytes.NewReader(in)
	env := append([]string{}, c.env...)
	cmd.Env = append(env, KeyVar+"="+c.s.APIKey)
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, left: 4096}
	ownGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run %s (%w); reinstall hermes (make install)", c.path, err)
	}
	res, merr, rerr := readAnswer(out, int(c.s.MaxResponseBytes)*2+lineSlack, req.OnText)
	// Whatever is left is read to its end, so the program never blocks
	// on a full pipe.
	_, _ = io.Copy(io.Discard, out)
	werr := cmd.Wait()
	switch {
	case merr != nil:
		return nil, NewError(merr, c.s)
	case res != nil:
		return res, nil
	case ctx.Err() != nil:
		e := &Error{Kind: KindTimeout, BaseURL: c.s.BaseURL, Model: req.Model, Detail: "the call was cancelled"}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			e.Detail = fmt.Sprintf("within model.timeout (%s)", c.s.Timeout)
		}
		return nil, NewError(e, c.s)
	case rerr != nil:
		return nil, fmt.Errorf("%s answered a line hermes cannot read (%v); reinstall hermes (make install)", Binary, rerr)
	default:
		return nil, fmt.Errorf("%s ended without an answer (%v): %s", Binary, werr, Clean(c.s.Redact(strings.TrimSpace(stderr.String()))))
	}
}

// readAnswer reads Binary's answer: JSON lines of at most maxLine bytes,
// each a Line. Text deltas go to onText (when set) as they arrive; the
// last response or error line wins. A line that is not a Line is skipped;
// a line longer than maxLine ends the reading with an error.
func readAnswer(r io.Reader, maxLine int, onText func(string)) (*Response, *Error, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	var res *Response
	var merr *Error
	for sc.Scan() {
		var l Line
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch {
		case l.Response != nil:
			res = l.Response
		case l.Error != nil:
			merr = l.Error
		case l.Text != "" && onText != nil:
			onText(l.Text)
		}
	}
	return res, merr, sc.Err()
}

// limited writes at most left bytes to w, then drops the rest.
type limited struct {
	w    *bytes.Buffer
	left int
}

func (l *limited) Write(p []byte) (int, error) {
	n := min(len(p), l.left)
	l.w.Write(p[:n])
	l.left -= n
	return len(p), nil
}
