package failure_test

import (
	"testing"

	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/sdk"
)

// Every reported code is listed once, with a meaning and a side that
// gives it; a code a plugin gives is one of the sdk's, so it keeps its
// spelling across the process boundary.
func TestReportedCodes(t *testing.T) {
	t.Parallel()
	sdkCodes := map[failure.Code]bool{}
	for _, c := range []string{sdk.CodeClosed, sdk.CodeNotFound, sdk.CodeAuth, sdk.CodeLoginNeeded, sdk.CodeNotMCP,
		sdk.CodeSessionExpired, sdk.CodeHTTP, sdk.CodeTimeout, sdk.CodeCanceled, sdk.CodeConfig, sdk.CodeGarbage,
		sdk.CodeTooLarge, sdk.CodeSandbox, sdk.CodeContract, sdk.CodeOther} {
		sdkCodes[failure.Code(c)] = true
	}
	seen := map[failure.Code]bool{}
	for _, m := range append(failure.Reported(), failure.ModelReported()...) {
		if seen[m.Code] {
			t.Errorf("%s is listed twice", m.Code)
		}
		seen[m.Code] = true
		if m.Code == "" || m.Text == "" || (!m.Host && !m.Plugin) {
			t.Errorf("%+v: want a code, a meaning and who gives it", m)
		}
		if m.Plugin && !sdkCodes[m.Code] {
			t.Errorf("%s: a plugin gives it, but it is no sdk code", m.Code)
		}
	}
	for c := range sdkCodes {
		if !seen[c] {
			t.Errorf("the sdk's code %s is not reported", c)
		}
	}
}

func TestMeaningFrom(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    failure.Meaning
		want string
	}{
		{failure.Meaning{Host: true}, "host"},
		{failure.Meaning{Plugin: true}, "plugin"},
		{failure.Meaning{Host: true, Plugin: true}, "host, plugin"},
	} {
		if got := tc.m.From(); got != tc.want {
			t.Errorf("%+v.From() = %q, want %q", tc.m, got, tc.want)
		}
	}
}
