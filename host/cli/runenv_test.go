package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/roots"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// A ${VAR} of config.yaml and the safe environment a stdio server inherits
// come from the run's environment (cli.Options.Env), not from the process
// the command runs in: the variables below are set only in the run's
// environment, never in this test process, and the server sees them.
func TestConfigVarsAndServerEnvFromOptionsEnv(t *testing.T) {
	t.Parallel()
	const tokenVar, token = "HERMES_RUNENV_TEST_TOKEN", "tok-from-options-env"
	if _, ok := os.LookupEnv(tokenVar); ok {
		t.Fatalf("%s is set in the test process; the test needs it unset there", tokenVar)
	}
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  ts:\n    command: "+testServerPath(t)+"\n    env:\n      TOKEN: ${"+tokenVar+"}\n")
	// LANG is one of the variables a server inherits from the host (the
	// safe baseline); the run's value must win over the process's.
	lang := "x-runenv.UTF-8"
	extra := []string{tokenVar + "=" + token, "LANG=" + lang}
	for name, want := range map[string]string{"TOKEN": token, "LANG": lang} {
		out := runHermesEnv(t, home, extra, "mcp", "call", "ts", "env", "--arg", "name="+name).must(t, 0)
		if got := strings.TrimSpace(out.stdout); got != want {
			t.Errorf("the server's %s = %q, want %q (from cli.Options.Env)", name, got, want)
		}
	}
	// Without the variable in the run's environment the entry needs it.
	r := runHermes(t, home, "mcp", "call", "ts", "env", "--arg", "name=TOKEN")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, tokenVar) {
		t.Errorf("without %s the call should fail naming it; exit %d:\n%s%s", tokenVar, r.code, r.stdout, r.stderr)
	}
}

// The real binary reads the same from its process environment (cli.Main
// passes os.Environ as Options.Env).
func TestConfigVarsFromProcessEnvironment(t *testing.T) {
	t.Parallel()
	const tokenVar, token = "HERMES_RUNENV_TEST_TOKEN", "tok-from-process-env"
	home := newHome(t)
	writeConfig(t, home, "mcp_servers:\n  ts:\n    command: "+testServerPath(t)+"\n    env:\n      TOKEN: ${"+tokenVar+"}\n")
	out := runHermesBinary(t, home, []string{tokenVar + "=" + token}, nil, "mcp", "call", "ts", "env", "--arg", "name=TOKEN").must(t, 0)
	if got := strings.TrimSpace(out.stdout); got != token {
		t.Errorf("the server's TOKEN = %q, want %q (from the hermes process's environment)", got, token)
	}
}

// roots: of config.yaml is read with the run's environment too: its
// ${VAR}s from cli.Options.Env, its ~ as the run's HOME. Neither is set
// in this test process.
func TestRootsFromOptionsEnv(t *testing.T) {
	t.Parallel()
	const rootVar = "HERMES_RUNENV_TEST_ROOT"
	if _, ok := os.LookupEnv(rootVar); ok {
		t.Fatalf("%s is set in the test process; the test needs it unset there", rootVar)
	}
	home, dir, user := newHome(t), t.TempDir(), t.TempDir()
	writeConfig(t, home, "roots:\n  - ${"+rootVar+"}\n  - ~/projects\nmcp_servers:\n  ts:\n    command: "+testServerPath(t)+"\n")
	r := runHermesEnv(t, home, []string{rootVar + "=" + dir, "HOME=" + user}, "mcp", "call", "ts", "roots").must(t, 0)
	for _, want := range []string{roots.FileURI(dir), roots.FileURI(filepath.Join(user, "projects"))} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the roots lack %s:\n%s%s", want, r.stdout, r.stderr)
		}
	}
}

// mcp_serve: of config.yaml is read with the run's environment: a ${VAR}
// set only in cli.Options.Env resolves, and serve goes on to look for its
// bridge plugin.
func TestServeSettingsFromOptionsEnv(t *testing.T) {
	t.Parallel()
	const timeoutVar = "HERMES_RUNENV_TEST_CALL_TIMEOUT"
	if _, ok := os.LookupEnv(timeoutVar); ok {
		t.Fatalf("%s is set in the test process; the test needs it unset there", timeoutVar)
	}
	home := newHome(t)
	writeConfig(t, home, "mcp_serve:\n  call_timeout: ${"+timeoutVar+"}\n")
	runHermesEnv(t, home, []string{timeoutVar + "=30"}, "mcp", "serve", "--bridge", "nope").must(t, 1).oneLineErr(t, "hermes-bridge-nope")
	runHermes(t, home, "mcp", "serve", "--bridge", "nope").must(t, 1).oneLineErr(t, "mcp_serve.call_timeout needs ${"+timeoutVar+"}")
}

// model: and approval: of config.yaml are read with the run's environment:
// a chat whose model endpoint and approval timeout are ${VAR}s set only in
// cli.Options.Env reaches the model and warns about neither.
func TestChatSettingsFromOptionsEnv(t *testing.T) {
	t.Parallel()
	const urlVar, timeoutVar = "HERMES_RUNENV_TEST_MODEL_URL", "HERMES_RUNENV_TEST_APPROVAL_TIMEOUT"
	for _, v := range []string{urlVar, timeoutVar} {
		if _, ok := os.LookupEnv(v); ok {
			t.Fatalf("%s is set in the test process; the test needs it unset there", v)
		}
	}
	srv := testmodel.New(t)
	srv.SetDefault(testmodel.Reply{Text: "hello from the run's model"})
	home := chatHome(t, srv, "", "approval:\n  timeout: ${"+timeoutVar+"}\n")
	writeConfig(t, home, strings.Replace(readConfig(t, home), "base_url: "+srv.URL, "base_url: ${"+urlVar+"}", 1))
	r := runHermesEnv(t, home, []string{urlVar + "=" + srv.URL, timeoutVar + "=5"}, "chat", "hi")
	if r.code != 0 || r.stdout != "hello from the run's model\n" || strings.Contains(r.stderr, "needs ${") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
