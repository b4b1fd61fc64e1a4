package testserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// DefaultName is the server name reported in initialize when Options.Name is
// empty.
const DefaultName = "hermes-testserver"

// DefaultInstructions are the instructions sent in initialize when
// Options.Instructions is empty.
const DefaultInstructions = "Controllable MCP server for Hermes tests and benchmarks."

func instructions(o Options) string {
	if o.Instructions == "" {
		return DefaultInstructions
	}
	return o.Instructions
}

// Version is the server version reported in initialize.
const Version = "0.1.0"

// SecretErrorText is the text of the error_result tool. It carries a bearer
// token so that redaction of tool errors can be tested.
const SecretErrorText = "upstream rejected the call: Authorization: Bearer sk-abc123secret"

// CrashExitCode is the exit status of the crash tool.
const CrashExitCode = 3

// tinyPNG is a base64-encoded 1x1 PNG image.
var tinyPNG = func() string {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}()

// Options configures the server built by New.
type Options struct {
	// Name is reported as serverInfo.name; DefaultName when empty.
	Name string
	// ExtraTools adds tools tool_1 .. tool_N (flag --tools).
	ExtraTools int
	// PageSize sets the list pagination limit; 0 keeps mcp-go's default of
	// no pagination (flag --page-size).
	PageSize int
	// NoToolsCapability builds a server without any tools and without the
	// tools capability (flag --no-tools-capability).
	NoToolsCapability bool
	// Resources adds static resources and a resource template (flag
	// --resources).
	Resources bool
	// Prompts adds two prompts with arguments (flag --prompts).
	Prompts bool
	// EchoMeta adds the tool echo_meta (flag --echo-meta); off by default,
	// so the default tool set (and every test counting it) stays as it was.
	EchoMeta bool
	// ExitAfterInit, when positive, makes the process exit (status 0) that
	// long after a client initialized (flag --exit-after-init).
	ExitAfterInit time.Duration
	// Exit ends the process; os.Exit when nil. The crash tool calls it with
	// CrashExitCode. Tests running the server in-process replace it.
	Exit func(code int)
	// Stderr receives the stderr tool's noise and the trace lines; os.Stderr
	// when nil.
	Stderr io.Writer
	// Trace writes a line to Stderr when a ping arrives (TracePing), when
	// a server/discover arrives (TraceDiscover), when a tools/list arrives
	// (TraceList) and when a sleep call
	// starts (TraceSleepStarted), so that tests can wait for these events
	// instead of sleeping (flag --trace).
	Trace bool
	// Version is reported as serverInfo.version; Version when empty (flag
	// --server-version).
	Version string
	// EchoDescription replaces the description of echo and is the
	// description of ExtraToolName (flag --tool-desc).
	EchoDescription string
	// EchoExtraArg adds a string property of that name to echo's input
	// schema (flag --echo-extra-arg), and EchoReadOnly annotates echo
	// readOnlyHint: true (flag --echo-read-only): with
	// EchoDescription, ways to change echo's definition between runs, as a
	// server that changes a tool after it was approved.
	EchoExtraArg string
	EchoReadOnly bool
	// ReadOnlyTools annotates every tool readOnlyHint: true (flag
	// --read-only-tools): mcp-go otherwise lists each tool with
	// destructiveHint: true, which a host's approval gate asks about.
	ReadOnlyTools bool
	// ExtraToolName adds a tool of that name answering its own name (flag
	// --extra-tool).
	ExtraToolName string
	// Instructions replaces the instructions sent in initialize
	// (DefaultInstructions when empty; flag --instructions, which
	// --instructions-repeat repeats N times for a huge text).
	Instructions string
	// DupTools lists every tool twice (flag --dup-tools); EmptyToolName adds
	// a tool without a name to the listing (flag --empty-tool-name).
	DupTools, EmptyToolName bool
	// AdminTool adds the tool admin_echo (set by --oauth-issuer, which
	// demands the admin scope to call it).
	AdminTool bool
	// ExpireSessions, when set, ends every HTTP session now; the tool
	// expire_sessions calls it (set with --session-ttl), so a test orders
	// the expiry instead of sleeping past the TTL.
	ExpireSessions func()
}

