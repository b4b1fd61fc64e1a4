package testoauth

import (
	"fmt"
	"strings"
	"testing"
)

// recorder stands in for a test, recording whether it was skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Skipf(f string, args ...any)  { r.skipped = fmt.Sprintf(f, args...) }
func (r *recorder) Fatalf(f string, args ...any) { r.failed = fmt.Sprintf(f, args...) }

// A missing install skips the test on a developer's machine and fails it
// under CI=true.
func TestMissingInstallSkipsOrFailsUnderCI(t *testing.T) {
	folder = ".npm-deps/not-installed"
	t.Cleanup(func() { folder = Folder })
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			r := &recorder{TB: t}
			if as := Start(r, Options{}); as != nil {
				t.Fatalf("Start returned %+v without an install", as)
			}
			got, other := r.skipped, r.failed
			if ci == "true" {
				got, other = other, got
			}
			if !strings.Contains(got, Package) || !strings.Contains(got, "make npm-deps") || other != "" {
				t.Errorf("skipped %q, failed %q", r.skipped, r.failed)
			}
		})
	}
}
