// Package cmdkit holds what every hermes command shares, so that the
// commands can live in packages by noun: the run as the commands see it
// (Env: its streams, its terminal and the composition root app.Factory,
// and the functions that read them), the exit codes and one-line failures,
// the --json output and its vocabulary of states and codes, how a server
// and its errors are shown, the one reader of stdin and the terminal the
// auth plugins and servers' requests talk to, and the suggestions for a
// mistyped name. It holds no command of its own and no global state.
package cmdkit
