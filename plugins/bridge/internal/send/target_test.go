package send

import (
	"errors"
	"strings"
	"testing"
)

// dirMap is a Directory over a map keyed "platform/name".
type dirMap map[string]string

func (d dirMap) Resolve(platform, name string) (string, bool) {
	id, ok := d[platform+"/"+strings.TrimPrefix(name, "#")]
	return id, ok
}

func TestParseTarget(t *testing.T) {
	dir := dirMap{
		"discord/general":  "987654321",
		"telegram/Topic":   "-1001234567890:17",
		"slack/eng":        "C0123ABCD",
		"discord/broken":   "not-an-id",
		"slack/thread-eng": "C0123ABCD:1712345678.000100",
	}
	good := []struct {
		in   string
		want Target
	}{
		{"telegram:123456", Target{Platform: Telegram, ChatID: "123456"}},
		{"  Telegram : -1001234567890:17 ", Target{Platform: Telegram, ChatID: "-1001234567890", ThreadID: "17"}},
		{"discord:987654321", Target{Platform: Discord, ChatID: "987654321"}},
		{"discord:987654321:555444333", Target{Platform: Discord, ChatID: "987654321", ThreadID: "555444333"}},
		{"slack:C1234", Target{Platform: Slack, ChatID: "C1234"}},
		{"slack:D0AB12CD3", Target{Platform: Slack, ChatID: "D0AB12CD3"}},
		{"slack:U0AB12CD3", Target{Platform: Slack, ChatID: "U0AB12CD3"}},
		{"slack:C1234:1712345678.000100", Target{Platform: Slack, ChatID: "C1234", ThreadID: "1712345678.000100"}},
		{"discord:#general", Target{Platform: Discord, ChatID: "987654321", Name: "#general"}},
		{"telegram:Topic", Target{Platform: Telegram, ChatID: "-1001234567890", ThreadID: "17", Name: "Topic"}},
		{"slack:#eng", Target{Platform: Slack, ChatID: "C0123ABCD", Name: "#eng"}},
		{"slack:#thread-eng", Target{Platform: Slack, ChatID: "C0123ABCD", ThreadID: "1712345678.000100", Name: "#thread-eng"}},
	}
	for _, c := range good {
		got, err := ParseTarget(c.in, dir)
		if err != nil {
			t.Errorf("ParseTarget(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseTarget(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}

	bad := []struct {
		in   string
		want error
		says string
	}{
		{"", ErrMalformedTarget, "empty target"},
		{"   ", ErrMalformedTarget, "empty target"},
		{":123", ErrMalformedTarget, "no platform"},
		{"telegram", ErrMalformedTarget, `"telegram:<chat_id>"`},
		{"telegram:", ErrMalformedTarget, "no chat"},
		{"whatsapp:123", ErrUnknownPlatform, `"whatsapp"`},
		{"irc:#chan", ErrUnknownPlatform, "telegram, discord, slack"},
		{"telegram:12\n3", ErrMalformedTarget, "control characters"},
		{"slack:u12345678", ErrUnresolved, `"u12345678"`},
		{"discord:#random", ErrUnresolved, `"#random"`},
		{"discord:#broken", ErrUnresolved, `"not-an-id"`},
		{"telegram:" + strings.Repeat("9", MaxTargetLen), ErrMalformedTarget, "longer than"},
	}
	for _, c := range bad {
		_, err := ParseTarget(c.in, dir)
		if !errors.Is(err, c.want) {
			t.Errorf("ParseTarget(%q) = %v, want %v", c.in, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseTarget(%q) = %q, want it to say %q", c.in, err, c.says)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseTarget(%q): error spans lines: %q", c.in, err)
		}
	}

	// Without a directory, names are refused but ids work.
	if _, err := ParseTarget("discord:#general", nil); !errors.Is(err, ErrUnresolved) {
		t.Errorf("name without directory: %v, want ErrUnresolved", err)
	}
	if _, err := ParseTarget("discord:1", nil); err != nil {
		t.Errorf("id without directory: %v", err)
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{
		"telegram:123456", "telegram:-1001234567890:17", "discord:987654321:555",
		"slack:C1234:1712345678.000100", "discord:#general", "slack:U123", "x:y:z",
		"", ":", "telegram:", "TELEGRAM:1", "discord:#ünïcode", "slack:C1234:",
	} {
		f.Add(s)
	}
	dir := dirMap{"discord/general": "987654321", "telegram/x": "5:6", "slack/bad": "zzz"}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTarget(s, dir)
		if err != nil {
			if !errors.Is(err, ErrMalformedTarget) && !errors.Is(err, ErrUnknownPlatform) && !errors.Is(err, ErrUnresolved) {
				t.Fatalf("ParseTarget(%q): error %v wraps none of the target errors", s, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseTarget(%q): multi-line error %q", s, err)
			}
			return
		}
		if !known(got.Platform) || got.ChatID == "" {
			t.Fatalf("ParseTarget(%q) = %+v: no platform or chat", s, got)
		}
		// The id form of a target parses back to itself, without a directory.
		again, err := ParseTarget(got.String(), nil)
		if err != nil {
			t.Fatalf("ParseTarget(%q) = %+v, whose String %q does not parse: %v", s, got, got.String(), err)
		}
		got.Name = ""
		if again != got {
			t.Fatalf("round trip of %q: %+v, then %+v", s, got, again)
		}
	})
}
