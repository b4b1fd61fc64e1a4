// Command confclient is the client the MCP conformance suite drives in its
// client mode. It exists for that test only and ships in no release.
//
// The suite starts a test server per scenario and runs
//
//	confclient <server URL>
//
// with MCP_CONFORMANCE_SCENARIO naming the scenario. confclient connects the
// way hermes mcp call does: a registry (host/registry) of one server entry
// for the URL, started once, through the real HTTP transport plugin (found
// beside this binary or on HERMES_PLUGIN_PATH). Then, by scenario:
//
//   - initialize: connect and close;
//   - everything else (tools_call, sse-retry,
//     elicitation-sep1034-client-defaults, ...): call the tools the
//     registry lists, each with arguments made from the input schema the
//     model would see. Elicitation requests are accepted with the defaults
//     of the requested schema; sampling requests get a fixed answer; roots
//     are the working directory.
//
// Of the host it needs the server entry (config), the registry and what a
// registry's sessions are given (session.Deps: the plugin supervisor and
// the credentials of host/credentials); it knows nothing of how a session
// is connected or how a tool is shown to the model.
//
// Every entry has auth: oauth, so a scenario's 401 starts a login through
// hermes-auth-oauth, whose browser is a robot that follows the
// authorization server's redirect to the loopback callback (auth.go).
//
// It exits 0 when every step worked, 1 otherwise, with the reason on stderr.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: confclient [flags...] <server URL>; the conformance suite passes the URL last")
		return 2
	}
	url := args[len(args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	log := hclog.New(&hclog.LoggerOptions{Name: "confclient", Level: hclog.Info, Output: os.Stderr})

	home, err := os.MkdirTemp("", "confclient-home-")
	if err != nil {
		log.Error("cannot make a home folder", "error", err)
		return 1
	}
	defer os.RemoveAll(home)
	sup := supervisor.New(supervisor.Options{Home: home, Logger: log})
	defer sup.KillAll()

	h := handlers{log: log}
	creds := credentials.New(credentials.Options{Home: home, Supervisor: sup, Logger: log, UI: robot{log: log}, StepUp: true})
	defer creds.Close()
	srv := &config.Server{
		Name: "conformance", Transport: "http", URL: url, SSLVerify: true, Enabled: true,
		ConnectTimeout: 30 * time.Second, Timeout: 60 * time.Second,
	}
	oauthFor(srv, scenario, home, log)
	reg := registry.New(registry.Options{
		Servers: []*config.Server{srv},
		Deps: session.Deps{Home: home, Supervisor: sup, Logger: log, Sampling: h, Elicitation: h, Roots: h,
			OnNotification: func(_ string, n mcpvalue.Notification) { log.Info("notification", "method", n.Method) },
			Auth:           creds.Sessions()},
		// Connect once, list, call and exit, as hermes mcp call does.
		Snapshot: true,
	})
	defer reg.Close()
	ctx := context.Background()
	if err := reg.Start(ctx); err != nil {
		log.Error("registry did not start", "error", err)
		return 1
	}
	st := reg.Status()[0]
	if st.State != registry.StateConnected {
		log.Error("connect failed", "url", url, "state", st.State, "code", st.Code, "error", st.Error)
		return 1
	}
	log.Info("connected", "scenario", scenario, "server", st.Name, "tools", st.Total)
	if scenario == "initialize" {
		return 0
	}
	return callAll(ctx, reg, srv.Name, scenario, log)
}

// callAll calls the tools of server the registry lists, with the schemas
// the model would see: the calls the scenario's context names
// (MCP_CONFORMANCE_CONTEXT's toolCalls) in order, else each tool once with
// arguments made from its schema. In json-schema-2020-12-preservation the
// echo tool gets the schema the model would see for the other tool.
func callAll(ctx context.Context, reg *registry.Manager, server, scenario string, log hclog.Logger) int {
	schemas := map[string]map[string]any{}
	var names []string
	for _, tool := range reg.Tools() {
		if tool.Server != server || tool.Utility != "" {
			continue // another server's, or a host's tool over resources or prompts
		}
		schemas[tool.OriginalName] = tool.Parameters
		names = append(names, tool.OriginalName)
	}
	type call struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	var calls []call
	var conformanceContext struct {
		ToolCalls []call `json:"toolCalls"`
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &conformanceContext); err != nil {
			log.Error("MCP_CONFORMANCE_CONTEXT is not JSON", "error", err)
			return 1
		}
	}
	calls = conformanceContext.ToolCalls
	if len(calls) == 0 {
		for _, name := range names {
			args := argumentsFor(schemas[name])
			if scenario == "json-schema-2020-12-preservation" {
				if _, echo := args["schema"]; echo {
					for _, other := range names {
						if other != name {
							args["schema"] = schemas[other]
						}
					}
				}
			}
			calls = append(calls, call{Name: name, Arguments: args})
		}
	}
	rc := 0
	for _, c := range calls {
		raw, err := json.Marshal(c.Arguments)
		if err != nil {
			log.Error("tools/call arguments", "tool", c.Name, "error", err)
			rc = 1
			continue
		}
		res, err := reg.CallTool(ctx, server, c.Name, raw)
		if err != nil {
			log.Error("tools/call failed", "tool", c.Name, "error", err)
			rc = 1
			continue
		}
		b, _ := json.Marshal(res.Content)
		log.Info("tools/call", "tool", c.Name, "is_error", res.IsError, "content", string(b))
	}
	return rc
}

