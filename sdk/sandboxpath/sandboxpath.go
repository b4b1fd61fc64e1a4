// Package sandboxpath resolves the paths of a sandbox (its writable paths,
// its deny_read paths and the server's install folder) to what they name on
// disk, and refuses a writable path that a symbolic link carries where the
// sandbox must not let the server write. The host resolves them when it
// makes the plan it shows (hermes mcp test, hermes mcp install), and the
// transport again at every start, right before it builds its rules: a
// server can replace a path inside a folder it may write with a link
// between two starts, so only the resolution made at the start is worth
// anything to the rules.
//
// The package depends on the standard library only.
package sandboxpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// MaxLinks bounds the symbolic links one resolution follows, as the
// kernel's own path walk does (40 on Linux); past it the path is a loop.
const MaxLinks = 40

// ErrLoop is wrapped by Resolve's error for a path that goes through more
// than MaxLinks symbolic links.
var ErrLoop = errors.New("more than 40 symbolic links on the way (a loop?)")

// Resolved is one path resolved.
type Resolved struct {
	// Path is the real path: every symbolic link followed and every ".."
	// removed after the link before it was followed. The part past the
	// last existing folder is kept as written (cleaned).
	Path string
	// Missing: part of Path does not exist.
	Missing bool
	// Links are the real paths of the symbolic links followed on the way,
	// in the order they were met.
	Links []string
}

// Resolve resolves the absolute path p as the kernel would when a program
// opens it: each component is looked at with lstat, a symbolic link is
// replaced by its target (read with readlink, relative to the folder that
// holds it), and ".." goes up from the real folder reached so far (so
// "link/.." is the link target's parent, not the folder holding the link).
// A missing component ends the walk: the rest of p is appended as written.
// It fails for a relative path, a loop, and a component it cannot look at.
func Resolve(p string) (Resolved, error) {
	var r Resolved
	if !filepath.IsAbs(p) {
		return r, fmt.Errorf("%s: not an absolute path", Show(p))
	}
	rest := strings.Split(p, "/")
	cur := "/"
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if r.Missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.Missing = true
			cur = next
			continue
		case err != nil:
			return r, fmt.Errorf("%s: %w", Show(p), err)
		case fi.Mode()&fs.ModeSymlink != 0:
			links++
			if links > MaxLinks {
				return r, fmt.Errorf("%s: %w", Show(p), ErrLoop)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return r, fmt.Errorf("%s: %w", Show(p), err)
			}
			r.Links = append(r.Links, next)
			if filepath.IsAbs(target) {
				cur = "/"
			}
			rest = append(strings.Split(target, "/"), rest...)
		case !fi.IsDir() && len(rest) > 0 && hasComponent(rest):
			return r, fmt.Errorf("%s: %s is not a folder", Show(p), Show(next))
		default:
			cur = next
		}
	}
	r.Path = cur
	return r, nil
}

// hasComponent reports whether a path remainder still names something.
func hasComponent(rest []string) bool {
	for _, c := range rest {
		if c != "" && c != "." {
			return true
		}
	}
	return false
}

// Within reports whether p is dir or lies below it (both clean and
// absolute).
func Within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// Writable is one writable path of a Plan.
type Writable struct {
	// Declared is the path as the entry declares it (~ expanded,
	// cleaned).
	Declared string
	// Path is what it resolves to: what the rules use.
	Path string
	// Missing: Path does not exist (today's rule: the path is skipped).
	Missing bool
}

// Plan is the paths of one sandbox, resolved.
type Plan struct {
	// InstallDir is the install folder resolved, "" for none.
	InstallDir string
	// Writable are the writable paths, in the order declared.
	Writable []Writable
	// DenyRead are the deny paths resolved, each followed by its declared
	// form when that differs (a link is cut out as well as its target).
	DenyRead []string
}

// Error is a writable path refused: it names the path as declared, what it
// resolves to, why it is refused and what to do.
type Error struct {
	Declared, Resolved string
	// Why says what is wrong with Resolved; Fix what to do.
	Why, Fix string
}

