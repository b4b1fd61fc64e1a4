package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// MaxSchemaDepth caps how deeply a tool's input or output schema may nest
// (objects and lists, counted like JSON nesting). A deeper tool is left out
// of the listing with a warning naming it; the server's other tools
// register. Real schemas nest a handful of levels; thousands of levels
// only exhaust decoders and providers.
const MaxSchemaDepth = 100

// ListBound is how long one listing of srv (tools/list, resources/list or
// prompts/list, all its pages) may take: its connect_timeout, since a
// listing is part of getting a server ready. A listing past it fails with
// a *NoAnswerError.
func ListBound(srv *config.Server) time.Duration {
	if srv.ConnectTimeout > 0 {
		return srv.ConnectTimeout
	}
	return config.DefaultConnectTimeout
}

// NoAnswerError is a request that got no answer within its bound.
type NoAnswerError struct {
	// Method is the request (tools/list, ...), Server the server's name.
	Method, Server string
	// Page is the page that was not answered (1 for the first).
	Page int
	// Bound is how long the request had; Key is the config key that sets
	// it.
	Bound time.Duration
	Key   string
}

func (e *NoAnswerError) Error() string {
	page := ""
	if e.Page > 1 {
		page = fmt.Sprintf(" (page %d)", e.Page)
	}
	return fmt.Sprintf("%s%s: no answer in %s; if '%s' is just slow, raise %s in its entry in config.yaml", e.Method, page, seconds(e.Bound), e.Server, e.Key)
}

// seconds writes d as "60 s", "1.5 s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%g s", d.Round(time.Millisecond).Seconds())
}

// Listing is the outcome of ListTools.
type Listing struct {
	// Tools are the tools offered, in the server's order, minus Skipped.
	Tools []mcpvalue.Tool
	// Skipped says, one line each, which tools were left out and why.
	Skipped []string
	// Notes are other warnings (a listing cut short).
	Notes []string
}

// ToolLister lists one page of a server's tools (cursor "" for the first)
// and gives the next page's cursor ("" after the last): a
// *session.Session, which keeps each tool's schemas as the server wrote
// them.
type ToolLister interface {
	ListToolsPage(ctx context.Context, cursor string) ([]mcpvalue.Tool, string, error)
}

// Lister is what the other listings need of a session.
type Lister interface {
	ListResourcesPage(ctx context.Context, cursor string) ([]mcpvalue.Resource, string, error)
	ListResourceTemplatesPage(ctx context.Context, cursor string) ([]mcpvalue.ResourceTemplate, string, error)
	ListPromptsPage(ctx context.Context, cursor string) ([]mcpvalue.Prompt, string, error)
}

// Methods of the listings, named in their failures.
const (
	methodToolsList              = "tools/list"
	methodResourcesList          = "resources/list"
	methodResourcesTemplatesList = "resources/templates/list"
	methodPromptsList            = "prompts/list"
)

// ListTools lists every tool of srv on cl within ListBound(srv),
// following pagination up to MaxListPages pages (a server that pages
// further is cut off with a note; a repeated cursor ends the listing too).
// A tool whose schema nests deeper than MaxSchemaDepth is skipped with a
// line in Skipped. A listing that is not answered in time fails with a
// *NoAnswerError; other failures say "tools/list failed".
func ListTools(ctx context.Context, cl ToolLister, srv *config.Server) (Listing, error) {
	var out Listing
	bound := ListBound(srv)
	lctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var cursor string
	seen := map[string]bool{}
	for page := 1; ; page++ {
		tools, next, err := cl.ListToolsPage(lctx, cursor)
		if err != nil {
			return Listing{}, listFailure(ctx, lctx, err, methodToolsList, srv.Name, page, bound)
		}
		for _, t := range tools {
			if d := toolDepth(t); d > MaxSchemaDepth {
				out.Skipped = append(out.Skipped, fmt.Sprintf("tool %q of '%s' skipped: its schema nests %s levels deep, more than the %d hermes accepts (MaxSchemaDepth)",
					t.Name, srv.Name, depthText(d), MaxSchemaDepth))
				continue
			}
			out.Tools = append(out.Tools, t)
		}
		switch {
		case next == "":
			return out, nil
		case seen[next]:
			out.Notes = append(out.Notes, fmt.Sprintf("tools/list of '%s' repeated a cursor after %d pages; the listing stopped there (%d tools)", srv.Name, page, len(out.Tools)))
			return out, nil
		case page >= MaxListPages:
			out.Notes = append(out.Notes, fmt.Sprintf("tools/list of '%s' has more than %d pages (MaxListPages); the rest is ignored (%d tools kept)", srv.Name, MaxListPages, len(out.Tools)))
			return out, nil
		}
		seen[next] = true
		cursor = next
	}
}

