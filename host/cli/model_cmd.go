package cli

import (
	"context"
	"errors"
	"time"

	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/urfave/cli/v3"
)

func modelCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "model",
		Usage: "check the model endpoint (model: in config.yaml)",
		Action: func(ctx context.Context, c *cli.Command) error {
			return cli.ShowSubcommandHelp(c)
		},
		Commands: []*cli.Command{modelTestCommand(e)},
	}
}

// modelTestPrompt is what 'hermes model test' asks: short, so that the
// check costs a few tokens.
const modelTestPrompt = "Reply with the single word: ok"

// modelTestJSON is 'hermes model test --json' (docs/JSON.md).
type modelTestJSON struct {
	Endpoint string `json:"endpoint"`
	// Model is the model asked for ("" when none is named).
	Model string `json:"model"`
	// KeyEnv names the variable the key is read from; KeyFrom says where
	// it was found ("environment" or ".env"), "" when it is set nowhere.
	// The key itself is never printed.
	KeyEnv  string `json:"key_env"`
	KeyFrom string `json:"key_from,omitempty"`
	OK      bool   `json:"ok"`
	// AnsweredBy is the model the endpoint says answered.
	AnsweredBy string          `json:"answered_by,omitempty"`
	LatencyMS  int64           `json:"latency_ms"`
	Usage      *modelUsageJSON `json:"usage,omitempty"`
	Error      *jsonError      `json:"error,omitempty"`
}

// modelUsageJSON is the tokens a model call used.
type modelUsageJSON struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
	Total      int64 `json:"total"`
}

// Error codes of a failed model call: model.Kind, named so that a code
// the servers' failures use keeps one meaning (a model endpoint's 5xx is
// model_server, its other refusals model_rejected).
var modelCodes = map[model.Kind]string{
	model.KindAuth:          string(failure.CodeAuth),
	model.KindUnknownModel:  string(failure.CodeUnknownModel),
	model.KindNotCompatible: string(failure.CodeNotCompatible),
	model.KindUnreachable:   string(failure.CodeUnreachable),
	model.KindRateLimited:   string(failure.CodeRateLimited),
	model.KindServer:        string(failure.CodeModelServer),
	model.KindTooLarge:      string(failure.CodeTooLarge),
	model.KindTimeout:       string(failure.CodeTimeout),
	model.KindRejected:      string(failure.CodeModelRejected),
	model.KindNoModel:       string(failure.CodeNoModel),
}

// modelErrorCode is the jsonError code of a failed model call.
func modelErrorCode(err error) string {
	var me *model.Error
	if errors.As(err, &me) {
		if c, ok := modelCodes[me.Kind]; ok {
			return c
		}
	}
	return errorCode(err)
}

func modelTestCommand(e *env) *cli.Command {
	var modelName string
	j := &jsonOutput{e: e}
	return &cli.Command{
		Name:  "test",
		Usage: "check the endpoint, the API key and the model in one call",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "the model to check (default: model.default)", Destination: &modelName},
			j.flag("print the outcome as JSON (docs/JSON.md)"),
		},
		Action: j.action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return usagef("usage: hermes model test [-m MODEL] [--json]")
			}
			if j.on {
				progressToStderr(e)
			}
			client, err := modelClient(e.f.Model())
			if err != nil {
				return err
			}
			s := client.Settings()
			shown := modelName
			if shown == "" {
				shown = s.Default
			}
			out := modelTestJSON{Endpoint: s.BaseURL, Model: shown, KeyEnv: s.APIKeyEnv, KeyFrom: s.KeyFrom}
			e.p.Line("Testing the model endpoint...")
			e.p.Line("Endpoint: %s", s.BaseURL)
			switch s.KeyFrom {
			case "":
				e.p.Line("Key: none ($%s is not set in the environment or %s)", s.APIKeyEnv, ".env")
			default:
				// Where the key is, never what it is.
				e.p.Line("Key: $%s (from the %s)", s.APIKeyEnv, s.KeyFrom)
			}
			if shown == "" {
				const msg = "no model named: set model.default in config.yaml or name one with -m"
				e.p.Fail(msg)
				if j.on {
					out.Error = &jsonError{Code: modelCodes[model.KindNoModel], Message: msg}
					j.write(out)
				}
				return &exitError{code: ExitUsage}
			}
			e.p.Line("Model: %s", shown)
			start := time.Now()
			res, err := client.Chat(ctx, model.Request{
				Model:     modelName,
				Messages:  []model.Message{{Role: "user", Text: modelTestPrompt}},
				MaxTokens: 16,
			})
			ms := time.Since(start).Milliseconds()
			out.LatencyMS = ms
			if err != nil {
				e.p.Fail("Failed (%dms): %s", ms, err)
				if j.on {
					out.Error = &jsonError{Code: modelErrorCode(err), Message: oneLine(err.Error())}
					j.write(out)
				}
				return &exitError{code: ExitFail}
			}
			e.p.OK("Answered (%dms) by %s", ms, res.Model)
			if res.Usage.Total > 0 {
				e.p.Line("Tokens: %d (prompt %d, completion %d)", res.Usage.Total, res.Usage.Prompt, res.Usage.Completion)
			}
			if len(res.Text) > 0 {
				e.p.Line("Reply: %s", truncateRunes(oneLine(res.Text), 80))
			}
			if j.on {
				out.OK, out.AnsweredBy = true, res.Model
				out.Usage = &modelUsageJSON{Prompt: res.Usage.Prompt, Completion: res.Usage.Completion, Total: res.Usage.Total}
				j.write(out)
			}
			return nil
		}),
	}
}

// truncateRunes cuts s to n runes, marking the cut.
func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