func (e *Error) Error() string {
	if e.Resolved == "" {
		return fmt.Sprintf("writable path %s %s; %s", Show(e.Declared), e.Why, e.Fix)
	}
	return fmt.Sprintf("writable path %s resolves to %s, %s; %s", Show(e.Declared), Show(e.Resolved), e.Why, e.Fix)
}

// Check resolves the paths of a sandbox, installDir ("" for none), the
// writable paths and the deny paths, all absolute, and refuses a writable
// path that
//   - cannot be resolved (a loop, a component that cannot be looked at);
//   - resolves into a deny path (the host always adds $HERMES_HOME), unless
//     it stays inside the install folder;
//   - goes through a symbolic link that lies inside another writable place
//     (the install folder or another writable path: the server can make
//     such a link) and resolves outside that place.
//
// The first refusal is returned as an *Error. A deny path that cannot be
// resolved is kept as declared (nothing can be reached through a loop).
func Check(installDir string, writable, denyRead []string) (*Plan, error) {
	plan := &Plan{}
	for _, d := range denyRead {
		d = filepath.Clean(d)
		r, err := Resolve(d)
		if err != nil || r.Path == d {
			plan.DenyRead = append(plan.DenyRead, d)
			continue
		}
		plan.DenyRead = append(plan.DenyRead, r.Path, d)
	}
	// places are the writable places resolved; links, for each, the links
	// its resolution went through.
	type place struct {
		declared string
		r        Resolved
	}
	var places []place
	if installDir != "" {
		r, err := Resolve(filepath.Clean(installDir))
		if err != nil {
			return nil, fmt.Errorf("install folder %w", err)
		}
		plan.InstallDir = r.Path
		places = append(places, place{declared: installDir, r: r})
	}
	first := len(places)
	for _, w := range writable {
		w = filepath.Clean(w)
		r, err := Resolve(w)
		if err != nil {
			why := "cannot be resolved: " + strings.TrimPrefix(err.Error(), Show(w)+": ")
			return nil, &Error{Declared: w, Why: why, Fix: "fix or remove the symbolic links on the way, or remove the path from sandbox.writable"}
		}
		places = append(places, place{declared: w, r: r})
		plan.Writable = append(plan.Writable, Writable{Declared: w, Path: r.Path, Missing: r.Missing})
	}
	for i := first; i < len(places); i++ {
		w := places[i]
		if plan.InstallDir == "" || !Within(w.r.Path, plan.InstallDir) {
			for _, d := range plan.DenyRead {
				if Within(w.r.Path, d) {
					where := "inside " + Show(d) + ", which"
					if w.r.Path == d {
						where = "which"
					}
					return nil, &Error{Declared: w.declared, Resolved: w.r.Path,
						Why: where + " the server can never read (deny_read, $HERMES_HOME)",
						Fix: "remove the symbolic link that leads there, or the path from sandbox.writable"}
				}
			}
		}
		for _, l := range w.r.Links {
			for j, o := range places {
				if j == i || l == o.r.Path || !Within(l, o.r.Path) || Within(w.r.Path, o.r.Path) {
					continue
				}
				return nil, &Error{Declared: w.declared, Resolved: w.r.Path,
					Why: "outside the places the entry declares writable (through the symbolic link " + Show(l) + ", which the server can replace since it may write " + Show(o.r.Path) + ")",
					Fix: "replace the link with a real folder, or declare the real path in sandbox.writable"}
			}
		}
	}
	return plan, nil
}

// Show is p fit for a one-line message: as is when it is plain printable
// text, else quoted with Go escapes (a path from a repository or a server
// is hostile input and must not reach a terminal raw).
func Show(p string) string {
	if len(p) > 512 {
		return strconv.QuoteToASCII(p[:512]) + "..."
	}
	for _, c := range p {
		if !unicode.IsPrint(c) || c == ' ' || c == '"' || c > unicode.MaxASCII {
			return strconv.QuoteToASCII(p)
		}
	}
	return p
}
