package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/sdk"
)

// settings is the exec: block of a server entry, checked. The host hands it
// over as decoded JSON: strings, float64 numbers, []any lists, map[string]any
// maps, with ${VAR}s already resolved.
type settings struct {
	command  string        // the program, as configured ("~/" expanded)
	args     []string      // its arguments, passed as they are (no shell)
	env      []string      // its environment
	lifetime time.Duration // how long a token is reused
	timeout  time.Duration // how long one run may take
	header   string        // the request header that carries the token
	shown    string        // the command line, as errors and status show it
}

const (
	defaultLifetime = 300 * time.Second
	defaultTimeout  = 30 * time.Second
	// maxSeconds bounds lifetime and timeout (some 31 years).
	maxSeconds = 1e9
)

// parseSettings checks the exec: block; an error is a CodeConfig error
// naming the key to fix.
func parseSettings(m map[string]any) (*settings, error) {
	s := &settings{lifetime: defaultLifetime, timeout: defaultTimeout, header: "Authorization"}
	var env map[string]string
	for _, key := range slices.Sorted(maps.Keys(m)) {
		v := m[key]
		var err error
		switch key {
		case "command":
			s.command, err = str(v)
		case "args":
			s.args, err = strList(v)
		case "env":
			env, err = strMap(v)
		case "lifetime":
			s.lifetime, err = seconds(v)
		case "timeout":
			s.timeout, err = seconds(v)
		case "header":
			s.header, err = headerName(v)
		default:
			err = errors.New("unknown setting (known: command, args, env, lifetime, timeout, header)")
		}
		if err != nil {
			return nil, sdk.NewError(sdk.CodeConfig, "exec.%s: %v", key, err)
		}
	}
	if s.command == "" {
		return nil, sdk.NewError(sdk.CodeConfig, "exec.command: missing; set it to the program that prints the token (e.g. command: gcloud, args: [auth, print-access-token])")
	}
	s.env = commandEnv(os.Environ(), env)
	if rest, ok := strings.CutPrefix(s.command, "~/"); ok {
		if home := envValue(s.env, "HOME"); home != "" {
			s.command = home + "/" + rest
		}
	}
	s.shown = commandLine(s.command, s.args)
	return s, nil
}

// str accepts a string, and a number or boolean as its text (YAML has
// `args: [--port, 8080]` decode 8080 as a number).
func str(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", fmt.Errorf("want a string, got %s", kind(v))
}

func strList(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("want a list of strings, e.g. [auth, print-access-token], got %s", kind(v))
	}
	out := make([]string, len(list))
	for i, item := range list {
		s, err := str(item)
		if err != nil {
			return nil, fmt.Errorf("item %d: %v", i+1, err)
		}
		out[i] = s
	}
	return out, nil
}

func strMap(v any) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a map of variable names to values, got %s", kind(v))
	}
	out := map[string]string{}
	for k, item := range m {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("%q is not a variable name", k)
		}
		s, err := str(item)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		out[k] = s
	}
	return out, nil
}

// seconds accepts a positive number of seconds, or its text (a ${VAR}
// resolves to a string).
func seconds(v any) (time.Duration, error) {
	var f float64
	var shown string
	switch v := v.(type) {
	case float64:
		f, shown = v, strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		// A malformed number parses as 0, which is refused below.
		f, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		shown = strconv.Quote(v)
	default:
		shown = kind(v)
	}
	if !(f > 0 && f <= maxSeconds) {
		return 0, fmt.Errorf("want a positive number of seconds, got %s", shown)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// headerName accepts an HTTP header name (RFC 9110 token characters).
func headerName(v any) (string, error) {
	s, ok := v.(string)
	valid := ok && s != "" && strings.Trim(s, "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == ""
	if !valid {
		return "", errors.New("want an HTTP header name, e.g. Authorization")
	}
	return s, nil
}

// kind names a decoded JSON value's type for an error message (never its
// value: it might be a secret).
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "true/false"
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}

// commandLine is the command as shown to the user: its words, quoted when
// they hold spaces or odd characters.
func commandLine(command string, args []string) string {
	words := make([]string, 0, 1+len(args))
	for _, w := range append([]string{command}, args...) {
		if w == "" || strings.ContainsFunc(w, func(r rune) bool { return r <= ' ' || r == '"' || r == '\'' || r == '`' || r > '~' }) {
			w = strconv.Quote(w)
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}
