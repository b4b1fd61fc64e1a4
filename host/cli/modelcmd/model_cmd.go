package modelcmd

import (
	"context"
	"errors"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/model"
	"github.com/urfave/cli/v3"
)

// NewCmdModel builds 'hermes model', the group of the model endpoint's
// commands; without one it shows its help.
func NewCmdModel(e *cmdkit.Env) *cli.Command {
	return &cli.Command{
		Name:  "model",
		Usage: "check the model endpoint (model: in config.yaml)",
		Action: func(ctx context.Context, c *cli.Command) error {
			return cli.ShowSubcommandHelp(c)
		},
		Commands: []*cli.Command{NewCmdModelTest(e, nil)},
	}
}

// ModelTestPrompt is what 'hermes model test' asks: short, so that the
// check costs a few tokens.
const ModelTestPrompt = "Reply with the single word: ok"

// ModelTestJSON is 'hermes model test --json' (docs/JSON.md).
type ModelTestJSON struct {
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
	AnsweredBy string            `json:"answered_by,omitempty"`
	LatencyMS  int64             `json:"latency_ms"`
	Usage      *ModelUsageJSON   `json:"usage,omitempty"`
	Error      *cmdkit.JSONError `json:"error,omitempty"`
}

// ModelUsageJSON is the tokens a model call used.
type ModelUsageJSON struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
	Total      int64 `json:"total"`
}

// Error codes of a failed model call: model.Kind, named so that a code
// the servers' failures use keeps one meaning (a model endpoint's 5xx is
// model_server, its other refusals model_rejected).
var ModelCodes = map[model.Kind]string{
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

// ModelErrorCode is the jsonError code of a failed model call.
func ModelErrorCode(err error) string {
	var me *model.Error
	if errors.As(err, &me) {
		if c, ok := ModelCodes[me.Kind]; ok {
			return c
		}
	}
	return cmdkit.ErrorCode(err)
}

// ModelTestOptions are what 'hermes model test' needs: the run, and its
// flags.
type ModelTestOptions struct {
	Env *cmdkit.Env
	// JSON is --json and what it printed.
	JSON *cmdkit.JSONOutput
	// Model is -m/--model, the model to check; "" is model.default.
	Model string
}

// NewCmdModelTest builds 'hermes model test'. Its action fills a
// ModelTestOptions from the command line and hands it to runF when runF
// is not nil (a test's look at what was parsed), else to modelTestRun.
func NewCmdModelTest(e *cmdkit.Env, runF func(context.Context, *ModelTestOptions) error) *cli.Command {
	opts := &ModelTestOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:  "test",
		Usage: "check the endpoint, the API key and the model in one call",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "the model to check (default: model.default)", Destination: &opts.Model},
			j.Flag("print the outcome as JSON (docs/JSON.md)"),
		},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return cmdkit.Usagef("usage: hermes model test [-m MODEL] [--json]")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return modelTestRun(ctx, opts)
		}),
	}
}

// modelTestRun asks the model one short question and prints what the
// endpoint answered, as text or as a ModelTestJSON.
func modelTestRun(ctx context.Context, opts *ModelTestOptions) error {
	e, j, modelName := opts.Env, opts.JSON, opts.Model
	if j.On {
		cmdkit.ProgressToStderr(e)
	}
	client, err := cmdkit.ModelClient(e.F.Model())
	if err != nil {
		return err
	}
	s := client.Settings()
	shown := modelName
	if shown == "" {
		shown = s.Default
	}
	out := ModelTestJSON{Endpoint: s.BaseURL, Model: shown, KeyEnv: s.APIKeyEnv, KeyFrom: s.KeyFrom}
	e.P.Line("Testing the model endpoint...")
	e.P.Line("Endpoint: %s", s.BaseURL)
	switch s.KeyFrom {
	case "":
		e.P.Line("Key: none ($%s is not set in the environment or %s)", s.APIKeyEnv, ".env")
	default:
		// Where the key is, never what it is.
		e.P.Line("Key: $%s (from the %s)", s.APIKeyEnv, s.KeyFrom)
	}
	if shown == "" {
		const msg = "no model named: set model.default in config.yaml or name one with -m"
		e.P.Fail(msg)
		if j.On {
			out.Error = &cmdkit.JSONError{Code: ModelCodes[model.KindNoModel], Message: msg}
			j.Write(out)
		}
		return &cmdkit.ExitError{Code: cmdkit.ExitUsage}
	}
	e.P.Line("Model: %s", shown)
	start := time.Now()
	res, err := client.Chat(ctx, model.Request{
		Model:     modelName,
		Messages:  []model.Message{{Role: "user", Text: ModelTestPrompt}},
		MaxTokens: 16,
	})
	ms := time.Since(start).Milliseconds()
	out.LatencyMS = ms
	if err != nil {
		e.P.Fail("Failed (%dms): %s", ms, err)
		if j.On {
			out.Error = &cmdkit.JSONError{Code: ModelErrorCode(err), Message: cmdkit.OneLine(err.Error())}
			j.Write(out)
		}
		return &cmdkit.ExitError{Code: cmdkit.ExitFail}
	}
	e.P.OK("Answered (%dms) by %s", ms, res.Model)
	if res.Usage.Total > 0 {
		e.P.Line("Tokens: %d (prompt %d, completion %d)", res.Usage.Total, res.Usage.Prompt, res.Usage.Completion)
	}
	if len(res.Text) > 0 {
		e.P.Line("Reply: %s", cmdkit.TruncateRunes(cmdkit.OneLine(res.Text), 80))
	}
	if j.On {
		out.OK, out.AnsweredBy = true, res.Model
		out.Usage = &ModelUsageJSON{Prompt: res.Usage.Prompt, Completion: res.Usage.Completion, Total: res.Usage.Total}
		j.Write(out)
	}
	return nil
}