// Trace lines written to stderr with Options.Trace (flag --trace), each on a
// line of its own.
const (
	// TracePing: a ping request arrived.
	TracePing = "hermes-testserver trace: ping"
	// TraceDiscover: a server/discover request arrived (2026-07-28).
	TraceDiscover = "hermes-testserver trace: discover"
	// TraceList: a tools/list request arrived.
	TraceList = "hermes-testserver trace: tools/list"
	// TraceSleepStarted: a sleep call arrived and is sleeping.
	TraceSleepStarted = "hermes-testserver trace: sleep started"
	// TraceSleepCancelled: a sleep call was cancelled.
	TraceSleepCancelled = "hermes-testserver trace: sleep cancelled"
	// TraceRootsChanged: a notifications/roots/list_changed arrived.
	TraceRootsChanged = "hermes-testserver trace: roots changed"
)

type authKey struct{}

// ContextWithAuthorization records the Authorization header of the HTTP
// request that carries an MCP message; the last_auth_header tool reports it.
// The HTTP transports of the binary install it with WithHTTPContextFunc.
func ContextWithAuthorization(ctx context.Context, header string) context.Context {
	return context.WithValue(ctx, authKey{}, header)
}

// authorizationFromContext returns the header stored by
// ContextWithAuthorization, or "".
func authorizationFromContext(ctx context.Context) string {
	s, _ := ctx.Value(authKey{}).(string)
	return s
}

// state is the mutable state shared by the tools of one server.
type state struct {
	srv       *server.MCPServer
	opts      Options
	cancelled atomic.Int64
	// rootsChanged counts notifications/roots/list_changed.
	rootsChanged atomic.Int64
	toggled      atomic.Bool
	traceMu      sync.Mutex
}

// trace writes line to stderr when tracing is on.
func (st *state) trace(line string) {
	if !st.opts.Trace {
		return
	}
	st.traceMu.Lock()
	defer st.traceMu.Unlock()
	fmt.Fprintln(st.opts.Stderr, line)
}

// New builds the test server with the tools, resources and prompts selected
// by opts. See the package documentation for what each tool does.
func New(opts Options) *server.MCPServer {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Exit == nil {
		opts.Exit = os.Exit
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	st := &state{opts: opts}

	hooks := &server.Hooks{}
	if opts.ExitAfterInit > 0 {
		var once atomic.Bool
		arm := func() {
			if once.CompareAndSwap(false, true) {
				time.AfterFunc(opts.ExitAfterInit, func() { opts.Exit(0) })
			}
		}
		hooks.AddAfterInitialize(func(context.Context, any, *mcp.InitializeRequest, *mcp.InitializeResult) { arm() })
		hooks.AddAfterDiscover(func(context.Context, any, *mcp.DiscoverRequest, *mcp.DiscoverResult) { arm() })
	}
	hooks.AddBeforePing(func(context.Context, any, *mcp.PingRequest) { st.trace(TracePing) })
	hooks.AddBeforeDiscover(func(context.Context, any, *mcp.DiscoverRequest) { st.trace(TraceDiscover) })
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { st.trace(TraceList) })
	addListingFaults(opts, hooks)

	serverOpts := []server.ServerOption{
		server.WithLogging(),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithInstructions(instructions(opts)),
	}
	if !opts.NoToolsCapability {
		serverOpts = append(serverOpts, server.WithToolCapabilities(true))
	}
	if opts.PageSize > 0 {
		serverOpts = append(serverOpts, server.WithPaginationLimit(opts.PageSize))
	}
	if opts.ReadOnlyTools {
		serverOpts = append(serverOpts, server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool {
			out := make([]mcp.Tool, len(tools))
			for i, t := range tools {
				ro := true
				t.Annotations.ReadOnlyHint = &ro
				out[i] = t
			}
			return out
		}))
	}
	if opts.Resources {
		serverOpts = append(serverOpts, server.WithResourceCapabilities(false, true))
	}
	if opts.Prompts {
		serverOpts = append(serverOpts, server.WithPromptCapabilities(true), server.WithCompletions(),
			server.WithPromptCompletionProvider(completions{}), server.WithResourceCompletionProvider(completions{}))
	}
	st.srv = server.NewMCPServer(opts.Name, serverVersion(opts), serverOpts...)
	st.srv.AddNotificationHandler(mcp.MethodNotificationRootsListChanged, func(context.Context, mcp.JSONRPCNotification) {
		st.rootsChanged.Add(1)
		st.trace(TraceRootsChanged)
	})

	if !opts.NoToolsCapability {
		st.addTools()
		st.addNamedTool()
		st.addAdminTool()
		for i := 1; i <= opts.ExtraTools; i++ {
			name := "tool_" + strconv.Itoa(i)
			st.srv.AddTool(mcp.NewTool(name,
				mcp.WithDescription(fmt.Sprintf("Extra tool number %d; answers with its own name.", i)),
				mcp.WithString("input", mcp.Description("ignored")),
			), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(name), nil
			})
		}
	}
	if opts.Resources {
		addResources(st.srv)
	}
	if opts.Prompts {
		addPrompts(st.srv)
	}
	return st.srv
}

