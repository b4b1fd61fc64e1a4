// Package selfmem gives back the resident pages of the process's own
// executable that it no longer reads: once a plugin's start is over (or
// once the stdio plugin's launcher only waits as an init), most of its
// binary's code and read-only data (type data, the descriptors package
// initialisation registered, the function tables) stays mapped in the
// process although only a small part of it runs or is read again.
//
// Find lists the read-only mappings of the executable (its code, its
// read-only data, or both) from /proc/self/smaps, keeping only those whose
// every page is still the file's own: a page the process copied on write
// (the relocations a dynamic loader applies before it makes a segment
// read-only) or swapped out would be lost, not given back. Shed drops the
// process's mappings of their pages (madvise MADV_DONTNEED): the pages stay
// in the page cache, shared with every other process of the same binary, and
// a page touched again is mapped again from there, at the cost of a minor
// fault.
//
// It links only the runtime's syscall layer, so that the launcher, which
// stays resident beside every server, can use it. It is Linux only;
// elsewhere Find lists nothing.
package selfmem

// Span is one mapping of the executable, the addresses [Start, End).
type Span struct{ Start, End uintptr }

// Mappings selects the read-only mappings of the executable Find lists.
type Mappings uint8

const (
	// ReadOnlyData is the read-only, non-executable mapping: type data,
	// constants, the function tables (a Go binary's .rodata, .typelink,
	// .gopclntab and the like).
	ReadOnlyData Mappings = 1 << iota
	// Code is the executable mapping. The kernel maps a large folio of
	// the file (64 KiB and more) at each fault, so what comes back is more
	// than what runs.
	Code
)

// MaxSpans bounds what Find lists: a Go executable maps its code and its
// read-only data, two or three mappings.
const MaxSpans = 8

// Find lists the read-only, private mappings of the running executable that
// which selects, whose pages are all the file's own (none copied on write,
// none swapped out). On any failure it lists none: shedding is an economy,
// never a requirement. Call it while /proc can be read (before a sandbox
// that forbids it).
func Find(which Mappings) []Span { return find(which) }

// Shed unmaps the process's pages of spans (from Find): they stay in the
// page cache, and the few touched again are mapped again on their next use.
// It returns the bytes of address space it covered.
func Shed(spans []Span) uintptr { return shed(spans) }
