package cmdkit

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// TermPrompter is the person at this terminal (elicit.Prompter): it writes
// to stderr, so that a command's output stays clean, and reads stdin's
// lines through the run's one reader.
type TermPrompter struct {
	In   *InputSource
	Out  io.Writer
	Turn chan struct{} // held by the conversation in progress
}

// Converse runs fn once no other conversation holds the terminal.
func (p *TermPrompter) Converse(ctx context.Context, fn func(elicit.Terminal) error) error {
	if !p.In.Terminal() {
		return elicit.ErrNoPerson
	}
	select {
	case p.Turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.Turn }()
	return fn(p)
}

// Say prints text (escaped once more: it is a server's, shown).
func (p *TermPrompter) Say(text string) {
	fmt.Fprintln(p.Out, termsafe.EscapeText(text))
}

// Ask prints prompt and reads a line of at most elicit.MaxAnswerBytes.
func (p *TermPrompter) Ask(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(p.Out, termsafe.Escape(prompt))
	line, err := p.In.ReadLine(ctx, elicit.MaxAnswerBytes)
	if err != nil {
		fmt.Fprintln(p.Out)
		return "", err
	}
	return strings.TrimRight(line, "\r"), nil
}
