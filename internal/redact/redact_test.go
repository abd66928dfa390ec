package redact_test

import (
	"testing"

	"github.com/docent-hq/docent/internal/redact"
)

func TestURL(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"token as user name", "https://ghp_secret@github.com/o/r.git", "https://REDACTED@github.com/o/r.git"},
		{"user and password", "https://bot:hunter2@git.example/o/r.git", "https://REDACTED@git.example/o/r.git"},
		{"user only", "http://oauth2@localhost:8080/x", "http://REDACTED@localhost:8080/x"},
		{"empty password", "https://tok:@host/x", "https://REDACTED@host/x"},
		{"escaped token", "https://a%2Fb%40c@host/x", "https://REDACTED@host/x"},
		{"no user info", "https://github.com/o/r.git", "https://github.com/o/r.git"},
		{"query kept", "https://t@host/p?ref=main#frag", "https://REDACTED@host/p?ref=main#frag"},
		{"local path", "/srv/git/handbook.git", "/srv/git/handbook.git"},
		{"scp-like is not a URL", "git@github.com:o/r.git", "git@github.com:o/r.git"},
		{"empty", "", ""},
		{"unparseable with user info", "http://tok en@%zz/x@y", "http://REDACTED@%zz/x@y"},
		{"unparseable without user info", "http://%zz/a@b", "http://%zz/a@b"},
		{"unparseable, no scheme", "%zz tok@host", "%zz tok@host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.URL(tt.in); got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		secrets []string
		want    string
	}{
		{"each secret", "user tok1 said tok2 twice tok2", []string{"tok1", "tok2"}, "user REDACTED said REDACTED twice REDACTED"},
		{"empty secrets ignored", "keep me", []string{"", ""}, "keep me"},
		{"none", "keep me", nil, "keep me"},
		{"longest first", "key=abcdef", []string{"abc", "abcdef"}, "key=REDACTED"},
		{"a short user name leaves words alone", "authentication required for https://u@host/r.git (user u)",
			[]string{"u"}, "authentication required for https://REDACTED@host/r.git (user REDACTED)"},
		{"not inside a longer token", "tok1x xtok1 tok1_ tok1-2 tok1", []string{"tok1"}, "tok1x xtok1 tok1_ tok1-2 REDACTED"},
		{"at the edges", "tok1", []string{"tok1"}, "REDACTED"},
		{"between punctuation", `"tok1", token=tok1&x=1 :tok1@`, []string{"tok1"}, `"REDACTED", token=REDACTED&x=1 :REDACTED@`},
		{"secret with punctuation at its edge", "pw=p@ss! end", []string{"p@ss!"}, "pw=REDACTED end"},
		{"next to letters beyond ASCII", "éabc abcé abc", []string{"abc"}, "éabc abcé REDACTED"},
		{"overlapping occurrences", "aaa", []string{"aa"}, "aaa"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.Secrets(tt.in, tt.secrets...); got != tt.want {
				t.Errorf("Secrets(%q, %q) = %q, want %q", tt.in, tt.secrets, got, tt.want)
			}
		})
	}
}

func TestUserInfo(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"https://bot:hunter2@git.example/r.git", []string{"bot", "hunter2"}},
		{"https://ghp_tok@github.com/o/r.git", []string{"ghp_tok"}},
		{"https://a%2Fb@host/x", []string{"a/b"}},
		{"https://github.com/o/r.git", nil},
		{"./data", nil},
	}
	for _, tt := range tests {
		got := redact.UserInfo(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("UserInfo(%q) = %q, want %q", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("UserInfo(%q) = %q, want %q", tt.in, got, tt.want)
			}
		}
	}
}

func TestURLs(t *testing.T) {
	in := `clone "https://bot:tok3n@git.example/r.git" failed; retry https://ok.example/x and ftp://u:p@h/`
	want := `clone "https://REDACTED@git.example/r.git" failed; retry https://ok.example/x and ftp://REDACTED@h/`
	if got := redact.URLs(in); got != want {
		t.Errorf("URLs = %q, want %q", got, want)
	}
}
