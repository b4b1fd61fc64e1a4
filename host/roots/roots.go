// Package roots answers a server's roots/list: the folders the host offers
// servers as their workspace. The working folder is always the first root;
// roots: in config.yaml adds more (paths with ~ expanded and made absolute,
// or file:// URIs, with names). A Set holds the current list; when it
// changes (a config reload, a change of working folder), the host tells the
// connected servers with notifications/roots/list_changed (OnChange).
package roots

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// MaxPathBytes bounds one root's path.
const MaxPathBytes = 4 << 10

// Resolve turns the working folder wd and the entries of roots: into
// roots: wd first, then each entry in order ("~" expanded with userHome,
// relative paths taken from wd, made absolute and clean), without
// duplicates. A name defaults to the folder's base name.
func Resolve(wd, userHome string, entries []config.RootEntry) ([]mcpvalue.Root, error) {
	var out []mcpvalue.Root
	add := func(path, name string) {
		r := mcpvalue.Root{URI: FileURI(path), Name: name}
		if r.Name == "" {
			r.Name = filepath.Base(path)
		}
		if slices.ContainsFunc(out, func(x mcpvalue.Root) bool { return x.URI == r.URI }) {
			return
		}
		out = append(out, r)
	}
	if wd != "" {
		add(filepath.Clean(wd), "")
	}
	for i, e := range entries {
		where := fmt.Sprintf("roots[%d]", i)
		p := e.Path
		if e.URI != "" {
			u, err := url.Parse(e.URI)
			if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !strings.HasPrefix(u.Path, "/") {
				return nil, fmt.Errorf("%s: %q is not a file:// URI of an absolute path (file:///home/me/project); fix config.yaml", where, e.URI)
			}
			p = u.Path
		}
		if len(p) > MaxPathBytes {
			return nil, fmt.Errorf("%s: the path is %d bytes long, more than the %d hermes accepts; fix config.yaml", where, len(p), MaxPathBytes)
		}
		if p == "~" || strings.HasPrefix(p, "~/") {
			if userHome == "" {
				return nil, fmt.Errorf("%s: %q starts with ~ but the home folder is unknown (HOME is not set); write the full path", where, p)
			}
			p = filepath.Join(userHome, p[1:])
		}
		if !filepath.IsAbs(p) {
			if wd == "" {
				return nil, fmt.Errorf("%s: %q is relative and the working folder is unknown; write the full path", where, p)
			}
			p = filepath.Join(wd, p)
		}
		add(filepath.Clean(p), e.Name)
	}
	return out, nil
}

// FileURI is the file:// URI of an absolute path, with the characters a
// URI cannot hold escaped.
func FileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// Load reads roots: from <home>/config.yaml, its ${VAR}s looked up in env
// (the run's environment; nil is the process's) and .env, and resolves it
// with the working folder (Resolve).
func Load(home, wd, userHome string, env func(string) (string, bool)) ([]mcpvalue.Root, error) {
	entries, err := config.LoadRoots(home, env)
	if err != nil {
		return nil, err
	}
	return Resolve(wd, userHome, entries)
}

// Set is the current list of roots, the roots/list handler of every
// server (session.RootsLister).
type Set struct {
	mu       sync.Mutex
	roots    []mcpvalue.Root
	onChange []func(ctx context.Context)
}

// NewSet returns a set holding roots.
func NewSet(roots []mcpvalue.Root) *Set { return &Set{roots: slices.Clone(roots)} }

// Roots returns a copy of the current list.
func (s *Set) Roots() []mcpvalue.Root {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.roots)
}

// ListRoots answers roots/list with the current list (never nil).
func (s *Set) ListRoots(context.Context) ([]mcpvalue.Root, error) {
	r := s.Roots()
	if r == nil {
		r = []mcpvalue.Root{}
	}
	return r, nil
}

// OnChange adds fn to what runs after the list changed (Update): the
// registry's NotifyRootsChanged, which tells the connected servers.
func (s *Set) OnChange(fn func(ctx context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChange = append(s.onChange, fn)
}

// Update replaces the list. When it differs from the current one it runs
// the OnChange functions and reports true.
func (s *Set) Update(ctx context.Context, roots []mcpvalue.Root) bool {
	s.mu.Lock()
	if slices.Equal(s.roots, roots) {
		s.mu.Unlock()
		return false
	}
	s.roots = slices.Clone(roots)
	fns := slices.Clone(s.onChange)
	s.mu.Unlock()
	for _, fn := range fns {
		fn(ctx)
	}
	return true
}

// Reload reads roots: of <home>/config.yaml again (Load) with the working
// folder wd (after a config reload, or a change of working folder) and
// replaces the list (Update). On an error the list is kept.
func (s *Set) Reload(ctx context.Context, home, wd, userHome string, env func(string) (string, bool)) (changed bool, err error) {
	list, err := Load(home, wd, userHome, env)
	if err != nil {
		return false, err
	}
	return s.Update(ctx, list), nil
}
