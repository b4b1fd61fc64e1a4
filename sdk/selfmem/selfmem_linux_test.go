package selfmem

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

const exe = "/opt/hermes/bin/hermes-transport-stdio"

// TestMapping: the headers naming the executable, private, without write
// permission, are the spans listed, code or data as asked; anything else,
// malformed lines included, is not.
func TestMapping(t *testing.T) {
	cases := []struct {
		line  string
		which Mappings
		want  Span
		ok    bool
	}{
		{"00400000-0049f000 r-xp 00000000 fe:00 10027984                           " + exe, Code, Span{0x400000, 0x49f000}, true},
		{"00400000-0049f000 r-xp 00000000 fe:00 10027984 " + exe, ReadOnlyData, Span{}, false},
		{"0049f000-00579000 r--p 0009f000 fe:00 10027984 " + exe, ReadOnlyData, Span{0x49f000, 0x579000}, true},
		{"0049f000-00579000 r--p 0009f000 fe:00 10027984 " + exe, Code, Span{}, false},
		{"0049f000-00579000 r--p 0009f000 fe:00 10027984 " + exe, Code | ReadOnlyData, Span{0x49f000, 0x579000}, true},
		{"0049f000-00579000 r--s 0009f000 fe:00 10027984 " + exe, ReadOnlyData, Span{}, false},
		{"00579000-00583000 rw-p 00179000 fe:00 10027984 " + exe, Code | ReadOnlyData, Span{}, false},
		{"00579000-00583000 ---p 00179000 fe:00 10027984 " + exe, Code | ReadOnlyData, Span{}, false},
		{"00583000-005b9000 rw-p 00000000 00:00 0 ", Code | ReadOnlyData, Span{}, false},
		{"7fb13a117000-7fb13a119000 r-xp 00000000 00:00 0 [vdso]", Code | ReadOnlyData, Span{}, false},
		{"00400000-0049f000 r-xp 00000000 fe:00 1 /opt/hermes/bin/other/hermes-transport-stdio", Code, Span{}, false},
		{"00400000-0049f000 r-xp 00000000 fe:00 1 x" + exe, Code, Span{}, false},
		{"0049f000-00400000 r--p 0 fe:00 1 " + exe, ReadOnlyData, Span{}, false},
		{"zz-00579000 r--p 0 fe:00 1 " + exe, ReadOnlyData, Span{}, false},
		{"-00579000 r--p 0 fe:00 1 " + exe, ReadOnlyData, Span{}, false},
		{"10000000000000000-20000000000000000 r--p 0 fe:00 1 " + exe, ReadOnlyData, Span{}, false},
		{"r--p " + exe, ReadOnlyData, Span{}, false},
		{exe, ReadOnlyData, Span{}, false},
		{" " + exe, ReadOnlyData, Span{}, false},
		{"", ReadOnlyData, Span{}, false},
	}
	for _, c := range cases {
		got, ok, ours := mapping([]byte(c.line), []byte(exe), c.which)
		if ok != c.ok || got != c.want {
			t.Errorf("mapping(%q, %b) = %v, %v; want %v, %v", c.line, c.which, got, ok, c.want, c.ok)
		}
		if wantOurs := strings.HasSuffix(c.line, " "+exe); ours != wantOurs {
			t.Errorf("mapping(%q) names the executable: %v, want %v", c.line, ours, wantOurs)
		}
	}
}

