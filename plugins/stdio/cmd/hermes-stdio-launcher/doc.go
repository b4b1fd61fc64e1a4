// Command hermes-stdio-launcher is the stdio plugin's launcher: the plugin
// (hermes-transport-stdio, beside which it is installed) starts it in the
// namespaces a server gets, hands it a plan (package launcher) on a pipe,
// and it applies that plan to itself (its pid namespace's /proc, its network
// namespace's loopback, resource limits, no capabilities, no_new_privs,
// Landlock, the seccomp filters the plugin assembled, nothing open but
// stdin, stdout and stderr), reports on its status socket and executes the
// server, or, as the init of the server's pid namespace, starts the server
// as its child and stays to reap and pass on signals until it ends.
//
// It is small on purpose: as an init it stays resident beside every server
// the plugin starts, so it links only the standard library's runtime, os,
// os/signal and syscall layers and golang.org/x/sys/unix (no fmt, no
// encoding, no gRPC); TestImportsStayLeaf holds it to that.
package main
