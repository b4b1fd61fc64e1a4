package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// grant is a rule before the deny paths are cut out of it.
type grant struct {
	path   string
	access uint64
	// own: the server's own folder (install, temp, writable): it stays
	// usable even inside a denied folder.
	own bool
	// strict: path is resolved (sandboxpath); its rule is opened without
	// following any link and pinned to the object found now (pinRules).
	strict bool
}

// DefaultMaxRules bounds the rules that cutting deny paths out of the
// granted trees may produce. Past it the sandbox is refused: the folders
// above a deny path hold too many entries to allow one by one.
const DefaultMaxRules = 2048

// errTooManyRules is wrapped by the error buildRules returns past the bound.
var errTooManyRules = errors.New("too many Landlock rules")

// buildRules turns grants into Landlock rules that grant nothing beneath a
// deny path. Landlock has no deny rule: a rule on a folder grants its whole
// tree. So a grant on an ancestor of a deny path is replaced by grants on
// each entry beside the way down to it ("sibling expansion"), typed by the
// listing itself: symbolic links are skipped, so no rule lands on a link's
// target through them (the target keeps whatever its own path grants). The
// ancestors themselves get no rule, so they cannot be listed (listing them
// would show the denied names). Grants inside a deny path are dropped,
// except the server's own folders. Deny paths that are symbolic links are
// denied at their target as well. More than max rules is an error naming
// the deny path.
func buildRules(grants []grant, deny []string, max int) ([]launcher.Rule, error) {
	deny = denySet(deny)
	var out []launcher.Rule
	for _, g := range grants {
		p := filepath.Clean(g.path)
		if !g.own && insideAny(p, deny) {
			continue
		}
		below := strictlyBelow(p, deny)
		if len(below) == 0 {
			out = append(out, launcher.Rule{Path: p, Access: g.access, Strict: g.strict})
			continue
		}
		if err := expand(p, g.access, below, &out, max); err != nil {
			return nil, err
		}
	}
	if len(out) > max {
		return nil, fmt.Errorf("%d rules, more than %d (%w)", len(out), max, errTooManyRules)
	}
	return out, nil
}

// denySet cleans the deny paths, adds the targets of those that are
// symbolic links (or lie below one), and drops duplicates.
func denySet(deny []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, d := range deny {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		add(d)
		if real, err := filepath.EvalSymlinks(d); err == nil {
			add(real)
		}
	}
	sort.Strings(out)
	return out
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func insideAny(p string, deny []string) bool {
	for _, d := range deny {
		if within(p, d) {
			return true
		}
	}
	return false
}

func strictlyBelow(p string, deny []string) []string {
	var out []string
	for _, d := range deny {
		if d != p && within(d, p) {
			out = append(out, d)
		}
	}
	return out
}

// readDirBatch is how many entries expand reads at a time, so a huge
// folder costs no more than the rule bound.
const readDirBatch = 256

// expand grants access on every entry of dir except the deny paths,
// descending into the entries on the way to one. The type of each entry
// comes with the listing (getdents' d_type; os asks Lstat only where the
// file system does not say), so entries are not stat'ed one by one.
func expand(dir string, access uint64, deny []string, out *[]launcher.Rule, max int) error {
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // nothing there to grant
		}
		return fmt.Errorf("list %s to cut %s out of it: %w", dir, deny[0], err)
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(readDirBatch)
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if slices.Contains(deny, p) {
				continue
			}
			typ := e.Type()
			if typ&fs.ModeSymlink != 0 {
				continue
			}
			if below := strictlyBelow(p, deny); len(below) > 0 {
				if typ.IsDir() {
					if err := expand(p, access, below, out, max); err != nil {
						return err
					}
				}
				continue
			}
			*out = append(*out, launcher.Rule{Path: p, Access: access, NoFollow: true})
			if len(*out) > max {
				return fmt.Errorf("%s: the folders above it hold more than %d entries to allow one by one (%w)", deny[0], max, errTooManyRules)
			}
		}
		if err == io.EOF || len(ents) == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list %s to cut %s out of it: %w", dir, deny[0], err)
		}
	}
}
