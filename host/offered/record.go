package offered

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// FormatVersion is the version of the record files this package writes.
// Version 3 holds each tool as hermes keeps it (mcpvalue.Tool: name,
// title, description, the schemas as the server wrote them, annotations);
// versions 1 and 2 held the engine's encoding of a tool (mcp-go's
// mcp.Tool), with fields hermes never reads. Version 2 added ToolsSum, so
// that a record is read without recomputing its tools' digests. A record
// of version 1 or 2 is still read (in version 1 its digests recomputed and
// checked) and rewritten once as version 3 (Store.LoadAny); a tool's
// digest is the same in every version. A record of another version is
// ignored (and rebuilt).
const FormatVersion = 3

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
	Protocol     string                  `json:"protocol"`
	ServerInfo   mcpvalue.Implementation `json:"server_info"`
	Instructions string                  `json:"instructions,omitempty"`
	Capabilities mcpvalue.Capabilities   `json:"capabilities"`
	// Tools is the whole tools/list, in the server's order, before the
	// entry's tools filter (empty for a server without the tools
	// capability).
	Tools []mcpvalue.Tool `json:"tools"`
	// Digests maps each tool's name to its ToolDigest, of the tool as it
	// reads back from the record; Save fills it. A reader compares these
	// with an approved baseline instead of digesting every tool again.
	Digests map[string]string `json:"digests"`
	// ToolsSum is the hex sha256 of Tools as written (compact JSON, HTML
	// characters escaped: see toolsSum); Save fills it. A record whose
	// tools do not match it is damaged and refused, so that the stored
	// Digests can be taken as the digests of its tools. Empty in version 1.
	ToolsSum string `json:"tools_sum,omitempty"`
}

// Upgraded reports whether the record was read from a file of an older
// version (it is rewritten as FormatVersion by the store that read it).
func (r *Record) Upgraded() bool { return r.Version != FormatVersion }

// Resources reports whether the server has the resources capability.
func (r *Record) Resources() bool { return mcpvalue.HasSchema(r.Capabilities.Resources) }

// Prompts reports whether the server has the prompts capability.
func (r *Record) Prompts() bool { return mcpvalue.HasSchema(r.Capabilities.Prompts) }

// Age is how long ago the listing was made.
func (r *Record) Age(now time.Time) time.Duration { return now.Sub(r.FetchedAt) }

// fill sets Version and Digests. A reader takes the digests as they are,
// so each must also be the digest of the tool as it reads back from the
// record (encoded and decoded again): a tool that does not survive the
// round trip unchanged is an error, and no record is written (its server
// is then started to be listed, never registered from a record that says
// something else than it sent). ToolsSum is set when the record is
// encoded (MarshalJSON).
func (r *Record) fill() error {
	r.Version = FormatVersion
	out := make(map[string]string, len(r.Tools))
	for _, t := range r.Tools {
		d, err := ToolDigest(t)
		if err != nil {
			return err
		}
		b, err := encodeCompact(t)
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		back, err := decodeTool(b)
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		if db, err := ToolDigest(back); err != nil || db != d {
			return fmt.Errorf("tool %q does not read back from the record as the server listed it", t.Name)
		}
		out[t.Name] = d
	}
	r.Digests = out
	return nil
}

// recordWire is a Record as a file holds it: its tools as written.
type recordWire struct {
	*plainRecord
	Tools json.RawMessage `json:"tools"`
	// decoded are Tools decoded, before tidy, when the reader decoded
	// them on its way through the file (readRecord); nil otherwise.
	decoded []mcpvalue.Tool
}

// plainRecord is a Record without its methods.
type plainRecord Record

// MarshalJSON encodes the record with ToolsSum of its tools as encoded.
func (r Record) MarshalJSON() ([]byte, error) {
	tools, err := encodeCompact(r.Tools)
	if err != nil {
		return nil, err
	}
	c := r
	c.ToolsSum = toolsSum(tools)
	return encodeCompact(recordWire{plainRecord: (*plainRecord)(&c), Tools: tools})
}

// toolsSum is the hex sha256 of tools, a JSON array, compacted and with
// <, > and & escaped as json.Marshal escapes them: the same for a record
// encoded by Save (no HTML escaping) and by json.Marshal.
func toolsSum(tools []byte) string {
	var compact bytes.Buffer
	if err := json.Compact(&compact, tools); err != nil {
		return ""
	}
	var esc bytes.Buffer
	esc.Grow(compact.Len())
	json.HTMLEscape(&esc, compact.Bytes())
	sum := sha256.Sum256(esc.Bytes())
	return hex.EncodeToString(sum[:])
}

// sumMatches reports whether tools, a record's tools as its file holds
// them, match sum, their toolsSum. Tools written compact without a
// character HTML escaping changes (what Save writes, unless a description
// holds <, > or &) are their own canonical form: their plain sha256 is
// tried first, which spares compacting and escaping them.
func sumMatches(tools []byte, sum string) bool {
	if sum == "" {
		return false
	}
	plain := sha256.Sum256(tools)
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], plain[:])
	return string(hexSum[:]) == sum || toolsSum(tools) == sum
}

// DecodeRecord parses a record file and checks it whole: its version, the
// server's name, no tool twice, one digest per tool, and that the tools
// are those written: from version 2 on by ToolsSum (the stored digests are then
// taken as they are), in version 1 by recomputing every digest. Any
// failure is an error saying what is wrong; the caller ignores the file.
func DecodeRecord(data []byte) (*Record, error) {
	var r Record
	w := recordWire{plainRecord: (*plainRecord)(&r)}
	if !readRecord(data, &w) {
		r = Record{}
		w = recordWire{plainRecord: (*plainRecord)(&r)}
		if err := decodeStrict(data, &w); err != nil {
			return nil, err
		}
	}
	if r.Version < 1 || r.Version > FormatVersion {
		return nil, fmt.Errorf("format version %d, want %d", r.Version, FormatVersion)
	}
	if !config.ValidStateKey(r.Server) {
		return nil, fmt.Errorf("server name %q is not valid", r.Server)
	}
	if r.SettingsDigest == "" {
		return nil, errors.New("no settings digest")
	}
	if r.Version >= 2 && !sumMatches(w.Tools, r.ToolsSum) {
		return nil, errors.New("its tools do not match their checksum (tools_sum)")
	}
	if w.decoded != nil {
		r.Tools = tidyAll(w.decoded)
	} else {
		tools, err := decodeTools(w.Tools)
		if err != nil {
			return nil, err
		}
		r.Tools = tools
	}
	if err := checkTools(r.Tools, r.Digests, r.Version == 1); err != nil {
		return nil, err
	}
	return &r, nil
}

// checkTools checks that tools are at most MaxTools, named, unique, and
// that want holds exactly one digest for each, a sha256; with recompute,
// that each is the tool's digest.
func checkTools(tools []mcpvalue.Tool, want map[string]string, recompute bool) error {
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
		if !isHex(w, 64) {
			return fmt.Errorf("tool %q: its digest is not a sha256", t.Name)
		}
		if !recompute {
			continue
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

// decodeStrict decodes one JSON value into v, refusing trailing data
// (json.Unmarshal does: it reads data in place, where a json.Decoder
// copies it into a buffer it grows as it goes).
func decodeStrict(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	return nil
}
