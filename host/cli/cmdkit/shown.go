package cmdkit

import (
	"fmt"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/importer"
	"github.com/hermes-agent/hermes/host/toolview"
)

// What the commands show of a server comes through this file: its errors
// with secrets redacted, and its entry as configured, ${VAR}s unresolved.
// Escaping for the terminal is the Printer's (package ui); JSON goes
// through writeJSON and raw text through termsafe.

// ShownErr is how every command shows an error that may carry a server's
// words or a value resolved from ${VAR} (a connection failure, a tool
// call's error, an HTTP error body echoing the request URL): on one line,
// with secrets redacted by toolview.Redact, the same redaction the model's
// errors get. The Printer escapes it for the terminal.
func ShownErr(err error) string {
	return toolview.Redact(OneLine(err.Error()))
}

// ShownCommand is the command of a stdio server as written in config.yaml.
func ShownCommand(srv *config.Server) string {
	if srv.Raw == nil {
		return srv.Command
	}
	return RawScalar(srv.Raw["command"])
}

// RawScalar is a single value of the file as text, as the config package
// reads it (command: 5 is "5"); anything else (a list, a mapping) is "".
func RawScalar(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case nil, []any, map[string]any:
		return ""
	}
	return fmt.Sprint(v)
}

// ShownArgs are the args of a stdio server as written in config.yaml, with
// every secret-looking word masked (importer.MaskArgv): a ${VAR} in them (an
// --token ${GITHUB_TOKEN}) stays a reference and its value is never shown,
// and a token written out (--token ghp_..., API_KEY=...) shows as ***.
func ShownArgs(srv *config.Server) []string { return importer.MaskArgv(WrittenArgs(srv)) }

// WrittenArgs are the args of a stdio server as written in config.yaml,
// unmasked: only for shownArgs.
func WrittenArgs(srv *config.Server) []string {
	switch a := srv.Raw["args"].(type) {
	case string:
		return config.SplitArgs(a)
	case []any:
		out := make([]string, len(a))
		for i, x := range a {
			if s, ok := x.(string); ok {
				out[i] = s
			} else {
				out[i] = fmt.Sprint(x)
			}
		}
		return out
	}
	if srv.Raw == nil {
		return srv.Args
	}
	return nil
}

// ShownURL is the url of an HTTP server as written in config.yaml: a
// ${VAR} in its query (api_key=${KEY}) stays a reference.
func ShownURL(srv *config.Server) string {
	if srv.Raw == nil {
		return srv.URL
	}
	return RawScalar(srv.Raw["url"])
}

// ShownCommandLine is the command and its args, as configured, on one line.
func ShownCommandLine(srv *config.Server) string {
	return strings.TrimSpace(ShownCommand(srv) + " " + strings.Join(ShownArgs(srv), " "))
}

// ShownExecCommand is the exec: block's command and args as configured
// (${VAR}s unresolved), on one line; "" when there is no command.
func ShownExecCommand(srv *config.Server) string {
	block, _ := srv.Raw["exec"].(map[string]any)
	cmd := RawScalar(block["command"])
	if cmd == "" {
		return ""
	}
	var args []string
	switch a := block["args"].(type) {
	case string:
		args = config.SplitArgs(a)
	case []any:
		for _, x := range a {
			args = append(args, fmt.Sprint(x))
		}
	}
	return strings.TrimSpace(cmd + " " + strings.Join(importer.MaskArgv(args), " "))
}
