package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// termPrompter is the person at this terminal (elicit.Prompter): it writes
// to stderr, so that a command's output stays clean, and reads stdin's
// lines through the run's one reader.
type termPrompter struct {
	in   *inputSource
	out  io.Writer
	turn chan struct{} // held by the conversation in progress
}

// Converse runs fn once no other conversation holds the terminal.
func (p *termPrompter) Converse(ctx context.Context, fn func(elicit.Terminal) error) error {
	if !p.in.terminal() {
		return elicit.ErrNoPerson
	}
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.turn }()
	return fn(p)
}

// Say prints text (escaped once more: it is a server's, shown).
func (p *termPrompter) Say(text string) {
	fmt.Fprintln(p.out, termsafe.EscapeText(text))
}

// Ask prints prompt and reads a line of at most elicit.MaxAnswerBytes.
func (p *termPrompter) Ask(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(p.out, termsafe.Escape(prompt))
	line, err := p.in.readLine(ctx, elicit.MaxAnswerBytes)
	if err != nil {
		fmt.Fprintln(p.out)
		return "", err
	}
	return strings.TrimRight(line, "\r"), nil
}
