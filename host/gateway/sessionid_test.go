package gateway

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func testIDs(t testing.TB) *SessionIDs {
	ids, err := NewSessionIDs(bytes.Repeat([]byte{7}, MinSessionKeyBytes), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestSessionIDs(t *testing.T) {
	ids := testIDs(t)
	id := ids.Issue("alice")
	if err := ids.Check(id, "alice"); err != nil {
		t.Fatalf("own id refused: %v", err)
	}
	if ids.Issue("alice") == id {
		t.Fatal("two ids alike")
	}
	if ids.Check(id, "bob") == nil {
		t.Fatal("another person's id accepted")
	}
	other, _ := NewSessionIDs(bytes.Repeat([]byte{8}, MinSessionKeyBytes), time.Hour)
	if other.Check(id, "alice") == nil {
		t.Fatal("an id of another deployment's key accepted")
	}
	later := *ids
	later.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if later.Check(id, "alice") == nil {
		t.Fatal("an id older than the maximum age accepted")
	}
	// Any change of a character of the id is refused.
	for i := len(sessionPrefix); i < len(id); i++ {
		b := []byte(id)
		b[i] ^= 1
		if ids.Check(string(b), "alice") == nil {
			t.Fatalf("id changed at %d accepted", i)
		}
	}
	if _, err := NewSessionIDs([]byte("short"), 0); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("a short key: %v", err)
	}
}

// FuzzSessionIDCheck: no input panics, and only an id issued to alice
// (the one person the key issued to) is accepted, only for alice and only
// in its one well-formed shape.
func FuzzSessionIDCheck(f *testing.F) {
	ids := testIDs(f)
	issued := ids.Issue("alice")
	f.Add(issued, "alice")
	f.Add("hg1.", "")
	f.Add("hg1."+strings.Repeat("A", 48), "alice")
	f.Fuzz(func(t *testing.T, id, subject string) {
		if ids.Check(id, subject) == nil && (subject != "alice" || len(id) != len(issued) || !strings.HasPrefix(id, sessionPrefix)) {
			t.Fatalf("accepted %q for %q", id, subject)
		}
	})
}