func (st *state) addTools() {
	s := st.srv
	st.addEcho(echoDescription(st.opts))

	s.AddTool(mcp.NewTool("add",
		mcp.WithDescription("Adds two numbers."),
		mcp.WithNumber("a", mcp.Required()),
		mcp.WithNumber("b", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sum := req.GetFloat("a", 0) + req.GetFloat("b", 0)
		return mcp.NewToolResultText(strconv.FormatFloat(sum, 'f', -1, 64)), nil
	})

	s.AddTool(mcp.NewTool("sleep",
		mcp.WithDescription("Sleeps ms milliseconds; returns early and counts a cancellation when the call is cancelled."),
		mcp.WithInteger("ms", mcp.Required()),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ms := req.GetInt("ms", 0)
		st.trace(TraceSleepStarted)
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return mcp.NewToolResultText(fmt.Sprintf("slept %dms", ms)), nil
		case <-ctx.Done():
			st.cancelled.Add(1)
			st.trace(TraceSleepCancelled)
			return nil, ctx.Err()
		}
	})

	s.AddTool(mcp.NewTool("cancelled_count",
		mcp.WithDescription("Returns how many sleep calls were cancelled."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strconv.FormatInt(st.cancelled.Load(), 10)), nil
	})

	s.AddTool(mcp.NewTool("crash",
		mcp.WithDescription("Exits the process with status 3 without answering."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st.opts.Exit(CrashExitCode)
		return nil, fmt.Errorf("crash: exit returned")
	})

	s.AddTool(mcp.NewTool("huge",
		mcp.WithDescription("Returns a text result of the given size in bytes."),
		mcp.WithInteger("bytes", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := max(req.GetInt("bytes", 0), 0)
		return mcp.NewToolResultText(strings.Repeat("x", n)), nil
	})

	s.AddTool(mcp.NewTool("stderr",
		mcp.WithDescription("Writes the given number of noise lines to stderr, then returns ok."),
		mcp.WithInteger("lines", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := req.GetInt("lines", 0)
		for i := 1; i <= n; i++ {
			fmt.Fprintf(st.opts.Stderr, "hermes-testserver noise line %d\n", i)
		}
		return mcp.NewToolResultText("ok"), nil
	})

	s.AddTool(mcp.NewTool("env",
		mcp.WithDescription("Returns the value of an environment variable, or an empty text."),
		mcp.WithString("name", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(os.Getenv(req.GetString("name", ""))), nil
	})

	s.AddTool(mcp.NewTool("add_tool",
		mcp.WithDescription("Adds a tool with the given name at runtime (sends tools/list_changed); after_ms adds it that much later, outside any request."),
		mcp.WithString("name", mcp.Required()),
		mcp.WithNumber("after_ms", mcp.Description("add the tool this many milliseconds after answering")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name, err := req.RequireString("name")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if after := req.GetFloat("after_ms", 0); after > 0 {
			time.AfterFunc(time.Duration(after)*time.Millisecond, func() { st.addDynamicTool(name) })
			return mcp.NewToolResultText("adding " + name), nil
		}
		st.addDynamicTool(name)
		return mcp.NewToolResultText("added " + name), nil
	})

	s.AddTool(mcp.NewTool("remove_tool",
		mcp.WithDescription("Removes the named tool (sends tools/list_changed)."),
		mcp.WithString("name", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name, err := req.RequireString("name")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		s.DeleteTools(name)
		return mcp.NewToolResultText("removed " + name), nil
	})

	s.AddTool(mcp.NewTool("notify_burst",
		mcp.WithDescription("Sends count notifications/tools/list_changed back to back. With toggle, each one comes from adding or removing the tool burst_toggle."),
		mcp.WithInteger("count", mcp.Required()),
		mcp.WithBoolean("toggle"),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		count := req.GetInt("count", 0)
		toggle := req.GetBool("toggle", false)
		for range count {
			if toggle {
				if st.toggled.CompareAndSwap(false, true) {
					st.addDynamicTool("burst_toggle")
				} else if st.toggled.CompareAndSwap(true, false) {
					s.DeleteTools("burst_toggle")
				}
				continue
			}
			if err := s.SendNotificationToClient(ctx, string(mcp.MethodNotificationToolsListChanged), nil); err != nil {
				return mcp.NewToolResultError("notify: " + err.Error()), nil
			}
		}
		return mcp.NewToolResultText(fmt.Sprintf("sent %d", count)), nil
	})

	s.AddTool(mcp.NewTool("sample",
		mcp.WithDescription("Asks the client to sample (sampling/createMessage) and returns the model's text."),
		mcp.WithString("prompt", mcp.Required()),
		mcp.WithString("model", mcp.Description("a model hint (modelPreferences.hints[0].name)")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if res := server.SamplingResponse(req.Params.InputResponses, "sample"); res != nil {
			return mcp.NewToolResultText(contentText(res.Content)), nil
		}
		prompt := req.GetString("prompt", "")
		params := mcp.CreateMessageParams{
			Messages: []mcp.SamplingMessage{{
				Role:    mcp.RoleUser,
				Content: mcp.NewTextContent(prompt),
			}},
			MaxTokens: 100,
		}
		if hint := req.GetString("model", ""); hint != "" {
			params.ModelPreferences = &mcp.ModelPreferences{Hints: []mcp.ModelHint{{Name: hint}}}
		}
		return server.NewInputRequestBuilder("sample").Sample("sample", params).ToolResult(), nil
	})

	s.AddTool(mcp.NewTool("elicit",
		mcp.WithDescription("Asks the client for input via elicitation; returns {action, content} as JSON."),
		mcp.WithString("message"),
		mcp.WithString("schema", mcp.Description("the requestedSchema as JSON; default: one optional string field, value")),
		mcp.WithString("mode", mcp.Description("form (default) or url")),
		mcp.WithString("url", mcp.Description("the URL of mode url")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if res := server.ElicitationResponse(req.Params.InputResponses, "elicit"); res != nil {
			out, _ := json.Marshal(map[string]any{"action": res.Action, "content": res.Content})
			return mcp.NewToolResultText(string(out)), nil
		}
		params := mcp.ElicitationParams{
			Message: req.GetString("message", "Please provide a value"),
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"value": map[string]any{"type": "string", "description": "any value"},
				},
			},
		}
		if raw := req.GetString("schema", ""); raw != "" {
			var schema any
			if err := json.Unmarshal([]byte(raw), &schema); err != nil {
				return mcp.NewToolResultError("schema: " + err.Error()), nil
			}
			params.RequestedSchema = schema
		}
		if req.GetString("mode", "") == mcp.ElicitationModeURL {
			params = mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, Message: params.Message,
				URL: req.GetString("url", ""), ElicitationID: "hermes-testserver-elicit"}
		}
		return server.NewInputRequestBuilder("elicit").Elicit("elicit", params).ToolResult(), nil
	})

	s.AddTool(mcp.NewTool("roots",
		mcp.WithDescription("Asks the client for its roots and returns them as JSON."),
		mcp.WithBoolean("changes", mcp.Description("return instead how many notifications/roots/list_changed the client sent")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.GetBool("changes", false) {
			return mcp.NewToolResultText(strconv.FormatInt(st.rootsChanged.Load(), 10)), nil
		}
		if res := server.RootsResponse(req.Params.InputResponses, "roots"); res != nil {
			roots := res.Roots
			if roots == nil {
				roots = []mcp.Root{}
			}
			out, _ := json.Marshal(roots)
			return mcp.NewToolResultText(string(out)), nil
		}
		return server.NewInputRequestBuilder("roots").Roots("roots").ToolResult(), nil
	})

	s.AddTool(mcp.NewTool("image",
		mcp.WithDescription("Returns a 1x1 PNG image."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(tinyPNG, "image/png")}}, nil
	})

	s.AddTool(mcp.NewTool("log",
		mcp.WithDescription("Sends a notifications/message log entry."),
		mcp.WithString("level", mcp.Description("debug, info, notice, warning, error, critical, alert or emergency; default info")),
		mcp.WithString("logger", mcp.Description("logger name; default hermes-testserver")),
		mcp.WithAny("data", mcp.Description("log payload; default \"hello\"")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		level := mcp.LoggingLevel(req.GetString("level", string(mcp.LoggingLevelInfo)))
		logger := req.GetString("logger", DefaultName)
		data, ok := req.GetArguments()["data"]
		if !ok {
			data = "hello"
		}
		err := s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, logger, data))
		if err != nil {
			return mcp.NewToolResultError("log: " + err.Error()), nil
		}
		return mcp.NewToolResultText("logged"), nil
	})

	if st.opts.ExpireSessions != nil {
		s.AddTool(mcp.NewTool("expire_sessions",
			mcp.WithDescription("Ends every HTTP session now: later requests for them get 404."),
		), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			st.opts.ExpireSessions()
			return mcp.NewToolResultText("expired"), nil
		})
	}

	s.AddTool(mcp.NewTool("pid",
		mcp.WithDescription("Returns the server's process id."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strconv.Itoa(os.Getpid())), nil
	})

	s.AddTool(mcp.NewTool("structured",
		mcp.WithDescription("Returns structuredContent plus a text rendering."),
		mcp.WithOutputSchema[StructuredOutput](),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out := StructuredOutput{Name: "hermes", Count: 3, Tags: []string{"a", "b"}}
		text, _ := json.Marshal(out)
		return mcp.NewToolResultStructured(out, string(text)), nil
	})

	s.AddTool(mcp.NewTool("error_result",
		mcp.WithDescription("Returns an isError result whose text contains a bearer token."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(SecretErrorText), nil
	})

	s.AddTool(mcp.NewTool("last_auth_header",
		mcp.WithDescription("Returns the Authorization header of the HTTP request that carried this call (empty over stdio)."),
	), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(authorizationFromContext(ctx)), nil
	})

	if st.opts.EchoMeta {
		s.AddTool(mcp.NewTool("echo_meta",
			mcp.WithDescription("Returns the params._meta of this call as JSON ({} without one)."),
		), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			meta := map[string]any{}
			if m := req.Params.Meta; m != nil {
				for k, v := range m.AdditionalFields {
					meta[k] = v
				}
				if m.ProgressToken != nil {
					meta["progressToken"] = m.ProgressToken
				}
			}
			out, err := json.Marshal(meta)
			if err != nil {
				return mcp.NewToolResultError("encode _meta: " + err.Error()), nil
			}
			return mcp.NewToolResultText(string(out)), nil
		})
	}

	s.AddTool(mcp.NewTool("slow_stream",
		mcp.WithDescription("Sends steps progress notifications interval_ms apart, then returns \"done\". Over HTTP the response becomes an SSE stream (cut by --cut-stream)."),
		mcp.WithInteger("steps", mcp.Description("default 5")),
		mcp.WithInteger("interval_ms", mcp.Description("default 50")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		steps := req.GetInt("steps", 5)
		interval := time.Duration(req.GetInt("interval_ms", 50)) * time.Millisecond
		var token any = "slow_stream"
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			token = req.Params.Meta.ProgressToken
		}
		for i := 1; i <= steps; i++ {
			_ = s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
				"progressToken": token,
				"progress":      i,
				"total":         steps,
			})
			select {
			case <-time.After(interval):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return mcp.NewToolResultText("done"), nil
	})
}

// StructuredOutput is the structuredContent of the structured tool.
type StructuredOutput struct {
	Name  string   `json:"name" jsonschema:"a name"`
	Count int      `json:"count" jsonschema:"a count"`
	Tags  []string `json:"tags" jsonschema:"some tags"`
}

// addEcho adds (or replaces) the tool echo with description desc.
func (st *state) addEcho(desc string) {
	opts := []mcp.ToolOption{
		mcp.WithDescription(desc),
		mcp.WithString("message", mcp.Required(), mcp.Description("text to echo")),
	}
	if st.opts.EchoExtraArg != "" {
		opts = append(opts, mcp.WithString(st.opts.EchoExtraArg, mcp.Description("extra argument")))
	}
	if st.opts.EchoReadOnly {
		opts = append(opts, mcp.WithReadOnlyHintAnnotation(true))
	}
	st.srv.AddTool(mcp.NewTool("echo", opts...), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("message", "")), nil
	})
}

