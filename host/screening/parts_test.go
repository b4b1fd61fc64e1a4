package screening

import (
	"strings"
	"testing"
)

// partByOrig returns the alternative written orig in the original.
func partByOrig(t *testing.T, parts []part, orig string) part {
	t.Helper()
	for _, p := range parts {
		if p.orig == orig {
			return p
		}
	}
	t.Fatalf("no alternative %s", orig)
	return part{}
}

// Every alternative of the three original patterns, on both sides of each
// of its boundaries. The expected answers are those of Python's re with
// IGNORECASE on the same text.
func TestEachAlternative(t *testing.T) {
	cases := []struct {
		parts []part
		orig  string
		yes   []string
		no    []string
	}{
		{egressParts, `(?<![\w.-])(?:curl|wget|nc|ncat|socat)(?![\w.-])`,
			[]string{"curl", "curl x", "x curl", "(curl)", "/usr/bin/curl", ";wget;", "|nc -l", "ncat", "socat;", "CURL", "Curl",
				"ſocat", // Python and Go both fold ſ to s
				"a|nc", "curl\u0301", "\u0301curl", "curl\u0345", "curl\u00a0", "curl+x", "$(wget)", "'nc'", "@curl", "curl/"},
			[]string{"", "acurl", "curla", "_curl", "curl_", "1curl", "curl1", ".curl", "curl.", "-curl", "curl-x",
				"écurl", "curlé", "٣curl", "curl٣", "Ⅻnc", "ncⅫ", "curlx", "ncurl", "snc", "wgetrc", "libcurl.so", "nc.exe", "my-nc", "ncatx", "socat-"}},
		{egressParts, `/dev/tcp/`, []string{"/dev/tcp/1.2.3.4/80", "x/DEV/TCP/y"}, []string{"/dev/tcp", "/dev/udp/", "dev/tcp"}},
		{egressParts, `\bInvoke-WebRequest\b`,
			[]string{"Invoke-WebRequest", "iwr;Invoke-WebRequest -Uri", "(invoke-webrequest)", "-Invoke-WebRequest-", "İnvoke-WebRequest", "ınvoke-webrequest", ".Invoke-WebRequest."},
			[]string{"XInvoke-WebRequest", "Invoke-WebRequestX", "_Invoke-WebRequest", "Invoke-WebRequest_", "1Invoke-WebRequest", "Invoke-WebRequest9", "éInvoke-WebRequest", "Invoke-WebRequestß", "Invoke-Web-Request"}},
		{egressParts, `\bInvoke-RestMethod\b`,
			[]string{"Invoke-RestMethod", "irm|Invoke-RestMethod|x", "INVOKE-RESTMETHOD"},
			[]string{"aInvoke-RestMethod", "Invoke-RestMethods", "_Invoke-RestMethod", "Invoke-RestMethod_"}},
		{egressParts, `\bSystem\.Net\.WebClient\b`,
			[]string{"New-Object System.Net.WebClient", "[System.Net.WebClient]", "system.net.webclient)"},
			[]string{"MySystem.Net.WebClient", "System.Net.WebClientX", "System.Net.WebClient_", "SystemXNetXWebClient", "System.Net.Web.Client"}},

		{exfilParts, `\.env\b`, []string{".env", "cat .env|", "x.ENV y", "a/.env.local", ".env-x"}, []string{".envy", ".env_x", ".env1", "env", ".enví"}},
		{exfilParts, `--data-binary`, []string{"--data-binary @f", "--DATA-BINARY"}, []string{"--data binary", "-data-binary"}},
		{exfilParts, `--data-raw`, []string{"--data-raw x", "x--data-rawy"}, []string{"--data_raw"}},
		// \b before "-" wants a word character right before it.
		{exfilParts, `\b-X\s+POST\b`, []string{"a-X POST", "1-x\tpost", "_-X \v\x1cPOST;", "é-X\u2003POST"},
			[]string{"-X POST", " -X POST", ".-X POST", "a-X POSTED", "a-XPOST", "a-X POST_", "a-X  POST1"}},
		{exfilParts, `\bPOST\b`, []string{"POST", "-X POST", "post ", "(Post)", "x.POST.y"}, []string{"POSTS", "XPOST", "_POST", "POST_", "POST1", "éPOST", "POSTé"}},
		{exfilParts, `<\s*[^\s]+`, []string{"<x", "< x", "<\t\n\v\x1c\u0085\u00a0\u2028\u3000y", "a<b", "<<"},
			[]string{"<", "< ", "<\v", "<\x1f", "<\u0085", "<\u2029\u3000 ", "no angle"}},

		{persistenceParts, `authorized_keys`, []string{">> ~/.ssh/authorized_keys", "AUTHORIZED_KEYS2"}, []string{"authorized-keys", "authorizedkeys"}},
		{persistenceParts, `\.ssh/`, []string{"~/.ssh/id", "x.SSH/"}, []string{".ssh", "ssh/", ".sshd/"}},
		{persistenceParts, `/etc/ssh\b`, []string{"/etc/ssh", "/etc/ssh/sshd_config", "/etc/ssh-x", "/etc/ssh."}, []string{"/etc/sshd", "/etc/ssh_config", "/etc/ssh1", "/etc/sshé"}},
		{persistenceParts, `/etc/pam\.d\b`, []string{"/etc/pam.d", "/etc/pam.d/sshd"}, []string{"/etc/pam.dx", "/etc/pam.d_", "/etc/pamxd"}},
		{persistenceParts, `pam_[\w-]+\.so`, []string{"pam_unix.so", "pam_x-y.so", "PAM_É.SO", "pam_a.sox", "xpam_a.so"}, []string{"pam_.so", "pam_a.b.so", "pam_a so", "pam_a/x.so", "pam_\u0345.so"}},
		{persistenceParts, `/etc/sudoers`, []string{"/etc/sudoers", "/etc/sudoers.d/x"}, []string{"/etc/sudo"}},
		{persistenceParts, `/etc/cron`, []string{"/etc/cron.d", "/etc/crontab", "/etc/cronX"}, []string{"/etc/cro"}},
		{persistenceParts, `crontab\b`, []string{"crontab -l", "crontab", "xcrontab", "crontab.bak"}, []string{"crontabs", "crontab_", "crontab2"}},
		{persistenceParts, `/etc/rc\.local`, []string{"/etc/rc.local", "/etc/rc.localx"}, []string{"/etc/rcxlocal"}},
		{persistenceParts, `/etc/systemd`, []string{"/etc/systemd/system/x.service"}, []string{"/etc/system"}},
		{persistenceParts, `\.bashrc\b`, []string{"~/.bashrc", ".bashrc.bak", ".BASHRC"}, []string{".bashrcx", ".bashrc_", "bashrc"}},
		{persistenceParts, `\.bash_profile\b`, []string{"~/.bash_profile"}, []string{".bash_profiles", ".bash-profile"}},
		{persistenceParts, `\.profile\b`, []string{"~/.profile", ".profile;"}, []string{".profiles", ".profile9", "profile"}},
		{persistenceParts, `\.zshrc\b`, []string{"~/.zshrc", ".zshrc-x"}, []string{".zshrcs", ".zshrc_"}},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		p := partByOrig(t, c.parts, c.orig)
		seen[c.orig] = true
		needles := map[*[]part][]string{&egressParts: egressNeedles, &exfilParts: exfilNeedles, &persistenceParts: persistNeedles}
		for _, s := range c.yes {
			if !p.re.MatchString(foldTurkishI(s)) {
				t.Errorf("%s does not match %q; the original does", c.orig, s)
			}
			for ps, n := range needles {
				if &(*ps)[0] == &c.parts[0] && !anyPart(*ps, n, s) {
					t.Errorf("%s matches %q, but not behind its needles", c.orig, s)
				}
			}
		}
		for _, s := range c.no {
			if p.re.MatchString(foldTurkishI(s)) {
				t.Errorf("%s matches %q; the original does not", c.orig, s)
			}
		}
	}
	for _, parts := range [][]part{egressParts, exfilParts, persistenceParts} {
		for _, p := range parts {
			if !seen[p.orig] {
				t.Errorf("alternative %s has no test", p.orig)
			}
		}
	}
}

// The three patterns are the alternations of their parts.
func TestPatternsAreTheirParts(t *testing.T) {
	join := func(parts []part) string {
		var s []string
		for _, p := range parts {
			s = append(s, p.orig)
		}
		return strings.Join(s, "|")
	}
	for got, want := range map[string]string{
		join(egressParts):      `(?<![\w.-])(?:curl|wget|nc|ncat|socat)(?![\w.-])|/dev/tcp/|\bInvoke-WebRequest\b|\bInvoke-RestMethod\b|\bSystem\.Net\.WebClient\b`,
		join(exfilParts):       `\.env\b|--data-binary|--data-raw|\b-X\s+POST\b|\bPOST\b|<\s*[^\s]+`,
		join(persistenceParts): `authorized_keys|\.ssh/|/etc/ssh\b|/etc/pam\.d\b|pam_[\w-]+\.so|/etc/sudoers|/etc/cron|crontab\b|/etc/rc\.local|/etc/systemd|\.bashrc\b|\.bash_profile\b|\.profile\b|\.zshrc\b`,
	} {
		if got != want {
			t.Errorf("pattern\n%s\nis not the original\n%s", got, want)
		}
	}
}
