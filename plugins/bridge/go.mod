module github.com/hermes-agent/hermes/plugins/bridge

go 1.26.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hermes-agent/hermes/sdk v0.0.0
	github.com/hermes-agent/hermes/statedb v0.0.0
)

require (
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/fatih/color v1.13.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-plugin v1.8.0 // indirect
	github.com/hashicorp/yamux v0.1.2 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.62.0 // indirect
)

replace github.com/hermes-agent/hermes/sdk => ../../sdk

replace github.com/hermes-agent/hermes/statedb => ../../statedb

// go-plugin v1.8.0 without its gRPC half (hermes speaks net/rpc only): see
// third_party/hashicorp-go-plugin/README.md.
replace github.com/hashicorp/go-plugin => ../../third_party/hashicorp-go-plugin