// addDynamicTool adds a tool that answers with its own name.
func (st *state) addDynamicTool(name string) {
	st.srv.AddTool(mcp.NewTool(name,
		mcp.WithDescription("Tool added at runtime; answers with its own name."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(name), nil
	})
}

// contentText renders sampling content as text.
func contentText(c any) string {
	switch v := c.(type) {
	case mcp.TextContent:
		return v.Text
	case *mcp.TextContent:
		return v.Text
	case map[string]any:
		if t, ok := v["text"].(string); ok {
			return t
		}
	}
	b, _ := json.Marshal(c)
	return string(b)
}

func addResources(s *server.MCPServer) {
	s.AddResource(mcp.NewResource("test://static/hello.txt", "hello.txt",
		mcp.WithResourceDescription("A static text resource."),
		mcp.WithMIMEType("text/plain"),
	), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: req.Params.URI, MIMEType: "text/plain", Text: "hello from hermes-testserver",
		}}, nil
	})
	s.AddResource(mcp.NewResource("test://static/pixel.png", "pixel.png",
		mcp.WithResourceDescription("A static binary (blob) resource."),
		mcp.WithMIMEType("image/png"),
	), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.BlobResourceContents{
			URI: req.Params.URI, MIMEType: "image/png", Blob: tinyPNG,
		}}, nil
	})
	s.AddResourceTemplate(mcp.NewResourceTemplate("test://items/{id}", "item",
		mcp.WithTemplateDescription("An item by id."),
		mcp.WithTemplateMIMEType("application/json"),
	), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		id := strings.TrimPrefix(req.Params.URI, "test://items/")
		body, _ := json.Marshal(map[string]string{"id": id})
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: req.Params.URI, MIMEType: "application/json", Text: string(body),
		}}, nil
	})
}