// smaps is an excerpt of /proc/self/smaps of a dynamically linked
// position-independent build: its code, its read-only data, its relocated
// read-only data (copied on write by the loader, then made read-only),
// a read-only mapping partly swapped out, its writable data, the heap.
const smaps = `555555554000-555555600000 r-xp 00000000 fe:00 42                         ` + exe + `
Size:                688 kB
Rss:                 600 kB
Anonymous:             0 kB
Swap:                  0 kB
VmFlags: rd ex mr mw me dw
555555600000-555555700000 r--p 000ac000 fe:00 42 ` + exe + `
Size:               1024 kB
Rss:                 900 kB
Anonymous:             0 kB
Swap:                  0 kB
SwapPss:               3 kB
VmFlags: rd mr mw me dw
555555700000-555555710000 r--p 001ac000 fe:00 42 ` + exe + `
Size:                 64 kB
Anonymous:            64 kB
Swap:                  0 kB
VmFlags: rd mr mw me dw ac
555555710000-555555720000 r--p 001bc000 fe:00 42 ` + exe + `
Size:                 64 kB
Anonymous:             0 kB
Swap:                  4 kB
VmFlags: rd mr mw me dw ac
555555720000-555555730000 rw-p 001cc000 fe:00 42 ` + exe + `
Size:                 64 kB
Anonymous:            12 kB
Swap:                  0 kB
VmFlags: rd wr mr mw me dw ac
c000000000-c004000000 rw-p 00000000 00:00 0 
Size:              65536 kB
Anonymous:           512 kB
VmFlags: rd wr mr mw me ac
7f0000000000-7f0000001000 r--p 00000000 fe:00 42 ` + exe + `
Anonymous:             0 kB
`

// TestScan: of the executable's read-only mappings, those with a page
// copied on write or swapped out are left alone, whatever the size of the
// reads that deliver the file; the reading stops after the executable's
// mappings (the last one of the excerpt, after the heap, is never read).
func TestScan(t *testing.T) {
	want := map[Mappings][]Span{
		Code:                {{0x555555554000, 0x555555600000}},
		ReadOnlyData:        {{0x555555600000, 0x555555700000}},
		Code | ReadOnlyData: {{0x555555554000, 0x555555600000}, {0x555555600000, 0x555555700000}},
	}
	for _, chunk := range []int{1, 7, 64, len(smaps)} {
		for which, w := range want {
			p := parser{exe: []byte(exe), which: which}
			if !scan(chunks(smaps, chunk), &p, bufSize(p.exe)) {
				t.Fatalf("scan in chunks of %d: failed", chunk)
			}
			if !slicesEqual(p.spans, w) {
				t.Errorf("scan in chunks of %d, %b: %v, want %v", chunk, which, p.spans, w)
			}
		}
	}
	// Without its last newline, the last entry still counts.
	p := parser{exe: []byte(exe), which: ReadOnlyData}
	scan(chunks(strings.TrimSuffix(smaps[:strings.Index(smaps, "555555700000-")], "\n"), 5), &p, bufSize(p.exe))
	if !slicesEqual(p.spans, want[ReadOnlyData]) {
		t.Errorf("without the last newline: %v", p.spans)
	}
}

// TestScanLongLines: a line longer than the buffer (a mapping of a file
// with a long path) ends the entry before it and is skipped whole; what
// follows is read as usual.
func TestScanLongLines(t *testing.T) {
	long := "7f0000000000-7f0000001000 r--p 00000000 fe:00 7 /" + strings.Repeat("x", 3*bufSize([]byte(exe))) + "\n"
	head := smaps[:strings.Index(smaps, "Anonymous:")] // the code's entry, cut before its fields
	in := head + long + "Anonymous:            64 kB\n" + smaps
	for _, chunk := range []int{3, 4096, len(in)} {
		p := parser{exe: []byte(exe), which: Code | ReadOnlyData}
		if !scan(chunks(in, chunk), &p, bufSize(p.exe)) {
			t.Fatal("scan failed")
		}
		want := []Span{{0x555555554000, 0x555555600000}, {0x555555554000, 0x555555600000}, {0x555555600000, 0x555555700000}}
		if !slicesEqual(p.spans, want) {
			t.Errorf("chunks of %d: %v, want %v", chunk, p.spans, want)
		}
	}
	// A long last line without a newline is skipped too.
	p := parser{exe: []byte(exe), which: Code}
	scan(chunks(smaps+long[:len(long)-1], 4096), &p, bufSize(p.exe))
	if len(p.spans) != 1 {
		t.Errorf("long last line: %v", p.spans)
	}
}

