package offered

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// BaselineVersion is the version of the baseline files this package
// writes. Version 1 kept each approved tool's whole definition, so its
// size grew with what the server sent, in the engine's encoding of a tool
// (mcp-go's mcp.Tool); it is still read, and rewritten once as version 2
// by the store that reads it (Store.Baseline). Version 2 holds hermes's
// own values only: digests, parts, hints.
const BaselineVersion = 2

// Bounds of one approved tool in a baseline. They keep a baseline's size
// independent of how large the definitions a server sends are, so that a
// baseline always fits MaxBaselineBytes.
const (
	// MaxExcerptBytes bounds the approved description kept to show a
	// person what it was (longer ones are cut, marked with "…").
	MaxExcerptBytes = 256
	// MaxKeyBytes bounds a tool's name as a baseline files it: a longer
	// name is filed as "sha256:" and the hex sha256 of the name.
	MaxKeyBytes = 128
	// MaxSchemaParts bounds the input schema properties (and, apart, the
	// other keys of the schema and of the annotations) whose digests are
	// kept by name, and MaxPartNameBytes the length of each name. Past
	// either, a change inside is reported as "schema changed".
	MaxSchemaParts   = 64
	MaxPartNameBytes = 64
)

// MaxBaselineBytes bounds a baseline file. It is hermes's own limit, not
// the server's max_message_mb: an approved tool takes a bounded size
// whatever the server sent (above), so MaxTools tools always fit, and a
// server can never make its approval too large to be read.
const MaxBaselineBytes = 128 << 20

// Baseline is what the person approved of one server's tools: each tool's
// digest, and what drift needs to say what changed. Drift is measured
// against it (Compare).
type Baseline struct {
	// Version is BaselineVersion.
	Version int `json:"version"`
	// Server is the server's state key (config.Server.StateKey).
	Server string `json:"server"`
	// Tools maps a tool's key (ToolKey of its name) to what was approved.
	Tools map[string]ApprovedTool `json:"tools"`

	// upgraded: read from a file of an older version (the store that read
	// it rewrites it).
	upgraded bool
}

// ApprovedTool is one approved tool definition: its digest (ToolDigest,
// what decides whether the tool changed) and the digests of its parts
// (what says how).
type ApprovedTool struct {
	Digest     string    `json:"digest"`
	ApprovedAt time.Time `json:"approved_at"`
	// How is how it was approved: "first use" (trusted at the first
	// connection), "add", "install", "configure", "accepted".
	How string `json:"how"`
	// RawParts are the digests of its parts (Parts) as the file holds
	// them. They only say how a tool changed, never whether it did (the
	// Digest decides), so a reader decodes and checks them when a change
	// is described, not at every read of the baseline.
	RawParts json.RawMessage `json:"parts"`
	// Hints are the annotations the approval gate decides by, as they
	// were approved: a server that drops destructiveHint afterwards is
	// still asked about (host/approval).
	Hints *Hints `json:"hints,omitempty"`
}

// Hints are a tool's safety annotations as approved: destructiveHint and
// readOnlyHint, nil where the tool did not set them.
type Hints struct {
	Destructive *bool `json:"destructive,omitempty"`
	ReadOnly    *bool `json:"read_only,omitempty"`
}

// hintsOf are t's Hints, nil when it sets neither.
func hintsOf(t mcpvalue.Tool) *Hints {
	a := t.Annotations
	if a.Destructive == nil && a.ReadOnly == nil {
		return nil
	}
	return &Hints{Destructive: a.Destructive, ReadOnly: a.ReadOnly}
}

