package ui

import (
	"strings"
	"testing"
)

// TestMaskRevealsLittle: a short secret shows none of its characters (a
// 9-character one showed 8 of them as "abcd***234x"), a long one at most a
// quarter and at most eight.
func TestMaskRevealsLittle(t *testing.T) {
	for n := 0; n <= 80; n++ {
		secret := strings.Repeat("s", n)
		got := Mask(secret)
		shown := strings.Count(got, "s")
		switch {
		case n < 16 && got != "***":
			t.Errorf("Mask of %d characters = %q, want ***", n, got)
		case shown*4 > n || shown > 8:
			t.Errorf("Mask of %d characters shows %d of them: %q", n, shown, got)
		case !strings.Contains(got, "***"):
			t.Errorf("Mask of %d characters = %q, no *** marker", n, got)
		}
	}
	if got := Mask("abcdefghijklmnopqrstuvwxyz0123456789"); got != "abcd***6789" {
		t.Errorf("Mask of 36 characters = %q, want abcd***6789", got)
	}
	if got := Mask("abcd1234x"); got != "***" {
		t.Errorf("Mask of 9 characters = %q, want ***", got)
	}
}
