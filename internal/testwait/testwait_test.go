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

func TestContextEndsBeforeTheBinarysTimeout(t *testing.T) {
	ctx := Context(t)
	d, has := t.Deadline()
	got, ok := ctx.Deadline()
	if has != ok {
		t.Fatalf("test deadline %v (%v), context deadline %v (%v)", d, has, got, ok)
	}
	if has && !got.Before(d) {
		t.Fatalf("the context ends at %v, not before the test's deadline %v", got, d)
	}
	if ctx.Err() != nil {
		t.Fatal("the context ended at once")
	}
}
