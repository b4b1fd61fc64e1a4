module github.com/hermes-agent/hermes/plugins/bridge

go 1.26.0
