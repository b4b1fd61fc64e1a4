module github.com/hashicorp/go-plugin

go 1.24

require (
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hashicorp/yamux v0.1.2
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.17 // indirect
	golang.org/x/sys v0.31.0 // indirect
)
