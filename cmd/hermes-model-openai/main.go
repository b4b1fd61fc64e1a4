// Command hermes-model-openai makes one chat completion for hermes: it
// reads a model.Call as JSON on stdin, the API key from
// $HERMES_MODEL_API_KEY, calls the endpoint through
// github.com/openai/openai-go/v3 (host/model/openaichat) and writes
// model.Line JSON lines on stdout. It is a process of its own so that the
// OpenAI client library is initialised only by the calls that use a model.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/model/openaichat"
)

// maxCall bounds what hermes sends (the conversation).
const maxCall = 256 << 20

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Stdin, os.Stdout))
}

func run(ctx context.Context, in io.Reader, out io.Writer) int {
	b, err := io.ReadAll(io.LimitReader(in, maxCall))
	if err != nil {
		fmt.Fprintln(os.Stderr, "read the call:", err)
		return 2
	}
	var call model.Call
	if err := json.Unmarshal(b, &call); err != nil {
		fmt.Fprintln(os.Stderr, "decode the call:", err)
		return 2
	}
	s := call.Settings
	s.APIKey = os.Getenv(model.KeyVar)
	enc := json.NewEncoder(out)
	req := call.Request
	req.OnText = func(d string) { _ = enc.Encode(model.Line{Text: d}) }
	res, err := openaichat.New(&s, nil).Chat(ctx, req)
	var me *model.Error
	switch {
	case errors.As(err, &me):
		_ = enc.Encode(model.Line{Error: me})
	case err != nil:
		_ = enc.Encode(model.Line{Error: &model.Error{Kind: model.KindRejected, BaseURL: s.BaseURL, Detail: model.Clean(s.Redact(err.Error()))}})
	default:
		_ = enc.Encode(model.Line{Response: res})
	}
	return 0
}
