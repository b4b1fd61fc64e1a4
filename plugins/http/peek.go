package main

import (
	"bytes"
	"encoding/json"
)

// peeked is what the HTTP wire needs to know of a JSON-RPC message: whether
// it is a request (a POST of one waits for its answer), its id (to find the
// answer on a stream) and its method (initialize starts a session and is
// bounded by connect_timeout). Nothing else of a message is read: what it
// means is the host's business.
type peeked struct {
	id       []byte // the raw id, nil when there is none
	method   string
	request  bool // has a method and an id
	response bool // has a result or an error
}

// peek reads the top-level keys of msg until it knows what it is. It stops
// early: a message the host wrote has its id and method first, so the
// params (perhaps megabytes) are never scanned.
func peek(msg []byte) peeked {
	var p peeked
	hasMethod := false
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return p
	}
	i++
	for {
		i = skipSpace(msg, i)
		if i >= len(msg) || msg[i] != '"' {
			break
		}
		kend := skipString(msg, i)
		if kend < 0 {
			break
		}
		key := msg[i+1 : kend-1]
		i = skipSpace(msg, kend)
		if i >= len(msg) || msg[i] != ':' {
			break
		}
		i = skipSpace(msg, i+1)
		vend := skipValue(msg, i)
		if vend < 0 {
			break
		}
		switch string(key) {
		case "id":
			if v := msg[i:vend]; !bytes.Equal(v, []byte("null")) {
				p.id = v
			}
		case "method":
			hasMethod = true
			_ = json.Unmarshal(msg[i:vend], &p.method)
		case "result", "error":
			p.response = true
		}
		if p.id != nil && (hasMethod || p.response) {
			break
		}
		i = skipSpace(msg, vend)
		if i >= len(msg) || msg[i] != ',' {
			break
		}
		i++
	}
	p.request = hasMethod && p.id != nil
	if hasMethod {
		p.response = false
	}
	return p
}

// answers reports whether msg is the answer (a result or an error) to the
// request with the given raw id.
func answers(msg, id []byte) bool {
	if id == nil {
		return false
	}
	p := peek(msg)
	return p.response && p.id != nil && sameID(p.id, id)
}

// sameID compares two raw JSON-RPC ids.
func sameID(a, b []byte) bool {
	return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	i++
	for i < len(b) {
		j := bytes.IndexAny(b[i:], `"\`)
		if j < 0 {
			return -1
		}
		i += j
		if b[i] == '"' {
			return i + 1
		}
		i += 2 // a backslash and the byte it escapes
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
// It checks nesting and strings only, which is all skipping needs.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				e := skipString(b, i)
				if e < 0 {
					return -1
				}
				i = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// refusalAnswer returns the JSON-RPC error a server sent as the body of an
// HTTP refusal of the request with the given id, as that request's answer:
// the body as it is when it names the request, and with the request's id
// when its id is null or missing (as servers that refuse a request before
// reading it answer). nil when the body is no JSON-RPC error. The error
// itself is passed on byte for byte.
func refusalAnswer(body, id []byte) []byte {
	p := peek(body)
	if !p.response || id == nil {
		return nil
	}
	var m struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.Error) == 0 || bytes.Equal(m.Error, []byte("null")) {
		return nil
	}
	if p.id != nil {
		if !sameID(p.id, id) {
			return nil
		}
		return body
	}
	out := make([]byte, 0, len(m.Error)+len(id)+32)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"error":`...)
	out = append(out, m.Error...)
	return append(out, '}')
}
