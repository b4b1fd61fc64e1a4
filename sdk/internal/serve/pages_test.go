package serve

import "testing"

// KeepPagesEnv set to anything but "" or "0" leaves Serve's plugin unarmed:
// Started then schedules nothing, so its pages are never given back.
func TestKeepPagesEnvDisarms(t *testing.T) {
	defer pages.armed.Store(false)
	for v, armed := range map[string]bool{"": true, "0": true, "1": false, "yes": false} {
		t.Setenv(KeepPagesEnv, v)
		pages.armed.Store(false)
		armPages()
		if pages.armed.Load() != armed {
			t.Errorf("%s=%q: armed %v, want %v", KeepPagesEnv, v, pages.armed.Load(), armed)
		}
	}
}
