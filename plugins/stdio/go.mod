module github.com/hermes-agent/hermes/plugins/stdio

go 1.26.0

require (
	github.com/elastic/go-seccomp-bpf v1.6.0
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hermes-agent/hermes/sdk v0.0.0
	golang.org/x/net v0.41.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/hashicorp/go-plugin v1.8.0 // indirect
	github.com/hashicorp/yamux v0.1.2 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/hermes-agent/hermes/sdk => ../../sdk

// go-plugin v1.8.0 without its gRPC half (hermes speaks net/rpc only): see
// third_party/hashicorp-go-plugin/README.md.
replace github.com/hashicorp/go-plugin => ../../third_party/hashicorp-go-plugin
