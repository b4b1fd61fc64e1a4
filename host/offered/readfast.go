package offered

import (
	"time"

	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// The fast paths of the decoders (see reader): each fills its value from
// data and reports whether it read data whole, exactly as encoding/json
// would; when it did not, the caller decodes data with encoding/json
// into a fresh value.

var recordFields = []string{"version", "server", "settings_digest", "fetched_at", "protocol", "server_info",
	"instructions", "capabilities", "tools", "digests", "tools_sum"}

// readRecord reads a record file into w: its fields, and its tools as
// written.
func readRecord(data []byte, w *recordWire) bool {
	r := reader{data: data}
	rec := w.plainRecord
	var seen fieldSet
	ok := r.object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "version":
			rec.Version, ok = r.integer()
			return ok && seen.first(0)
		case "server":
			rec.Server, ok = r.text()
			return ok && seen.first(1)
		case "settings_digest":
			rec.SettingsDigest, ok = r.text()
			return ok && seen.first(2)
		case "fetched_at":
			raw, ok := r.value()
			return ok && seen.first(3) && rec.FetchedAt.UnmarshalJSON(raw) == nil
		case "protocol":
			rec.Protocol, ok = r.text()
			return ok && seen.first(4)
		case "server_info":
			return seen.first(5) && r.implementation(&rec.ServerInfo)
		case "instructions":
			rec.Instructions, ok = r.text()
			return ok && seen.first(6)
		case "capabilities":
			return seen.first(7) && r.capabilities(&rec.Capabilities)
		case "tools":
			if !seen.first(8) {
				return false
			}
			// Decoded on the way when the reader can, else left to
			// decodeTools.
			start := r.i
			if tools, ok := r.tools(len(rec.Digests)); ok {
				w.Tools, w.decoded = data[start:r.i], tools
				return true
			}
			r.i = start
			w.Tools, ok = r.value()
			return ok
		case "digests":
			if !seen.first(9) {
				return false
			}
			rec.Digests = map[string]string{}
			return r.entries(func(name string) bool {
				d, ok := r.text()
				rec.Digests[name] = d
				return ok
			})
		case "tools_sum":
			rec.ToolsSum, ok = r.text()
			return ok && seen.first(10)
		}
		return r.other(k, recordFields...)
	})
	return ok && r.end()
}

// implementation reads a server_info.
func (r *reader) implementation(v *mcpvalue.Implementation) bool {
	var seen fieldSet
	return r.object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "name":
			v.Name, ok = r.text()
			return ok && seen.first(0)
		case "title":
			v.Title, ok = r.text()
			return ok && seen.first(1)
		case "version":
			v.Version, ok = r.text()
			return ok && seen.first(2)
		}
		return r.other(k, "name", "title", "version")
	})
}

// capabilities reads a server's capabilities, each as written.
func (r *reader) capabilities(v *mcpvalue.Capabilities) bool {
	var seen fieldSet
	return r.object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "tools":
			v.Tools, ok = r.value()
			return ok && seen.first(0)
		case "resources":
			v.Resources, ok = r.value()
			return ok && seen.first(1)
		case "prompts":
			v.Prompts, ok = r.value()
			return ok && seen.first(2)
		case "logging":
			v.Logging, ok = r.value()
			return ok && seen.first(3)
		case "completions":
			v.Completions, ok = r.value()
			return ok && seen.first(4)
		}
		return r.other(k, "tools", "resources", "prompts", "logging", "completions")
	})
}

var toolFields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// readTools reads a JSON array of tools, their schemas as written (slices
// of data).
func readTools(data []byte) ([]mcpvalue.Tool, bool) {
	r := reader{data: data}
	tools, ok := r.tools(0)
	return tools, ok && r.end()
}

// tools reads an array of tools; n is how many there may be (a record's
// digests, written before its tools).
func (r *reader) tools(n int) ([]mcpvalue.Tool, bool) {
	tools := make([]mcpvalue.Tool, 0, min(max(n, 8), MaxTools))
	ok := r.array(func() bool {
		tools = append(tools, mcpvalue.Tool{})
		return r.tool(&tools[len(tools)-1])
	})
	return tools, ok
}

// tool reads one tool.
func (r *reader) tool(t *mcpvalue.Tool) bool {
	var seen fieldSet
	return r.object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "name":
			t.Name, ok = r.text()
			return ok && seen.first(0)
		case "title":
			t.Title, ok = r.text()
			return ok && seen.first(1)
		case "description":
			t.Description, ok = r.text()
			return ok && seen.first(2)
		case "inputSchema":
			t.InputSchema, ok = r.value()
			return ok && seen.first(3)
		case "outputSchema":
			t.OutputSchema, ok = r.value()
			return ok && seen.first(4)
		case "annotations":
			return seen.first(5) && r.annotations(&t.Annotations)
		}
		return r.other(k, toolFields...)
	})
}

