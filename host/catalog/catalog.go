package catalog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	optionalmcps "github.com/hermes-agent/hermes/optional-mcps"
)

// EnvDir names a folder to read the catalog from instead of the one built
// into hermes (one <name>/manifest.yaml per entry). Empty is unset.
const EnvDir = "HERMES_OPTIONAL_MCPS"

// ManifestFile is the file of an entry's folder that describes it.
const ManifestFile = "manifest.yaml"

// MaxEntries caps the entries of a catalog folder.
const MaxEntries = 1000

// OfficialPrefix may precede an entry's name ("official/github"), as the
// original accepted.
const OfficialPrefix = "official/"

// Kinds of Diagnostic.
const (
	// KindFutureManifest: the manifest is for a newer hermes.
	KindFutureManifest = "future_manifest"
	// KindInvalid: the manifest cannot be used; Message says why.
	KindInvalid = "invalid"
)

// Diagnostic is a catalog entry that cannot be installed, and why.
type Diagnostic struct {
	// Entry is the entry's folder name.
	Entry string `json:"entry"`
	// Kind is KindFutureManifest or KindInvalid.
	Kind string `json:"kind"`
	// Message is the reason, one line.
	Message string `json:"message"`
	// Description is a future manifest's description when it could be
	// read, so the entry can be listed.
	Description string `json:"description,omitempty"`
}

// Warning is the diagnostic as the line hermes mcp catalog warns with.
func (d Diagnostic) Warning() string {
	if d.Kind == KindFutureManifest {
		return fmt.Sprintf("'%s' requires a newer Hermes; update hermes to use it", d.Entry)
	}
	return fmt.Sprintf("'%s' cannot be installed, its manifest is invalid: %s", d.Entry, d.Message)
}

// Catalog is the curated catalog: the usable entries, and the entries that
// are not usable with the reason.
type Catalog struct {
	// Source is where the entries were read: "built-in" or a folder.
	Source string
	// Entries are the valid manifests, sorted by name.
	Entries []*Manifest
	// Diagnostics are the entries that cannot be used, sorted by name.
	Diagnostics []Diagnostic
}

// BuiltIn is the Source of the catalog compiled into hermes.
const BuiltIn = "built-in"

// Load reads the catalog from the folder $HERMES_OPTIONAL_MCPS names, or
// else the one built into hermes.
func Load() (*Catalog, error) { return LoadFrom(os.Getenv(EnvDir)) }

// LoadFrom reads the catalog from dir (the value of $HERMES_OPTIONAL_MCPS),
// or else, when dir is "", the one built into hermes.
func LoadFrom(dir string) (*Catalog, error) {
	if dir == "" {
		return Read(optionalmcps.FS(), BuiltIn)
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
			err = errors.New("not a folder")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %s; point it at a folder of <name>/%s entries, or unset it to use the built-in catalog", EnvDir, dir, errText(err), ManifestFile)
	}
	return Read(os.DirFS(abs), abs)
}

// Read reads a catalog from fsys: each folder at its top that holds a
// manifest.yaml is an entry; other folders and files are ignored. An
// entry whose manifest is for a newer hermes or invalid becomes a
// Diagnostic. An error is returned only when the folder itself cannot be
// read or holds more than MaxEntries folders.
func Read(fsys fs.FS, source string) (*Catalog, error) {
	dirents, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("reading the catalog %s: %s; check the folder", source, errText(err))
	}
	c := &Catalog{Source: source}
	count := 0
	for _, d := range dirents {
		name := d.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if fi, err := fs.Stat(fsys, name); err != nil || !fi.IsDir() {
			continue
		}
		file := path.Join(name, ManifestFile)
		fi, err := fs.Stat(fsys, file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if count++; count > MaxEntries {
			return nil, fmt.Errorf("the catalog %s holds more than %d entries; remove some", source, MaxEntries)
		}
		shown := clip(name, MaxNameLen)
		invalid := func(format string, args ...any) {
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Entry: shown, Kind: KindInvalid, Message: fmt.Sprintf(format, args...)})
		}
		switch {
		case !nameRE.MatchString(name) || len(name) > MaxNameLen:
			invalid("the folder name is not an entry name (letters, digits, - and _, at most %d); rename the folder", MaxNameLen)
			continue
		case err != nil:
			invalid("%s: %s", ManifestFile, errText(err))
			continue
		case !fi.Mode().IsRegular():
			invalid("%s is not a regular file", ManifestFile)
			continue
		case fi.Size() > MaxManifestBytes:
			invalid("%s is %d bytes, over the limit of %d KiB", ManifestFile, fi.Size(), MaxManifestBytes>>10)
			continue
		}
		src, err := readManifest(fsys, file)
		if err != nil {
			invalid("%s", errText(err))
			continue
		}
		m, err := Parse(src)
		var fe *FutureError
		switch {
		case errors.As(err, &fe):
			c.Diagnostics = append(c.Diagnostics, Diagnostic{Entry: name, Kind: KindFutureManifest, Message: fe.Error(), Description: fe.Description})
		case err != nil:
			invalid("%s", err.Error())
		case m.Name != name:
			invalid("name '%s' does not match its folder '%s'; rename one of them", m.Name, name)
		default:
			c.Entries = append(c.Entries, m)
		}
	}
	sort.Slice(c.Entries, func(i, j int) bool { return c.Entries[i].Name < c.Entries[j].Name })
	sort.SliceStable(c.Diagnostics, func(i, j int) bool { return c.Diagnostics[i].Entry < c.Diagnostics[j].Entry })
	return c, nil
}

// readManifest reads file, at most MaxManifestBytes.
func readManifest(fsys fs.FS, file string) ([]byte, error) {
	f, err := fsys.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxManifestBytes {
		return nil, fmt.Errorf("%s is over the limit of %d KiB", ManifestFile, MaxManifestBytes>>10)
	}
	return b, nil
}

// errText is an error without the path the fs package puts in front.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return oneLine(err.Error())
}

// LookupError says why Lookup found no usable entry.
type LookupError struct {
	// Name is the name looked up (without the official/ prefix).
	Name string
	// Diagnostic is set when the entry exists but is for a newer hermes
	// or invalid; nil when there is no such entry.
	Diagnostic *Diagnostic
}

func (e *LookupError) Error() string {
	if e.Diagnostic != nil {
		return e.Diagnostic.Warning()
	}
	return fmt.Sprintf("'%s' is not in the catalog; run hermes mcp catalog to see the entries", clip(e.Name, MaxNameLen))
}

// Lookup returns the entry called name; an "official/" prefix is accepted.
// The error is a *LookupError.
func (c *Catalog) Lookup(name string) (*Manifest, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), OfficialPrefix)
	if c != nil {
		for _, m := range c.Entries {
			if m.Name == name {
				return m, nil
			}
		}
		for i := range c.Diagnostics {
			if c.Diagnostics[i].Entry == name {
				d := c.Diagnostics[i]
				return nil, &LookupError{Name: name, Diagnostic: &d}
			}
		}
	}
	return nil, &LookupError{Name: name}
}
