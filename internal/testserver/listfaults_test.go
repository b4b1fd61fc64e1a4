package testserver_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// --hang-list never answers a listing; other requests are answered.
func TestHostileHangList(t *testing.T) {
	r := startRaw(t, "--hang-list")
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	r.send(`{"jsonrpc":"2.0","id":3,"method":"resources/list"}`)
	r.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if line := r.line(); !strings.Contains(line, `"id":4`) {
		t.Fatalf("first answer after two listings and a ping: %s", line)
	}
}

// --deep-schema N lists a tool nested past what encoding/json reads, in
// the same answer as the usual tools.
func TestHostileDeepSchema(t *testing.T) {
	r := startRaw(t, "--deep-schema", "9000")
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	line := r.line()
	for _, want := range []string{`"id":2`, `"name":"deep"`, `"name":"echo"`, `"name":"attack"`} {
		if !strings.Contains(line, want) {
			t.Errorf("tools/list lacks %s", want)
		}
	}
	if n := strings.Count(line, `"properties":{"a":`); n != 9000 {
		t.Errorf("schema nests %d levels, want 9000", n)
	}
	var v any
	if err := json.Unmarshal([]byte(line), &v); err == nil || !strings.Contains(err.Error(), "depth") {
		t.Errorf("encoding/json read the answer (%v); it should be too deep for it", err)
	}
}

// --log-flood N sends N log entries, then answers the attack.
func TestHostileLogFlood(t *testing.T) {
	r := startRaw(t, "--log-flood", "5")
	r.send(callAttack(2))
	for i := 1; i <= 5; i++ {
		if line := r.line(); !strings.Contains(line, `"method":"notifications/message"`) || !strings.Contains(line, `"logger":"flood"`) {
			t.Fatalf("line %d: %s", i, line)
		}
	}
	if line := r.line(); !strings.Contains(line, `"id":2`) || !strings.Contains(line, "sent 5 log entries") {
		t.Fatalf("answer: %s", line)
	}
}
