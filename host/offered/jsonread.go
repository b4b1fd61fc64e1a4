package offered

import (
	"strings"
	"unicode/utf8"
)

// reader reads the JSON of the store's own files in one pass over their
// bytes: it checks the syntax of every value it passes, decodes the values
// a caller asks for and leaves the others (schemas, approved parts) as
// slices of the input, never copied. It is a fast path only: whenever a
// file holds something it does not read exactly as encoding/json would (an
// escaped or case-folded field name, a key given twice, null where a value
// is expected, a \u escape, a value of another type, nesting deeper than
// maxReadDepth, invalid JSON), it gives up (ok false) and the caller
// decodes the same bytes with encoding/json, whose result or error is then
// the answer. What it does decode is what encoding/json decodes from the
// same bytes (FuzzReaderMatchesEncodingJSON).
type reader struct {
	data []byte
	i    int
}

// maxReadDepth bounds the nesting reader follows; deeper input is left to
// encoding/json (whose own bound is higher).
const maxReadDepth = 512

// ws skips JSON whitespace.
func (r *reader) ws() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, 0 at the end.
func (r *reader) peek() byte {
	r.ws()
	if r.i < len(r.data) {
		return r.data[r.i]
	}
	return 0
}

// eat consumes c when it is the next byte after whitespace.
func (r *reader) eat(c byte) bool {
	if r.peek() == c {
		r.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (r *reader) end() bool {
	r.ws()
	return r.i == len(r.data)
}

// strStop marks the bytes that end str's run of plain bytes: a quote, a
// backslash, a control character (invalid in a string) and any byte of
// a multi-byte UTF-8 sequence (checked apart).
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str reads a string and returns what is between its quotes, and whether
// that holds an escape or a byte that is not ASCII (plain false).
func (r *reader) str() (content []byte, plain, ok bool) {
	if r.peek() != '"' {
		return nil, false, false
	}
	d := r.data
	start := r.i + 1
	plain = true
	for i := start; i < len(d); {
		for i < len(d) && !strStop[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		c := d[i]
		switch {
		case c == '"':
			r.i = i + 1
			return d[start:i], plain, true
		case c == '\\':
			plain = false
			if i+1 >= len(d) {
				return nil, false, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHexBytes(d[i+2:i+6]) {
					return nil, false, false
				}
				i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default: // not ASCII
			plain = false
			i++
		}
	}
	return nil, false, false
}

func isHexBytes(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// text reads a string value as encoding/json decodes it into a Go string.
func (r *reader) text() (string, bool) {
	c, plain, ok := r.str()
	if !ok {
		return "", false
	}
	if plain {
		return string(c), true
	}
	return unescape(c)
}

// unescape decodes the content of a string that is not plain ASCII;
// \u escapes and invalid UTF-8 are left to encoding/json.
func unescape(c []byte) (string, bool) {
	var b strings.Builder
	b.Grow(len(c))
	for i := 0; i < len(c); {
		j := i
		for j < len(c) && c[j] != '\\' {
			j++
		}
		if !utf8.Valid(c[i:j]) {
			return "", false
		}
		b.Write(c[i:j])
		if j == len(c) {
			break
		}
		// str checked that an escape is complete.
		switch c[j+1] {
		case '"', '\\', '/':
			b.WriteByte(c[j+1])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			return "", false
		}
		i = j + 2
	}
	return b.String(), true
}

// number reads a number and returns its text.
func (r *reader) number() ([]byte, bool) {
	d := r.data
	start, i := r.i, r.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return nil, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return nil, false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return nil, false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	r.i = i
	return d[start:i], true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// integer reads a number written as an integer (what encoding/json
// decodes into an int) of at most nine digits.
func (r *reader) integer() (int, bool) {
	r.ws()
	lit, ok := r.number()
	if !ok {
		return 0, false
	}
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	if len(lit) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range lit {
		if !isDigit(c) {
			return 0, false // a fraction or an exponent
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// literal reads true, false or null.
func (r *reader) literal(word string) bool {
	if len(r.data)-r.i < len(word) || string(r.data[r.i:r.i+len(word)]) != word {
		return false
	}
	r.i += len(word)
	return true
}

// flag reads true or false into a new bool in *dst, or null as nil, as
// encoding/json decodes into a *bool; slot is where the bool is kept.
func (r *reader) flag(dst **bool, slot *bool) bool {
	switch r.peek() {
	case 't':
		*slot = true
	case 'f':
		*slot = false
	case 'n':
		if !r.literal("null") {
			return false
		}
		*dst = nil
		return true
	default:
		return false
	}
	if !r.literal("true") && !r.literal("false") {
		return false
	}
	*dst = slot
	return true
}

// value reads any value, checking its syntax, and returns its bytes.
func (r *reader) value() ([]byte, bool) {
	r.ws()
	start := r.i
	if !r.skip(0) {
		return nil, false
	}
	return r.data[start:r.i], true
}

// skip reads any value at depth, checking its syntax.
func (r *reader) skip(depth int) bool {
	if depth > maxReadDepth {
		return false
	}
	switch r.peek() {
	case '{':
		r.i++
		if r.eat('}') {
			return true
		}
		for {
			if _, _, ok := r.str(); !ok || !r.eat(':') || !r.skip(depth+1) {
				return false
			}
			if r.eat(',') {
				continue
			}
			return r.eat('}')
		}
	case '[':
		r.i++
		if r.eat(']') {
			return true
		}
		for {
			if !r.skip(depth + 1) {
				return false
			}
			if r.eat(',') {
				continue
			}
			return r.eat(']')
		}
	case '"':
		_, _, ok := r.str()
		return ok
	case 't':
		return r.literal("true")
	case 'f':
		return r.literal("false")
	case 'n':
		return r.literal("null")
	default:
		_, ok := r.number()
		return ok
	}
}

// object reads an object whose keys name fields: member is called with
// each key (the reader at its value) and reads the value, or returns
// false to give up. A key with an escape is given up on.
func (r *reader) object(member func(key []byte) bool) bool {
	if !r.eat('{') {
		return false
	}
	if r.eat('}') {
		return true
	}
	for {
		k, plain, ok := r.str()
		if !ok || !plain || !r.eat(':') {
			return false // a key with an escape, or not ASCII: see other
		}
		r.ws()
		if !member(k) {
			return false
		}
		if r.eat(',') {
			continue
		}
		return r.eat('}')
	}
}

// entries reads an object whose keys are data (a Go map): member is
// called with each key decoded.
func (r *reader) entries(member func(key string) bool) bool {
	if !r.eat('{') {
		return false
	}
	if r.eat('}') {
		return true
	}
	for {
		k, ok := r.text()
		if !ok || !r.eat(':') {
			return false
		}
		r.ws()
		if !member(k) {
			return false
		}
		if r.eat(',') {
			continue
		}
		return r.eat('}')
	}
}

// array reads an array, calling elem at each element.
func (r *reader) array(elem func() bool) bool {
	if !r.eat('[') {
		return false
	}
	if r.eat(']') {
		return true
	}
	for {
		r.ws()
		if !elem() {
			return false
		}
		if r.eat(',') {
			continue
		}
		return r.eat(']')
	}
}

// other reads the value of key, a key that names none of fields: it is
// skipped, as encoding/json skips it, unless encoding/json would take it
// for one of fields (it matches names without regard to case). A key that
// is not ASCII, which a case-folded name may be, never gets here
// (object).
func (r *reader) other(key []byte, fields ...string) bool {
	for _, f := range fields {
		if strings.EqualFold(string(key), f) {
			return false
		}
	}
	return r.skip(0)
}

// fieldSet notes the fields of one object read, so that a key given twice
// is given up on (encoding/json merges some repeated values into what the
// first one decoded).
type fieldSet uint32

// first notes field bit and reports whether it was not seen before.
func (s *fieldSet) first(bit uint) bool {
	if *s&(1<<bit) != 0 {
		return false
	}
	*s |= 1 << bit
	return true
}

// has reports whether field bit was seen.
func (s fieldSet) has(bit uint) bool { return s&(1<<bit) != 0 }