// Parts are the parts of a tool definition drift reports on, each as a
// short digest (16 hex digits: they describe a change, the full Digest
// decides it), and the description's start to show a person.
type Parts struct {
	Description string `json:"description"`
	// Excerpt is the description, cut to MaxExcerptBytes.
	Excerpt string `json:"excerpt,omitempty"`
	// Schema is the digest of the whole input schema.
	Schema string `json:"input_schema"`
	// Properties and SchemaKeys map the input schema's properties and its
	// other keys to their digests; Annotations the annotations' keys.
	Properties  map[string]string `json:"properties,omitempty"`
	SchemaKeys  map[string]string `json:"schema_keys,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Whole: the schema had more parts than MaxSchemaParts (or a longer
	// name than MaxPartNameBytes); Properties and SchemaKeys are empty and
	// a change is reported for the schema as a whole.
	Whole bool `json:"whole,omitempty"`
}

// ToolKey is the key a baseline files the tool name under: the name, or
// "sha256:" and its hex sha256 when it is longer than MaxKeyBytes.
func ToolKey(name string) string {
	if len(name) <= MaxKeyBytes {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// shortDigest is the first 16 hex digits of the sha256 of b.
func shortDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// excerpt cuts s to at most MaxExcerptBytes of valid UTF-8.
func excerpt(s string) string {
	cut := len(s) > MaxExcerptBytes
	if !cut && utf8.ValidString(s) {
		return s
	}
	s = string([]rune(s[:min(len(s), MaxExcerptBytes)])) // invalid bytes become U+FFFD
	limit := MaxExcerptBytes
	if cut {
		limit -= len("…")
	}
	for len(s) > limit {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	if cut {
		s += "…"
	}
	return s
}

// partsOf returns the parts of t's definition.
func partsOf(t mcpvalue.Tool) (Parts, error) {
	d, err := defOf(t)
	if err != nil {
		return Parts{}, err
	}
	p := Parts{Description: shortDigest([]byte(d.Description)), Excerpt: excerpt(d.Description), Schema: shortDigest(d.InputSchema)}
	schema := objectOf(d.InputSchema)
	props := objectOf(schema["properties"])
	delete(schema, "properties")
	var okP, okK bool
	p.Properties, okP = partDigests(props)
	p.SchemaKeys, okK = partDigests(schema)
	if !okP || !okK {
		p.Properties, p.SchemaKeys, p.Whole = nil, nil, true
	}
	p.Annotations, _ = partDigests(objectOf(d.Annotations))
	return p, nil
}

// partDigests maps each member of m to its short digest; false (and nil)
// when m has more than MaxSchemaParts members or a longer name than
// MaxPartNameBytes.
func partDigests(m map[string]json.RawMessage) (map[string]string, bool) {
	if len(m) > MaxSchemaParts {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if len(k) > MaxPartNameBytes {
			return nil, false
		}
		out[k] = shortDigest(v)
	}
	return out, true
}

// approvedTool is t approved now, how.
func approvedTool(t mcpvalue.Tool, how string, now time.Time) (ApprovedTool, error) {
	d, err := ToolDigest(t)
	if err != nil {
		return ApprovedTool{}, err
	}
	p, err := partsOf(t)
	if err != nil {
		return ApprovedTool{}, err
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return ApprovedTool{}, fmt.Errorf("tool %q: parts: %w", t.Name, err)
	}
	return ApprovedTool{Digest: d, ApprovedAt: now.UTC(), How: how, RawParts: raw, Hints: hintsOf(t)}, nil
}

// maxRawParts bounds the parts of one approved tool as a file holds them:
// what MaxSchemaParts parts of MaxPartNameBytes names and an excerpt of
// MaxExcerptBytes take, with room for JSON's escapes.
const maxRawParts = 64 << 10

// Parts decodes and checks the parts of a's definition as approved; an
// error says they cannot be read (a damaged file), and a change of the
// tool is then described as a change of its definition as a whole.
func (a ApprovedTool) Parts() (Parts, error) {
	var p Parts
	if err := decodeStrict(a.RawParts, &p); err != nil {
		return Parts{}, err
	}
	if err := p.check(); err != nil {
		return Parts{}, err
	}
	return p, nil
}

// DecodeBaseline parses a baseline file (of version 2, or 1, which it
// turns into version 2) and checks it whole: the server's state key, at
// most MaxTools tools, each within the bounds above. Any failure is an
// error saying what is wrong.
func DecodeBaseline(data []byte) (*Baseline, error) {
	// One pass for the version written now (the reader's, else
	// encoding/json's); another version (1), or a file that does not
	// decode as this one, is read again by its version.
	var b Baseline
	if !readBaseline(data, &b) || b.Version != BaselineVersion {
		b = Baseline{}
		if err := decodeStrict(data, &b); err != nil || b.Version != BaselineVersion {
			old, err := decodeOtherBaseline(data)
			if err != nil {
				return nil, err
			}
			b = *old
		}
	}
	if !config.ValidStateKey(b.Server) {
		return nil, fmt.Errorf("server name %q is not valid", b.Server)
	}
	if len(b.Tools) > MaxTools {
		return nil, fmt.Errorf("%d tools, more than %d", len(b.Tools), MaxTools)
	}
	if b.Tools == nil {
		b.Tools = map[string]ApprovedTool{}
	}
	for key, a := range b.Tools {
		if err := a.check(key); err != nil {
			return nil, fmt.Errorf("approved tool %q: %w", key, err)
		}
	}
	return &b, nil
}

// decodeOtherBaseline reads a baseline file by the version it names:
// version 1 is turned into BaselineVersion, and the file of any other is
// an error, as is one of BaselineVersion that does not decode.
func decodeOtherBaseline(data []byte) (*Baseline, error) {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	var b Baseline
	switch head.Version {
	case BaselineVersion:
		if err := decodeStrict(data, &b); err != nil {
			return nil, err
		}
	case 1:
		v1, err := decodeBaselineV1(data)
		if err != nil {
			return nil, err
		}
		b = *v1
	default:
		return nil, fmt.Errorf("format version %d, want %d", head.Version, BaselineVersion)
	}
	return &b, nil
}

// check checks an approved tool filed under key against the bounds; its
// parts are checked when they are read (Parts).
func (a ApprovedTool) check(key string) error {
	if key == "" || len(key) > MaxKeyBytes {
		return errors.New("not a tool key")
	}
	if !isHex(a.Digest, 64) {
		return errors.New("its digest is not a sha256")
	}
	if len(a.How) > 64 {
		return errors.New("its 'how' is too long")
	}
	if len(a.RawParts) > maxRawParts {
		return errors.New("its parts are too large")
	}
	return nil
}

// check checks parts against the bounds of an approved tool.
func (p Parts) check() error {
	if !isHex(p.Description, 16) || !isHex(p.Schema, 16) {
		return errors.New("a part's digest is not valid")
	}
	if len(p.Excerpt) > MaxExcerptBytes || !utf8.ValidString(p.Excerpt) {
		return errors.New("its description excerpt is too long or not UTF-8")
	}
	for _, m := range []map[string]string{p.Properties, p.SchemaKeys, p.Annotations} {
		if len(m) > MaxSchemaParts {
			return fmt.Errorf("more than %d parts", MaxSchemaParts)
		}
		for k, v := range m {
			if len(k) > MaxPartNameBytes || !isHex(v, 16) {
				return fmt.Errorf("part %q is not valid", k)
			}
		}
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// approvedToolV1 is an approved tool of a version 1 baseline: the whole
// definition.
type approvedToolV1 struct {
	Digest     string        `json:"digest"`
	ApprovedAt time.Time     `json:"approved_at"`
	How        string        `json:"how"`
	Tool       mcpvalue.Tool `json:"tool"`
}

// UnmarshalJSON decodes an approved tool, keeping its schemas as written.
func (a *approvedToolV1) UnmarshalJSON(data []byte) error {
	type plain approvedToolV1
	var aux struct {
		*plain
		Tool json.RawMessage `json:"tool"`
	}
	aux.plain = (*plain)(a)
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if len(aux.Tool) == 0 {
		return nil
	}
	t, err := decodeTool(aux.Tool)
	if err != nil {
		return fmt.Errorf("tool: %w", err)
	}
	a.Tool = t
	return nil
}

// decodeBaselineV1 reads a version 1 baseline, checks each definition
// against its digest and keeps its parts.
func decodeBaselineV1(data []byte) (*Baseline, error) {
	var v1 struct {
		Version int                       `json:"version"`
		Server  string                    `json:"server"`
		Tools   map[string]approvedToolV1 `json:"tools"`
	}
	if err := decodeStrict(data, &v1); err != nil {
		return nil, err
	}
	if len(v1.Tools) > MaxTools {
		return nil, fmt.Errorf("%d tools, more than %d", len(v1.Tools), MaxTools)
	}
	b := &Baseline{Version: BaselineVersion, Server: v1.Server, Tools: make(map[string]ApprovedTool, len(v1.Tools)), upgraded: true}
	for name, a := range v1.Tools {
		if name == "" || a.Tool.Name != name {
			return nil, fmt.Errorf("approved tool %q is filed under %q", a.Tool.Name, name)
		}
		got, err := approvedTool(a.Tool, a.How, a.ApprovedAt)
		if err != nil {
			return nil, err
		}
		if got.Digest != a.Digest {
			return nil, fmt.Errorf("approved tool %q does not match its digest", name)
		}
		if len(got.How) > 64 {
			got.How = got.How[:64]
		}
		b.Tools[ToolKey(name)] = got
	}
	return b, nil
}

// ApprovedSame reports whether server's approved baseline approves exactly
// tools, whose digests are digests (a record's, as DecodeRecord checked
// them: one per tool, named uniquely): every tool approved with the same
// digest and nothing else approved, so that comparing them (Compare)
// finds no change and reading the baseline (Baseline) no error. It reads
// the approval by its digests alone: the file is checked whole as Baseline
// checks it, into a buffer reused by the next call, but only its tools'
// keys and digests are compared and nothing is kept. It is a shortcut
// only: false, or an error, says nothing more, and the caller reads the
// Baseline (which reports a missing or unusable one, and what changed).
func (s *Store) ApprovedSame(server string, tools []mcpvalue.Tool, digests map[string]string) (bool, error) {
	if err := checkName(server); err != nil {
		return false, err
	}
	if len(digests) != len(tools) {
		return false, nil
	}
	for _, t := range tools {
		// A long name is filed under its hash (ToolKey), which a shortcut
		// by names cannot match; such a tool takes the long way.
		if _, ok := digests[t.Name]; !ok || t.Name == "" || len(t.Name) > MaxKeyBytes || strings.HasPrefix(t.Name, "sha256:") {
			return false, nil
		}
	}
	bp := approvalBuffers.Get().(*[]byte)
	defer approvalBuffers.Put(bp)
	data, err := s.readInto(s.BaselinePath(server), MaxBaselineBytes, server, *bp)
	if cap(data) <= maxPooledApproval {
		*bp = data[:0]
	}
	if err != nil {
		return false, err
	}
	n, ok := readApprovedDigests(data, server, digests)
	return ok && n == len(tools), nil
}

// approvalBuffers hold the files ApprovedSame reads, one per reader at a
// time (lazy start reads a server's approval on each core), each made at
// the size of the first file read into it; a buffer grown past
// maxPooledApproval is not kept.
var approvalBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledApproval = 1 << 20
