package secret

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const pemKey = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----"

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want []string
	}{
		{"fedora", nil},
		{"quay.io/containerdisks/fedora:41", nil},
		{"https://hooks.example.com/virtc", nil},
		{"userDataSecret", nil},
		{"#cloud-config\npassword: hunter2", []string{"a password"}},
		{"$6$rounds=4096$abcdefgh$0123456789", []string{"a password hash"}},
		{pemKey, []string{"a private key"}},
		{"api_key=0123", []string{"a token or secret key"}},
		{"AKIAIOSFODNN7EXAMPLE", []string{"an AWS access key"}},
		{"ghp_0123456789abcdefghijABCDEFGHIJ0123456789", []string{"a GitHub token"}},
		{"https://alerts:hunter2@hooks.example.com/x", []string{"a password in a URL"}},
		// A user without a password is no secret (git@host, ssh://git@).
		{"ssh://git@github.com/x/y.git", nil},
		// Quoted by a message: a line starts after an escaped newline.
		{strconv.Quote("#cloud-config\npassword: hunter2"), []string{"a password"}},
	} {
		if got := Find(tc.s); !slices.Equal(got, tc.want) {
			t.Errorf("Find(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestRedact: a message keeps its words and loses every byte of the
// secret, however the message quotes it.
func TestRedact(t *testing.T) {
	for _, tc := range []struct {
		s, want string
		gone    []string
	}{
		{"unknown image \"fedora\"", "unknown image \"fedora\"", nil},
		{`unknown image "ghp_0123456789abcdefghijABCDEFGHIJ0123456789" (known: "fedora")`, `unknown image "[redacted: a GitHub token]" (known: "fedora")`, []string{"ghp_"}},
		{"std.trace: " + pemKey + " done", "std.trace: [redacted: a private key] done", []string{"MIIEow", "RSA"}},
		{"value " + strconv.Quote(pemKey) + " is not a name", `value "[redacted: a private key]" is not a name`, []string{"MIIEow"}},
		{"value " + strconv.Quote("a\npassword: hunter2\nb") + " is bad", `value "a\n[redacted: a password]\nb" is bad`, []string{"hunter2"}},
		// A line pattern where a message puts a value.
		{"std.trace: password: hunter2", "std.trace: [redacted: a password]", []string{"hunter2"}},
		{`unknown image "password: hunter2" (known: "fedora")`, `unknown image "[redacted: a password]" (known: "fedora")`, []string{"hunter2"}},
		{`virtc build --ext-str=k=api_key: sk-live-x --tenant=a`, `virtc build --ext-str=k=[redacted: a token or secret key]`, []string{"sk-live"}},
		{"evaluation failed: aws_secret_access_key = wJalrXUtnFEMI", "evaluation failed: [redacted: a token or secret key]", []string{"wJalr"}},
		// Words of virtc's own messages are not secrets.
		{`unknown field "sshKeySecret" (did you mean "sshKeySecrets"?)`, `unknown field "sshKeySecret" (did you mean "sshKeySecrets"?)`, nil},
		{"set userData or userDataSecret, not both", "set userData or userDataSecret, not both", nil},
		{"url https://u:hunter2@h/x and AKIAIOSFODNN7EXAMPLE", "url [redacted: a password in a URL]h/x and [redacted: an AWS access key]", []string{"hunter2", "AKIA"}},
		{"a PEM block that never ends: " + strings.Split(pemKey, "\n-----END")[0], "a PEM block that never ends: [redacted: a private key]", []string{"MIIEow"}},
	} {
		got := Redact(tc.s)
		if got != tc.want {
			t.Errorf("Redact(%q)\n got  %q\n want %q", tc.s, got, tc.want)
		}
		for _, g := range tc.gone {
			if strings.Contains(got, g) {
				t.Errorf("Redact(%q) still holds %q", tc.s, g)
			}
		}
	}
}

// mayHold must never rule out a string a pattern matches: it is a
// shortcut, not a second rule.
func TestMayHoldMissesNothing(t *testing.T) {
	samples := []string{
		"PASSWORD: x", "Passwd: x", "chpasswd:", "$1$abcdefgh", "$2y$abcdefghij",
		"-----BEGIN EC PRIVATE KEY-----", "TOKEN=1", "my-Secret: x", "ACCESS_KEY=x", "apikey: x",
		"AKIA0123456789ABCDEF", "ſecret: x", "api_Key=1", "gho_0123456789abcdefghijABCDEFGHIJ0123456789", "HTTPS://a:b@c",
	}
	for _, s := range samples {
		matched := false
		for _, p := range Patterns {
			if regexp.MustCompile(p.Pattern).MatchString(s) {
				matched = true
			}
		}
		if !matched {
			t.Errorf("sample %q matches no pattern: fix the sample", s)
		}
		if !mayHold(s) {
			t.Errorf("mayHold(%q) = false, but a pattern matches it", s)
		}
	}
}

func FuzzMayHold(f *testing.F) {
	f.Add("password: x")
	f.Add("AKIA0123456789ABCDEF")
	f.Fuzz(func(t *testing.T, s string) {
		if mayHold(s) {
			return
		}
		for _, re := range regexps() {
			if re.MatchString(escapedLines(s)) {
				t.Fatalf("mayHold(%q) = false, but %s matches", s, re)
			}
		}
	})
}
