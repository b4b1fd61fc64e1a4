module github.com/hermes-agent/hermes/plugins/http

go 1.26.0

require (
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hermes-agent/hermes/sdk v0.3.0
	github.com/hermes-agent/hermes/sdk/mcpgo v0.0.0
	github.com/mark3labs/mcp-go v1.2.1
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-plugin v1.8.0 // indirect
	github.com/hashicorp/yamux v0.1.2 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.30.0 // indirect
)

replace github.com/hermes-agent/hermes/sdk => ../../sdk

replace github.com/hermes-agent/hermes/sdk/mcpgo => ../../sdk/mcpgo

// The tests drive the plugin through the host's mcp-go session adapter
// (host/pluginconn); the plugin binary itself links the sdk only.

// go-plugin v1.8.0 without its gRPC half (hermes speaks net/rpc only): see
// third_party/hashicorp-go-plugin/README.md.
replace github.com/hashicorp/go-plugin => ../../third_party/hashicorp-go-plugin
