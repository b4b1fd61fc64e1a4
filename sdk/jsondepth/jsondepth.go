// Package jsondepth bounds how deeply JSON text nests, without decoding it.
// encoding/json refuses to read anything nested more than 10,000 levels,
// so a single over-deep value (a tool schema nested 9,000 times) makes a
// whole message unreadable, and with it the answer to the request it
// carries. Prune cuts such values down to null so that the rest of the
// message can be read; whoever reads it then judges what was cut.
//
// The package depends on the standard library only.
package jsondepth

// MaxDepth is the nesting Prune keeps when a message is too deep for
// encoding/json: far more than any real MCP message needs, far less than
// the decoder's own limit.
const MaxDepth = 1000

// Depth returns how deeply the JSON text b nests: 0 for a scalar, 1 for
// an object or array of scalars, and so on. Text that is not JSON is
// scanned all the same.
func Depth(b []byte) int {
	depth, deepest := 0, 0
	var st scanState
	for _, c := range b {
		if st.inString(c) {
			continue
		}
		switch c {
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// Prune returns b with every object or array that would open deeper than
// max levels replaced by null, and how many were replaced; b itself when
// none was. The rest of the text is kept byte for byte. Text that is not
// JSON is scanned all the same and stays as invalid as it was.
func Prune(b []byte, max int) ([]byte, int) {
	if Depth(b) <= max {
		return b, 0
	}
	out := make([]byte, 0, len(b))
	depth, pruned := 0, 0
	var st scanState
	for i := 0; i < len(b); i++ {
		c := b[i]
		if st.inString(c) {
			out = append(out, c)
			continue
		}
		switch c {
		case '{', '[':
			if depth == max {
				i = skipValue(b, i)
				out = append(out, "null"...)
				pruned++
				continue
			}
			depth++
		case '}', ']':
			depth--
		}
		out = append(out, c)
	}
	return out, pruned
}

// skipValue returns the index of the bracket that closes the object or
// array opening at b[i] (the last index when it never closes).
func skipValue(b []byte, i int) int {
	depth := 0
	var st scanState
	for ; i < len(b); i++ {
		c := b[i]
		if st.inString(c) {
			continue
		}
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(b) - 1
}

// scanState follows JSON strings through a scan, one byte at a time.
type scanState struct{ str, esc bool }

// inString reports whether c is part of a string (its quotes included),
// where brackets are text.
func (s *scanState) inString(c byte) bool {
	switch {
	case s.esc:
		s.esc = false
		return true
	case s.str:
		switch c {
		case '\\':
			s.esc = true
		case '"':
			s.str = false
		}
		return true
	case c == '"':
		s.str = true
		return true
	}
	return false
}
