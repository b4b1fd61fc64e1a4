package cli

import (
	"context"
	"time"

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

func modelTestCommand(e *env) *cli.Command {
	var modelName string
	return &cli.Command{
		Name:  "test",
		Usage: "check the endpoint, the API key and the model in one call",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "the model to check (default: model.default)", Destination: &modelName},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return usagef("usage: hermes model test [-m MODEL]")
			}
			s, err := model.Load(e.home, e.lookupEnv)
			if err != nil {
				return withCode(codeConfig, failf("%s", oneLine(err.Error())))
			}
			shown := modelName
			if shown == "" {
				shown = s.Default
			}
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
				e.p.Fail("no model named: set model.default in config.yaml or name one with -m")
				return &exitError{code: ExitUsage}
			}
			e.p.Line("Model: %s", shown)
			bin, err := e.supervisor().Find("model", "openai")
			if err != nil {
				return failf("%s", oneLine(err.Error()))
			}
			start := time.Now()
			res, err := model.New(s, bin, e.environ).Chat(ctx, model.Request{
				Model:     modelName,
				Messages:  []model.Message{{Role: "user", Text: modelTestPrompt}},
				MaxTokens: 16,
			})
			ms := time.Since(start).Milliseconds()
			if err != nil {
				e.p.Fail("Failed (%dms): %s", ms, err)
				return &exitError{code: ExitFail}
			}
			e.p.OK("Answered (%dms) by %s", ms, res.Model)
			if res.Usage.Total > 0 {
				e.p.Line("Tokens: %d (prompt %d, completion %d)", res.Usage.Total, res.Usage.Prompt, res.Usage.Completion)
			}
			if len(res.Text) > 0 {
				e.p.Line("Reply: %s", truncateRunes(oneLine(res.Text), 80))
			}
			return nil
		},
	}
}

// truncateRunes cuts s to n runes, marking the cut.
func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