var annotationFields = []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// annotations reads a tool's annotations; its hints share one
// allocation.
func (r *reader) annotations(a *mcpvalue.Annotations) bool {
	var seen fieldSet
	var slots *[4]bool
	hint := func(dst **bool, n uint) bool {
		if slots == nil {
			slots = new([4]bool)
		}
		return seen.first(n) && r.flag(dst, &slots[n-1])
	}
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "title":
			var ok bool
			a.Title, ok = r.text()
			return ok && seen.first(0)
		case "readOnlyHint":
			return hint(&a.ReadOnly, 1)
		case "destructiveHint":
			return hint(&a.Destructive, 2)
		case "idempotentHint":
			return hint(&a.Idempotent, 3)
		case "openWorldHint":
			return hint(&a.OpenWorld, 4)
		}
		return r.other(k, annotationFields...)
	})
}

// readBaseline reads a baseline file of any version into b, each
// approved tool's parts as written (slices of data).
func readBaseline(data []byte, b *Baseline) bool {
	r := reader{data: data}
	var seen fieldSet
	ok := r.object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "version":
			b.Version, ok = r.integer()
			return ok && seen.first(0)
		case "server":
			b.Server, ok = r.text()
			return ok && seen.first(1)
		case "tools":
			if !seen.first(2) {
				return false
			}
			b.Tools = map[string]ApprovedTool{}
			return r.entries(func(key string) bool {
				var a ApprovedTool
				if !r.approved(&a) {
					return false
				}
				b.Tools[key] = a
				return true
			})
		}
		return r.other(k, "version", "server", "tools")
	})
	return ok && r.end()
}

var approvedFields = []string{"digest", "approved_at", "how", "parts", "hints"}

// approved reads one approved tool.
func (r *reader) approved(a *ApprovedTool) bool {
	var seen fieldSet
	return r.object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "digest":
			a.Digest, ok = r.text()
			return ok && seen.first(0)
		case "approved_at":
			raw, ok := r.value()
			return ok && seen.first(1) && a.ApprovedAt.UnmarshalJSON(raw) == nil
		case "how":
			a.How, ok = r.text()
			return ok && seen.first(2)
		case "parts":
			a.RawParts, ok = r.value()
			return ok && seen.first(3)
		case "hints":
			if !seen.first(4) || r.peek() != '{' {
				return false
			}
			h := new(Hints)
			a.Hints = h
			var hs fieldSet
			var slots [2]bool
			return r.object(func(k []byte) bool {
				switch string(k) {
				case "destructive":
					return hs.first(0) && r.flag(&h.Destructive, &slots[0])
				case "read_only":
					return hs.first(1) && r.flag(&h.ReadOnly, &slots[1])
				}
				return r.other(k, "destructive", "read_only")
			})
		}
		return r.other(k, approvedFields...)
	})
}

// readApprovedDigests reads a baseline file of BaselineVersion whose
// server is server, checking it as DecodeBaseline does, and compares each
// approved tool's digest with digests (by tool name, its key): it returns
// how many tools it approves, and ok false when one is approved with
// another digest or not in digests, or when the file is anything but a
// baseline DecodeBaseline reads without an error. Its keys must come in
// ascending order, as encoding/json writes a map's (so that none is given
// twice). Nothing it reads is copied or kept.
func readApprovedDigests(data []byte, server string, digests map[string]string) (n int, ok bool) {
	r := reader{data: data}
	var seen fieldSet
	version := 0
	ok = r.object(func(k []byte) bool {
		switch string(k) {
		case "version":
			v, ok := r.integer()
			version = v
			return ok && seen.first(0)
		case "server":
			c, plain, ok := r.str()
			return ok && plain && string(c) == server && seen.first(1)
		case "tools":
			if !seen.first(2) {
				return false
			}
			var prev []byte
			return r.object(func(key []byte) bool {
				if len(key) == 0 || len(key) > MaxKeyBytes || (prev != nil && string(key) <= string(prev)) {
					return false
				}
				prev = key
				digest, ok := r.approvedDigest()
				if !ok {
					return false
				}
				want, listed := digests[string(key)]
				n++
				return listed && want == string(digest)
			})
		}
		return r.other(k, "version", "server", "tools")
	})
	return n, ok && r.end() && version == BaselineVersion && seen.has(1)
}

// approvedDigest reads one approved tool, checked as DecodeBaseline
// checks it, and returns its digest.
func (r *reader) approvedDigest() (digest []byte, ok bool) {
	var seen fieldSet
	ok = r.object(func(k []byte) bool {
		switch string(k) {
		case "digest":
			c, plain, ok := r.str()
			digest = c
			return ok && plain && isHex(string(c), 64) && seen.first(0)
		case "approved_at":
			raw, ok := r.value()
			var at time.Time
			return ok && seen.first(1) && at.UnmarshalJSON(raw) == nil
		case "how":
			c, plain, ok := r.str()
			return ok && plain && len(c) <= 64 && seen.first(2)
		case "parts":
			raw, ok := r.value()
			return ok && len(raw) <= maxRawParts && seen.first(3)
		case "hints":
			if !seen.first(4) || r.peek() != '{' {
				return false
			}
			var hs fieldSet
			var h *bool
			var slot bool
			return r.object(func(k []byte) bool {
				switch string(k) {
				case "destructive":
					return hs.first(0) && r.flag(&h, &slot)
				case "read_only":
					return hs.first(1) && r.flag(&h, &slot)
				}
				return r.other(k, "destructive", "read_only")
			})
		}
		return r.other(k, approvedFields...)
	})
	return digest, ok && seen.has(0)
}
