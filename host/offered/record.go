package offered

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/mark3labs/mcp-go/mcp"
)

// FormatVersion is the version of the record files this package writes; a
// record of another version is ignored (and rebuilt).
const FormatVersion = 1

// MaxTools bounds the tools of one record or baseline.
const MaxTools = 10000

// Record is what one server offered at its last successful listing.
type Record struct {
	// Version is FormatVersion.
	Version int `json:"version"`
	// Server is the server's state key (config.Server.StateKey): its name
	// in config.yaml, or name@digest for a project's server.
	Server string `json:"server"`
	// SettingsDigest is SettingsDigest of the entry the listing was made
	// with; Load returns the record only for an entry with the same one.
	SettingsDigest string `json:"settings_digest"`
	// FetchedAt is when the listing was made.
	FetchedAt time.Time `json:"fetched_at"`
	// Protocol is the negotiated MCP revision.
	Protocol     string                 `json:"protocol"`
	ServerInfo   mcp.Implementation     `json:"server_info"`
	Instructions string                 `json:"instructions,omitempty"`
	Capabilities mcp.ServerCapabilities `json:"capabilities"`
	// Tools is the whole tools/list, in the server's order, before the
	// entry's tools filter (empty for a server without the tools
	// capability).
	Tools []mcp.Tool `json:"tools"`
	// Digests maps each tool's name to its ToolDigest; Save fills it.
	Digests map[string]string `json:"digests"`
}

// Resources reports whether the server has the resources capability.
func (r *Record) Resources() bool { return r.Capabilities.Resources != nil }

// Prompts reports whether the server has the prompts capability.
func (r *Record) Prompts() bool { return r.Capabilities.Prompts != nil }

// Age is how long ago the listing was made.
func (r *Record) Age(now time.Time) time.Duration { return now.Sub(r.FetchedAt) }

// fill sets Version and Digests.
func (r *Record) fill() error {
	r.Version = FormatVersion
	d, err := digests(r.Tools)
	if err != nil {
		return err
	}
	r.Digests = d
	return nil
}

func digests(tools []mcp.Tool) (map[string]string, error) {
	out := make(map[string]string, len(tools))
	for _, t := range tools {
		d, err := ToolDigest(t)
		if err != nil {
			return nil, err
		}
		out[t.Name] = d
	}
	return out, nil
}

// DecodeRecord parses a record file and checks it whole: its version, the
// server's name, one digest per tool that matches the tool, no tool twice.
// Any failure is an error saying what is wrong; the caller ignores the
// file.
func DecodeRecord(data []byte) (*Record, error) {
	var r Record
	if err := decodeStrict(data, &r); err != nil {
		return nil, err
	}
	if r.Version != FormatVersion {
		return nil, fmt.Errorf("format version %d, want %d", r.Version, FormatVersion)
	}
	if !config.ValidStateKey(r.Server) {
		return nil, fmt.Errorf("server name %q is not valid", r.Server)
	}
	if r.SettingsDigest == "" {
		return nil, errors.New("no settings digest")
	}
	if err := checkTools(r.Tools, r.Digests); err != nil {
		return nil, err
	}
	return &r, nil
}

// checkTools checks that tools are at most MaxTools, named, unique, and
// that want holds exactly their digests.
func checkTools(tools []mcp.Tool, want map[string]string) error {
	if len(tools) > MaxTools {
		return fmt.Errorf("%d tools, more than %d", len(tools), MaxTools)
	}
	if len(want) != len(tools) {
		return fmt.Errorf("%d digests for %d tools", len(want), len(tools))
	}
	for _, t := range tools {
		if t.Name == "" {
			return errors.New("a tool without a name")
		}
		w, ok := want[t.Name]
		if !ok {
			return fmt.Errorf("tool %q has no digest, or is listed twice", t.Name)
		}
		got, err := ToolDigest(t)
		if err != nil {
			return err
		}
		if got != w {
			return fmt.Errorf("tool %q does not match its digest", t.Name)
		}
	}
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if seen[t.Name] {
			return fmt.Errorf("tool %q is listed twice", t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// decodeStrict decodes one JSON object into v, refusing trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	if dec.More() {
		return errors.New("data after the JSON object")
	}
	return nil
}