func addPrompts(s *server.MCPServer) {
	s.AddPrompt(mcp.NewPrompt("greet",
		mcp.WithPromptDescription("Greets someone."),
		mcp.WithArgument("name", mcp.ArgumentDescription("who to greet"), mcp.RequiredArgument()),
	), func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		name := req.Params.Arguments["name"]
		return mcp.NewGetPromptResult("A greeting", []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Say hello to "+name+".")),
		}), nil
	})
	s.AddPrompt(mcp.NewPrompt("summarize",
		mcp.WithPromptDescription("Summarizes a text in a given style."),
		mcp.WithArgument("text", mcp.ArgumentDescription("text to summarize"), mcp.RequiredArgument()),
		mcp.WithArgument("style", mcp.ArgumentDescription("short or long")),
	), func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		style := req.Params.Arguments["style"]
		if style == "" {
			style = "short"
		}
		return mcp.NewGetPromptResult("A summary request", []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Summarize ("+style+"): "+req.Params.Arguments["text"])),
		}), nil
	})
}

// completions complete summarize's style (short, long) and the id of the
// test://items/{id} template (1 to 3), by prefix.
type completions struct{}

func (completions) CompletePromptArgument(_ context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if prompt != "summarize" || arg.Name != "style" {
		return &mcp.Completion{Values: []string{}}, nil
	}
	return prefixed([]string{"short", "long"}, arg.Value), nil
}

func (completions) CompleteResourceArgument(_ context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if uri != "test://items/{id}" || arg.Name != "id" {
		return &mcp.Completion{Values: []string{}}, nil
	}
	return prefixed([]string{"1", "2", "3"}, arg.Value), nil
}

func prefixed(all []string, prefix string) *mcp.Completion {
	out := []string{}
	for _, v := range all {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return &mcp.Completion{Values: out, Total: len(out)}
}
