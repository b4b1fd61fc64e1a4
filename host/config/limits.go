package config

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/goccy/go-yaml/ast"
)

// Limits on what hermes reads from the home folder. A config file is
// written by a person; anything larger or more repetitive than these is a
// mistake or an attack, and is refused before it can cost much memory or
// time.
const (
	// MaxConfigBytes caps the size of config.yaml and of .env (4 MiB).
	MaxConfigBytes = 4 << 20
	// MaxAliasNodes caps how many values YAML aliases (*name, and merge
	// keys "<<: *name") may add to config.yaml when they are expanded.
	// Nested aliases multiply ("billion laughs"): a few hundred bytes can
	// expand to billions of values.
	MaxAliasNodes = 10000
)

// Log rate limits of a server entry: how many log lines one server may
// write, on its stderr (into logs/mcp-stderr.log) and as
// notifications/message (into the host log), each counted on its own.
const (
	// DefaultLogLinesPerSecond is log_lines_per_second's default: the
	// lines a second a server may log after its burst.
	DefaultLogLinesPerSecond = 100
	// DefaultLogBurst is log_burst's default: the lines a server may log
	// at once before log_lines_per_second applies.
	DefaultLogBurst = 1000
	// maxLogLimit caps both keys: past it a limit is no limit.
	maxLogLimit = 1 << 20
)

// logLimits reads a server entry's log_lines_per_second and log_burst into
// s; a bad value fails the entry with an error naming the key.
func (d *decoder) logLimits(s *Server, v, raw map[string]any) {
	if n, ok := d.positive("log_lines_per_second", v["log_lines_per_second"], raw["log_lines_per_second"], "lines a second", maxLogLimit); ok {
		s.LogLinesPerSecond = max(int(n), 1)
	}
	if n, ok := d.positive("log_burst", v["log_burst"], raw["log_burst"], "lines", maxLogLimit); ok {
		s.LogBurst = max(int(n), 1)
	}
}

// TooLargeError is a file over MaxConfigBytes.
type TooLargeError struct {
	Path string
	// Size is the file's size in bytes, or at least MaxConfigBytes+1 when
	// the file does not say (a device or a pipe).
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	size := mib(e.Size)
	if e.Size == e.Limit+1 {
		size = "larger than " + mib(e.Limit)
	}
	return fmt.Sprintf("%s is %s, over the limit of %s for a hermes config file; make it smaller (keep large data in other files and point to them)", e.Path, size, mib(e.Limit))
}

// refusedFile reports whether err is a refusal of a file as it is (too
// large, or unsafe), which callers pass on unwrapped: it names the file.
func refusedFile(err error) bool {
	var tl *TooLargeError
	var ue *UnsafeFileError
	return errors.As(err, &tl) || errors.As(err, &ue)
}

func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// readLimited reads config.yaml or .env (secrets) at path, refusing a file
// someone else could have changed (*UnsafeFileError, see checkTrusted) and
// a file over limit bytes (*TooLargeError) without reading it all. A
// missing file is returned as the os error (callers test fs.ErrNotExist).
func readLimited(path string, limit int64, secrets bool) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("check owner and mode of %s: %w", path, err)
	}
	if err := checkTrusted(fi, path, secrets); err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Size: limit + 1, Limit: limit}
	}
	return data, nil
}

// errAliasLimit is returned by checkAliases; parseFile turns it into a
// *ParseError naming the file.
var errAliasLimit = errors.New("alias limit")

// checkAliases refuses a document whose aliases would add more than
// MaxAliasNodes values when expanded. The count is exact: each alias adds
// the expanded size of the value its anchor names, so nested aliases are
// counted as the multiplication they are, without expanding anything.
func checkAliases(f *ast.File) (int, error) {
	c := aliasCounter{anchors: map[string]int{}}
	for _, d := range f.Docs {
		c.size(d)
		if c.added > MaxAliasNodes {
			return c.added, errAliasLimit
		}
	}
	return c.added, nil
}

// aliasCounter sums the values aliases add, saturating past the limit.
type aliasCounter struct {
	// anchors maps an anchor name to the expanded size of its value.
	anchors map[string]int
	added   int
}

// size returns the number of values n stands for once its aliases are
// expanded (at most MaxAliasNodes+1), recording anchors and adding each
// alias's expansion to added.
func (c *aliasCounter) size(n ast.Node) int {
	if n == nil || c.added > MaxAliasNodes {
		return 0
	}
	switch t := n.(type) {
	case *ast.DocumentNode:
		return c.sum(t.Body)
	case *ast.MappingNode:
		total := 1
		for _, v := range t.Values {
			total = satAdd(total, c.size(v))
		}
		return total
	case *ast.MappingValueNode:
		return c.sum(t.Key, t.Value)
	case *ast.MappingKeyNode:
		return c.sum(t.Value)
	case *ast.SequenceNode:
		return c.sum(t.Values...)
	case *ast.TagNode:
		return c.sum(t.Value)
	case *ast.AnchorNode:
		s := c.size(t.Value)
		if t.Name != nil {
			c.anchors[t.Name.GetToken().Value] = s
		}
		return s
	case *ast.AliasNode:
		if t.Value == nil {
			return 1
		}
		s := c.anchors[t.Value.GetToken().Value]
		c.added = satAdd(c.added, s)
		return max(s, 1)
	}
	return 1
}

// sum is one value holding ns.
func (c *aliasCounter) sum(ns ...ast.Node) int {
	total := 1
	for _, x := range ns {
		total = satAdd(total, c.size(x))
	}
	return total
}

func satAdd(a, b int) int {
	if a+b > MaxAliasNodes+1 || a+b < 0 {
		return MaxAliasNodes + 1
	}
	return a + b
}
