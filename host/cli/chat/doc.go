// Package chat owns 'hermes chat': the interactive and one-shot
// conversation with the model and the servers' tools, its slash commands,
// the view of a turn on the terminal, the approval gate's questions and
// the system message. It builds nothing itself: the registry, the model
// client and the request handlers come from the run's composition root.
package chat
