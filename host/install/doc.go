// Package install installs and uninstalls catalog entries into a Hermes
// home folder (hermes mcp install / uninstall): it shows the plan, clones
// the entry's repository at its pinned commit, runs its bootstrap, checks
// the plugin binary it ships, asks for its credentials, probes the server,
// lets the user pick its tools and saves the entry, all or nothing (the
// journal, journal.go, puts back what an interrupted install changed). It
// reads manifests through package catalog and talks to a person only
// through the Prompter its caller gives; it never reads or writes the
// terminal itself.
package install
