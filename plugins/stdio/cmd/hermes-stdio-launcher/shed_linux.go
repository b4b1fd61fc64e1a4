package main

import (
	"golang.org/x/sys/unix"
)

// span is one read-only mapping of the launcher's own executable.
type span struct{ start, end uintptr }

// maxSpans bounds what ownCode keeps: a Go executable maps its code and
// its read-only data, two or three mappings.
const maxSpans = 8

// ownCode lists the read-only mappings of the launcher's own executable
// (its code and read-only data), read from /proc/self/maps before the
// sandbox could forbid reading it. On any failure it lists none: shedding
// them is an economy, never a requirement.
func ownCode() []span {
	exe := make([]byte, 4096)
	n, err := unix.Readlink("/proc/self/exe", exe)
	if err != nil || n <= 0 || n >= len(exe) {
		return nil
	}
	exe = exe[:n]
	fd, err := unix.Open("/proc/self/maps", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	// The executable's mappings come first (it is not position
	// independent, so they have the lowest addresses): the first 4 KiB
	// hold them.
	buf := make([]byte, 4<<10)
	total := 0
	for total < len(buf) {
		n, err := unix.Read(fd, buf[total:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
		total += n
	}
	var spans []span
	for line := range lines(buf[:total]) {
		s, ok := readOnlyMapping(line, exe)
		if ok && len(spans) < maxSpans {
			spans = append(spans, s)
		}
	}
	return spans
}

// lines yields the lines of b, without their newline.
func lines(b []byte) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			i := 0
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if !yield(b[:i]) {
				return
			}
			if i < len(b) {
				i++
			}
			b = b[i:]
		}
	}
}

// readOnlyMapping parses one line of /proc/self/maps ("start-end perms
// offset dev inode path") and reports the span when it maps exe without
// write permission.
func readOnlyMapping(line, exe []byte) (span, bool) {
	if len(line) <= len(exe) || string(line[len(line)-len(exe):]) != string(exe) || line[len(line)-len(exe)-1] != ' ' {
		return span{}, false
	}
	sp := 0
	for sp < len(line) && line[sp] != ' ' {
		sp++
	}
	// perms follow the range: "r-xp", "r--p"; a writable mapping is kept.
	if sp+2 >= len(line) || line[sp+2] == 'w' {
		return span{}, false
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
		return span{}, false
	}
	start, ok1 := hex(addr[:dash])
	end, ok2 := hex(addr[dash+1:])
	if !ok1 || !ok2 || end <= start {
		return span{}, false
	}
	return span{start, end}, true
}

// hex parses a lower-case hexadecimal address.
func hex(b []byte) (uintptr, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uintptr
	for _, c := range b {
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

// shed unmaps the pages of spans from the launcher, once the server runs
// and the launcher only waits as its init: the pages stay in the page
// cache (shared with every other launcher); the few the wait touches are
// mapped again on their next use.
func shed(spans []span) {
	for _, s := range spans {
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, s.start, s.end-s.start, unix.MADV_DONTNEED)
	}
}
