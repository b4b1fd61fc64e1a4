// Command confclient is the client the MCP conformance suite drives in its
// client mode. It exists for that test only and ships in no release.
//
// The suite starts a test server per scenario and runs
//
//	confclient <server URL>
//
// with MCP_CONFORMANCE_SCENARIO naming the scenario. confclient connects the
// way hermes does: session.Connect with a server entry for the URL, through
// the real HTTP transport plugin (found beside this binary or on
// HERMES_PLUGIN_PATH). Then, by scenario:
//
//   - initialize: connect and close;
//   - everything else (tools_call, sse-retry,
//     elicitation-sep1034-client-defaults, ...): list the tools and call each
//     one with arguments made from its input schema. Elicitation requests are
//     accepted with the defaults of the requested schema; sampling requests
//     get a fixed answer; roots are the working directory.
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
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/mark3labs/mcp-go/mcp"
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
	d := session.Deps{Home: home, Supervisor: sup, Logger: log, Sampling: h, Elicitation: h, Roots: h,
		OnNotification: func(_ string, n mcp.JSONRPCNotification) { log.Info("notification", "method", n.Method) }}
	srv := &config.Server{
		Name: "conformance", Transport: "http", URL: url, SSLVerify: true, Enabled: true,
		ConnectTimeout: 30 * time.Second, Timeout: 60 * time.Second,
	}
	ctx := context.Background()
	s, err := session.Connect(ctx, srv, d)
	if err != nil {
		log.Error("connect failed", "url", url, "error", err)
		return 1
	}
	defer s.Close()
	log.Info("connected", "scenario", scenario, "server", s.Init.ServerInfo.Name, "protocol", s.Init.ProtocolVersion)
	if scenario == "initialize" {
		return 0
	}
	return callAll(ctx, s, log)
}

// callAll lists the server's tools and calls each one.
func callAll(ctx context.Context, s *session.Session, log hclog.Logger) int {
	tools, err := s.Client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		log.Error("tools/list failed", "error", err)
		return 1
	}
	rc := 0
	for _, tool := range tools.Tools {
		args := argumentsFor(tool)
		res, err := s.Client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool.Name, Arguments: args}})
		if err != nil {
			log.Error("tools/call failed", "tool", tool.Name, "error", err)
			rc = 1
			continue
		}
		b, _ := json.Marshal(res.Content)
		log.Info("tools/call", "tool", tool.Name, "is_error", res.IsError, "content", string(b))
	}
	return rc
}

// argumentsFor makes arguments for a tool from its input schema: the
// default where there is one, else a small value of the property's type.
func argumentsFor(tool mcp.Tool) map[string]any {
	args := map[string]any{}
	n := 0
	for name, raw := range tool.InputSchema.Properties {
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

// CreateMessage answers sampling with a fixed text.
func (h handlers) CreateMessage(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("conformance answer")},
		Model:           "conformance-model",
		StopReason:      "endTurn",
	}, nil
}

// Elicit accepts with the requested schema's defaults.
func (h handlers) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	content := map[string]any{}
	raw, _ := json.Marshal(req.Params.RequestedSchema)
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, fmt.Errorf("read requested schema: %w", err)
	}
	for name, prop := range schema.Properties {
		if def, ok := prop["default"]; ok {
			content[name] = def
		}
	}
	h.log.Info("elicitation accepted with defaults", "fields", len(content))
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: content,
	}}, nil
}

// ListRoots offers the working directory.
func (h handlers) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	wd, _ := os.Getwd()
	return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file://" + wd, Name: "cwd"}}}, nil
}
