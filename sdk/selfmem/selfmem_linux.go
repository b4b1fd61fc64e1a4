package selfmem

import "syscall"

// bufSize returns the size of the buffer that holds any line of
// /proc/self/smaps that can name exe: a mapping's header, whose range,
// permissions, offset, device and inode take at most 90 bytes (padded with
// spaces to 73), then the path. A longer line is skipped.
func bufSize(exe []byte) int { return max(1<<10, len(exe)+128) }

// readSize is the most one read asks for: about one mapping's entry, so
// that the kernel does not prepare the entries of mappings after the
// executable's, which the scan does not read.
const readSize = 1 << 10

func find(which Mappings) []Span {
	exe := make([]byte, 4096)
	n, err := syscall.Readlink("/proc/self/exe", exe)
	if err != nil || n <= 0 || n >= len(exe) {
		return nil
	}
	fd, err := syscall.Open("/proc/self/smaps", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	p := parser{exe: exe[:n], which: which}
	if !scan(func(b []byte) (int, error) { return syscall.Read(fd, b) }, &p, bufSize(p.exe)) {
		return nil
	}
	return p.spans
}

// scan feeds p the lines read returns (read(2)'s results: 0 at the end),
// through a buffer of size bytes, and reports whether all was read.
func scan(read func([]byte) (int, error), p *parser, size int) bool {
	buf := make([]byte, size)
	have, skipping := 0, false
	for {
		n, err := read(buf[have:min(have+readSize, len(buf))])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n < 0 {
			return false
		}
		if n == 0 {
			break
		}
		have += n
		start := 0
		for i := have - n; i < have; i++ {
			if buf[i] != '\n' {
				continue
			}
			if skipping {
				skipping = false
			} else {
				p.line(buf[start:i])
			}
			start = i + 1
			if p.past {
				return true
			}
		}
		have = copy(buf, buf[start:have])
		if have == len(buf) {
			// A line longer than any that names the executable: the
			// header of another mapping (a long path). Its entry is not
			// ours.
			p.line(nil)
			have, skipping = 0, true
		}
	}
	if !skipping {
		p.line(buf[:have])
	}
	p.line(nil)
	return true
}

// parser picks the spans out of /proc/self/smaps, one line at a time: a
// mapping's header ("start-end perms offset dev inode path") and then its
// fields ("Anonymous:      0 kB").
type parser struct {
	exe   []byte
	which Mappings
	spans []Span
	// cur is the mapping whose fields are being read, when ok: it names
	// the executable and which selects it.
	cur Span
	ok  bool
	// seen: a mapping of the executable was read; past: a mapping after
	// it, so the rest (the heap, the libraries, the stacks, whose entries
	// cost the kernel a walk of their page tables) need not be read. The
	// executable's mappings are contiguous.
	seen, past bool
}

// line takes one line, without its newline; nil ends the current
// mapping's entry.
func (p *parser) line(l []byte) {
	if len(l) == 0 || ('0' <= l[0] && l[0] <= '9') || ('a' <= l[0] && l[0] <= 'f') {
		// A header (field names start with a capital letter): the
		// entry before is complete.
		if p.ok && len(p.spans) < MaxSpans {
			p.spans = append(p.spans, p.cur)
		}
		p.ok = false
		if len(l) > 0 {
			var ours bool
			p.cur, p.ok, ours = mapping(l, p.exe, p.which)
			p.past = p.seen && !ours
			p.seen = p.seen || ours
		}
		return
	}
	if !p.ok {
		return
	}
	// A page copied on write (relocated, then made read-only) or swapped
	// out is the process's only copy: such a mapping is not shed.
	if v, ok := field(l, "Anonymous:"); ok && !zero(v) {
		p.ok = false
	} else if v, ok := field(l, "Swap:"); ok && !zero(v) {
		p.ok = false
	}
}

// field returns the value of l when it is the field name.
func field(l []byte, name string) ([]byte, bool) {
	if len(l) < len(name) || string(l[:len(name)]) != name {
		return nil, false
	}
	return l[len(name):], true
}

// zero reports whether a field's value ("      0 kB") is zero.
func zero(v []byte) bool {
	i := 0
	for i < len(v) && v[i] == ' ' {
		i++
	}
	return i < len(v) && v[i] == '0' && (i+1 == len(v) || v[i+1] == ' ')
}

// mapping parses a header line of /proc/self/smaps (as of /proc/self/maps:
// "start-end perms offset dev inode path") and reports its span when it
// maps exe privately without write permission, executable or not as which
// selects; ours reports whether it maps exe at all.
func mapping(line, exe []byte, which Mappings) (s Span, ok, ours bool) {
	if len(line) <= len(exe) || string(line[len(line)-len(exe):]) != string(exe) || line[len(line)-len(exe)-1] != ' ' {
		return Span{}, false, false
	}
	s, ok = readOnly(line, which)
	return s, ok, true
}

// readOnly parses the range and the permissions of a header line naming
// the executable.
func readOnly(line []byte, which Mappings) (Span, bool) {
	sp := 0
	for sp < len(line) && line[sp] != ' ' {
		sp++
	}
	// perms follow the range: "r-xp", "r--p".
	if sp+4 >= len(line) {
		return Span{}, false
	}
	perms := line[sp+1 : sp+5]
	if perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p' {
		return Span{}, false
	}
	switch {
	case perms[2] == 'x' && which&Code != 0:
	case perms[2] == '-' && which&ReadOnlyData != 0:
	default:
		return Span{}, false
	}
	addr := line[:sp]
	dash := -1
	for i, c := range addr {
		if c == '-' {
			dash = i
			break
		}
	}
	if dash <= 0 {
		return Span{}, false
	}
	start, ok1 := hex(addr[:dash])
	end, ok2 := hex(addr[dash+1:])
	if !ok1 || !ok2 || end <= start {
		return Span{}, false
	}
	return Span{start, end}, true
}

// hex parses a lower-case hexadecimal address.
func hex(b []byte) (uintptr, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uintptr
	for _, c := range b {
		if v > ^uintptr(0)>>4 {
			return 0, false // wider than an address
		}
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func shed(spans []Span) uintptr {
	var total uintptr
	for _, s := range spans {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, s.Start, s.End-s.Start, syscall.MADV_DONTNEED); e == 0 {
			total += s.End - s.Start
		}
	}
	return total
}
