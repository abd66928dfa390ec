package redact

import (
	"net/url"
	"regexp"
)

// UserInfo returns the user name and password of s when s is a URL that
// carries them (either may be a token), decoded; nil otherwise.
func UserInfo(s string) []string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return nil
	}
	var out []string
	if name := u.User.Username(); name != "" {
		out = append(out, name)
	}
	if pw, ok := u.User.Password(); ok && pw != "" {
		out = append(out, pw)
	}
	return out
}

var urlRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// URLs returns s with the user info of every URL in it masked (see URL).
func URLs(s string) string { return urlRE.ReplaceAllStringFunc(s, URL) }
