module github.com/hermes-agent/hermes/plugins/exec

go 1.26.0

require github.com/hermes-agent/hermes/sdk v0.0.0

replace github.com/hermes-agent/hermes/sdk => ../../sdk