// argumentsFor makes arguments from an input schema: the default where
// there is one, else a small value of the property's type.
func argumentsFor(schema map[string]any) map[string]any {
	args := map[string]any{}
	n := 0
	props, _ := schema["properties"].(map[string]any)
	for name, raw := range props {
		prop, _ := raw.(map[string]any)
		if def, ok := prop["default"]; ok {
			args[name] = def
			continue
		}
		n++
		switch prop["type"] {
		case "number", "integer":
			args[name] = n
		case "boolean":
			args[name] = true
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
		default:
			args[name] = "test"
		}
	}
	return args
}

// handlers answers the server's requests.
type handlers struct {
	log hclog.Logger
}

// Sample answers sampling with a fixed text.
func (h handlers) Sample(context.Context, mcpvalue.SamplingRequest) (mcpvalue.SamplingResult, error) {
	return mcpvalue.SamplingResult{
		Role:       "assistant",
		Content:    []mcpvalue.SamplingContent{{Type: mcpvalue.TypeText, Text: "conformance answer"}},
		Model:      "conformance-model",
		StopReason: "endTurn",
	}, nil
}

// Elicit accepts with the requested schema's defaults.
func (h handlers) Elicit(_ context.Context, req mcpvalue.ElicitationRequest) (mcpvalue.ElicitationResult, error) {
	content := map[string]any{}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if len(req.RequestedSchema) == 0 {
		req.RequestedSchema = json.RawMessage("null") // a URL-mode request: nothing to fill
	}
	if err := json.Unmarshal(req.RequestedSchema, &schema); err != nil {
		return mcpvalue.ElicitationResult{}, fmt.Errorf("read requested schema %.200q: %w", req.RequestedSchema, err)
	}
	for name, prop := range schema.Properties {
		if def, ok := prop["default"]; ok {
			content[name] = def
		}
	}
	h.log.Info("elicitation accepted with defaults", "fields", len(content))
	return mcpvalue.ElicitationResult{Action: mcpvalue.ElicitationAccept, Content: content}, nil
}

// ListRoots offers the working directory.
func (h handlers) ListRoots(context.Context) ([]mcpvalue.Root, error) {
	wd, _ := os.Getwd()
	return []mcpvalue.Root{{URI: "file://" + wd, Name: "cwd"}}, nil
}
