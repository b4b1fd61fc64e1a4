// Package homedir names every path under the Hermes home folder
// ($HERMES_HOME, default ~/.hermes) once: the config file, .env, the token,
// install and plugin folders, the logs, state.db and the stores of what
// servers offered. Every package that reads or writes under the home folder
// asks a Dir for the path instead of joining names of its own, so a layout
// change is one edit here.
//
// It owns names only: it creates, reads and checks nothing, and imports
// nothing of hermes's but the names of the files other modules own
// (state.db's, the token folder's).
package homedir

import (
	"os"
	"os/user"
	"path/filepath"

	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/statedb"
)

// Dir is a Hermes home folder.
type Dir string

// Names of what lives in a home folder, for messages and for the packages
// that own each file's format.
const (
	// ConfigName is the config file (owned by host/config).
	ConfigName = "config.yaml"
	// DotEnvName is the secrets file, 0600 (owned by host/config).
	DotEnvName = ".env"
	// InstallsName is the folder of catalog installs (host/install).
	InstallsName = "mcp-installs"
	// PluginsName is the folder of plugins the person dropped in
	// (host/supervisor's last search place).
	PluginsName = "plugins"
	// LogsName is the folder of hermes's and its plugins' logs.
	LogsName = "logs"
	// HostLogName is hermes's own log in LogsName.
	HostLogName = "hermes.log"
	// ServerStderrLogName is where stdio servers' stderr lines go, in
	// LogsName.
	ServerStderrLogName = "mcp-stderr.log"
	// OfferedName is the store of what each server offered (host/offered).
	OfferedName = "offered"
	// ProjectApprovalsName is the person's decisions about project
	// servers (host/project).
	ProjectApprovalsName = "project-approvals.json"
	// ProtocolsName is the protocol revision each server negotiated last
	// (host/session).
	ProtocolsName = "mcp-protocols.json"
	// SamplingMetricsName is the sampling counters per server
	// (host/sampling).
	SamplingMetricsName = "sampling_metrics.json"
	// MediaCacheName is the folder of media a tool returned, saved for
	// the model and the person (host/toolview).
	MediaCacheName = "cache"
)

// From returns the home folder of an environment read through getenv:
// $HERMES_HOME, else ~/.hermes of $HOME, else of the account's home folder
// (as ssh and git find it), never a folder relative to wherever hermes was
// started unless nothing else is known.
func From(getenv func(string) string) Dir {
	if h := getenv("HERMES_HOME"); h != "" {
		return Dir(h)
	}
	if u := getenv("HOME"); u != "" {
		return Dir(filepath.Join(u, ".hermes"))
	}
	if u, err := os.UserHomeDir(); err == nil {
		return Dir(filepath.Join(u, ".hermes"))
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		return Dir(filepath.Join(u.HomeDir, ".hermes"))
	}
	return ".hermes"
}

// String is the folder's path.
func (d Dir) String() string { return string(d) }

// Config is config.yaml.
func (d Dir) Config() string { return d.join(ConfigName) }

// DotEnv is .env, where secrets live.
func (d Dir) DotEnv() string { return d.join(DotEnvName) }

// Tokens is the folder of every auth plugin's files.
func (d Dir) Tokens() string { return d.join(auth.TokenDirName) }

// Installs is the folder of catalog installs.
func (d Dir) Installs() string { return d.join(InstallsName) }

// Install is the install folder of the catalog entry name.
func (d Dir) Install(name string) string { return d.join(InstallsName, name) }

// Plugins is the folder of plugins the person installed by hand.
func (d Dir) Plugins() string { return d.join(PluginsName) }

// Logs is the folder of logs.
func (d Dir) Logs() string { return d.join(LogsName) }

// HostLog is hermes's own log.
func (d Dir) HostLog() string { return d.join(LogsName, HostLogName) }

// ServerStderrLog is the log of stdio servers' stderr.
func (d Dir) ServerStderrLog() string { return d.join(LogsName, ServerStderrLogName) }

// StateDB is state.db: conversations, approvals, sampling counts.
func (d Dir) StateDB() string { return d.join(statedb.FileName) }

// Offered is the folder of the store of what servers offered.
func (d Dir) Offered() string { return d.join(OfferedName) }

// ProjectApprovals is the file of the person's project-server decisions.
func (d Dir) ProjectApprovals() string { return d.join(ProjectApprovalsName) }

// Protocols is the file of each server's last negotiated revision.
func (d Dir) Protocols() string { return d.join(ProtocolsName) }

// SamplingMetrics is the file of sampling counters.
func (d Dir) SamplingMetrics() string { return d.join(SamplingMetricsName) }

// MediaCache is the folder where media from tools is saved.
func (d Dir) MediaCache() string { return d.join(MediaCacheName) }

func (d Dir) join(elem ...string) string {
	return filepath.Join(append([]string{string(d)}, elem...)...)
}
