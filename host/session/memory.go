package session

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/hermes-agent/hermes/host/homedir"
	"slices"
	"strings"

	"github.com/hermes-agent/hermes/host/atomicfile"
	"github.com/hermes-agent/hermes/host/config"
)

// MemoryFile is the state file, in $HERMES_HOME, where hermes remembers
// which protocol revision each server spoke, so that the next start goes
// straight there (a server of an older revision is not probed with
// server/discover again).
const MemoryFile = homedir.ProtocolsName

// maxMemoryBytes bounds the state file; a larger one is ignored and
// rebuilt.
const maxMemoryBytes = 1 << 20

// maxRemembered bounds the servers remembered; the oldest entries go.
const maxRemembered = 1000

// memoryDoc is the state file's content.
type memoryDoc struct {
	// Servers maps a server name to what it spoke.
	Servers map[string]memoryEntry `json:"servers"`
	// Order lists server names, least recently written first.
	Order []string `json:"order,omitempty"`
}

type memoryEntry struct {
	// Revision is the protocol revision the server spoke.
	Revision string `json:"revision"`
	// Entry is a digest of the server entry's connection settings: when
	// they change, the memory no longer applies.
	Entry string `json:"entry"`
}

// memoryPath returns the state file of home, or "" without a home.
func memoryPath(home string) string {
	if home == "" {
		return ""
	}
	return homedir.Dir(home).Protocols()
}

// entryDigest identifies what a server entry connects to.
func entryDigest(srv *config.Server) string {
	h := sha256.New()
	for _, s := range append([]string{srv.Transport, srv.URL, srv.Command, srv.Cwd}, srv.Args...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// remembered returns the revision srv spoke last time, or "". A missing,
// unreadable or damaged file remembers nothing.
func remembered(home string, srv *config.Server) string {
	path := memoryPath(home)
	if path == "" {
		return ""
	}
	b, err := atomicfile.ReadSmall(path, maxMemoryBytes)
	if err != nil {
		return ""
	}
	var doc memoryDoc
	if json.Unmarshal(b, &doc) != nil {
		return ""
	}
	e, ok := doc.Servers[srv.Name]
	if !ok || e.Entry != entryDigest(srv) || !slices.Contains(config.ProtocolRevisions, e.Revision) {
		return ""
	}
	return e.Revision
}

// remember records that srv spoke revision; it writes only when that
// changes what is remembered. Failing to write costs only a probe next
// time, so the error is returned for the log.
func remember(home string, srv *config.Server, revision string) error {
	path := memoryPath(home)
	if path == "" {
		return nil
	}
	want := memoryEntry{Revision: revision, Entry: entryDigest(srv)}
	return atomicfile.Update(path, maxMemoryBytes, func(old []byte) ([]byte, error) {
		var doc memoryDoc
		if json.Unmarshal(old, &doc) != nil || doc.Servers == nil {
			doc = memoryDoc{Servers: map[string]memoryEntry{}}
		}
		if doc.Servers[srv.Name] == want {
			return nil, nil
		}
		doc.Servers[srv.Name] = want
		doc.Order = slices.DeleteFunc(doc.Order, func(n string) bool { return n == srv.Name || strings.TrimSpace(n) == "" })
		doc.Order = append(doc.Order, srv.Name)
		for len(doc.Order) > maxRemembered {
			delete(doc.Servers, doc.Order[0])
			doc.Order = doc.Order[1:]
		}
		for name := range doc.Servers {
			if !slices.Contains(doc.Order, name) {
				delete(doc.Servers, name)
			}
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	})
}
