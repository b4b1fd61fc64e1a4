package testwait

import (
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	n := 0
	if !Until(10*time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("Until stopped at %d polls", n)
	}
	if Until(20*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never holds was reported as held")
	}
}