// TestScanFails: a failed read lists nothing.
func TestScanFails(t *testing.T) {
	p := parser{exe: []byte(exe), which: Code}
	failing := func([]byte) (int, error) { return -1, os.ErrClosed }
	if scan(failing, &p, bufSize(p.exe)) {
		t.Error("a failed read was taken for the end of the file")
	}
}

// chunks returns a read(2) of s that delivers at most n bytes a call.
func chunks(s string, n int) func([]byte) (int, error) {
	return func(b []byte) (int, error) {
		k := min(n, len(b), len(s))
		copy(b, s[:k])
		s = s[k:]
		return k, nil
	}
}

func slicesEqual(a, b []Span) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFind: this test binary's own code and read-only data are found, and
// each is one of its mappings with no page of the process's own.
func TestFind(t *testing.T) {
	maps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps")
	}
	for _, which := range []Mappings{Code, ReadOnlyData} {
		spans := Find(which)
		if len(spans) == 0 {
			t.Fatalf("no mapping %b of the executable found in:\n%s", which, maps)
		}
		for _, s := range spans {
			header := fmt.Sprintf("%08x-%08x ", s.Start, s.End)
			i := bytes.Index(maps, []byte(header))
			if i < 0 {
				t.Fatalf("span %s is no mapping of:\n%s", header, maps)
			}
			entry := maps[i:]
			if j := bytes.Index(entry, []byte("VmFlags:")); j > 0 {
				entry = entry[:j]
			}
			if !bytes.Contains(entry, []byte("\nAnonymous:             0 kB\n")) {
				t.Errorf("span listed with pages of the process's own:\n%s", entry)
			}
		}
	}
}

// TestShed: this process's resident file pages drop when it gives back its
// read-only data, and it goes on reading it (the pages come back from the
// page cache).
func TestShed(t *testing.T) {
	before := rssFileKB(t)
	spans := Find(ReadOnlyData)
	if len(spans) == 0 {
		t.Skip("no read-only data found")
	}
	if n := Shed(spans); n == 0 {
		t.Fatal("Shed covered nothing")
	}
	after := rssFileKB(t)
	t.Logf("RssFile %d kB before, %d kB after", before, after)
	if after >= before {
		t.Errorf("RssFile %d kB after shedding, %d kB before", after, before)
	}
	// Reading type data and function tables again works.
	if s := strconv.Quote(strings.Repeat("é", 3)); s != `"ééé"` {
		t.Errorf("after shedding: %s", s)
	}
}

// rssFileKB reads this process's RssFile.
func rssFileKB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// FuzzScan: no input panics the scanner, and a span it lists is never
// empty.
func FuzzScan(f *testing.F) {
	f.Add([]byte(smaps), 7)
	f.Add([]byte("00400000-0049f000 r-xp 00000000 fe:00 1 /x\nAnonymous: 0 kB\n"), 3)
	f.Add([]byte("-/x\n /x"), 1)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		p := parser{exe: []byte("/x"), which: Code | ReadOnlyData}
		scan(chunks(string(in), chunk), &p, bufSize(p.exe))
		if len(p.spans) > MaxSpans {
			t.Fatalf("%d spans", len(p.spans))
		}
		for _, s := range p.spans {
			if s.End <= s.Start {
				t.Fatalf("empty span from %q", in)
			}
		}
	})
}

// BenchmarkFind is the cost of listing the mappings: reading and scanning
// /proc/self/smaps of this process (the kernel walks each mapping's page
// tables for it).
func BenchmarkFind(b *testing.B) {
	for b.Loop() {
		if len(Find(ReadOnlyData)) == 0 {
			b.Skip("no read-only data found")
		}
	}
}