// CountResources counts the resources srv offers on cl, following
// pagination up to MaxListPages pages, bounded like ListTools.
func CountResources(ctx context.Context, cl Lister, srv *config.Server) (int, error) {
	return countPages(ctx, srv, methodResourcesList, func(ctx context.Context, cur string) (int, string, error) {
		r, next, err := cl.ListResourcesPage(ctx, cur)
		return len(r), next, err
	})
}

// CountPrompts: see CountResources.
func CountPrompts(ctx context.Context, cl Lister, srv *config.Server) (int, error) {
	return countPages(ctx, srv, methodPromptsList, func(ctx context.Context, cur string) (int, string, error) {
		p, next, err := cl.ListPromptsPage(ctx, cur)
		return len(p), next, err
	})
}

func countPages(ctx context.Context, srv *config.Server, method string, page func(context.Context, string) (int, string, error)) (int, error) {
	bound := ListBound(srv)
	lctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	total := 0
	var cur string
	seen := map[string]bool{}
	for p := 1; p <= MaxListPages; p++ {
		n, next, err := page(lctx, cur)
		if err != nil {
			return 0, listFailure(ctx, lctx, err, method, srv.Name, p, bound)
		}
		total += n
		if next == "" || seen[next] {
			break
		}
		seen[next] = true
		cur = next
	}
	return total, nil
}

// listFailure describes a failed listing request: a *NoAnswerError when
// its bound ran out (and not the caller's own ctx), else the error.
func listFailure(ctx, lctx context.Context, err error, method, server string, page int, bound time.Duration) error {
	if ctx.Err() == nil && errors.Is(lctx.Err(), context.DeadlineExceeded) {
		return &NoAnswerError{Method: method, Server: server, Page: page, Bound: bound, Key: "connect_timeout"}
	}
	if page > 1 {
		return fmt.Errorf("%s failed on page %d: %w", method, page, err)
	}
	return fmt.Errorf("%s failed: %w", method, err)
}

// toolDepth is how deeply t's input and output schemas nest, as JSON: an
// object or a list is one level more than its deepest value.
func toolDepth(t mcpvalue.Tool) int {
	return max(rawDepth(t.InputSchema), rawDepth(t.OutputSchema))
}

// valueDepth is the JSON depth of a decoded value (0 for a scalar).
func valueDepth(v any) int {
	switch t := v.(type) {
	case map[string]any:
		d := 0
		for _, x := range t {
			d = max(d, valueDepth(x))
		}
		return d + 1
	case []any:
		d := 0
		for _, x := range t {
			d = max(d, valueDepth(x))
		}
		return d + 1
	}
	return 0
}

// rawDepth is the JSON depth of raw JSON text, scanned without decoding.
func rawDepth(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// depthText writes d with a thousands separator.
func depthText(d int) string {
	if d >= 1000 {
		return fmt.Sprintf("%d,%03d", d/1000, d%1000)
	}
	return fmt.Sprint(d)
}

// ListResources lists every resource srv offers on cl, following
// pagination up to MaxListPages pages within ListBound(srv), as ListTools
// does (a repeated cursor ends the listing too).
func ListResources(ctx context.Context, cl Lister, srv *config.Server) ([]mcpvalue.Resource, error) {
	return collectPages(ctx, srv, methodResourcesList, cl.ListResourcesPage)
}

// ListResourceTemplates lists every resource template srv offers on cl
// (resources/templates/list), paginated and bounded like ListResources.
// A server that does not know the method has none: an empty list, no
// error.
func ListResourceTemplates(ctx context.Context, cl Lister, srv *config.Server) ([]mcpvalue.ResourceTemplate, error) {
	out, err := collectPages(ctx, srv, methodResourcesTemplatesList, cl.ListResourceTemplatesPage)
	if failure.Of(err) == failure.CodeMethodNotFound {
		return nil, nil
	}
	return out, err
}

// CountResourceTemplates counts the resource templates srv offers on cl
// (ListResourceTemplates).
func CountResourceTemplates(ctx context.Context, cl Lister, srv *config.Server) (int, error) {
	t, err := ListResourceTemplates(ctx, cl, srv)
	return len(t), err
}

// collectPages gathers the items of a paginated listing: up to
// MaxListPages pages, within ListBound(srv), stopping at a repeated cursor.
func collectPages[T any](ctx context.Context, srv *config.Server, method string, page func(context.Context, string) ([]T, string, error)) ([]T, error) {
	bound := ListBound(srv)
	lctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var out []T
	var cur string
	seen := map[string]bool{}
	for p := 1; p <= MaxListPages; p++ {
		items, next, err := page(lctx, cur)
		if err != nil {
			return nil, listFailure(ctx, lctx, err, method, srv.Name, p, bound)
		}
		out = append(out, items...)
		if next == "" || seen[next] {
			break
		}
		seen[next] = true
		cur = next
	}
	return out, nil
}
