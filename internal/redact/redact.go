// Package redact removes credentials from URLs and messages before they
// are logged, stored or shown.
package redact

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mask replaces every credential this package removes.
const Mask = "REDACTED"

// URL returns s with the whole user info of a URL (user name and password)
// replaced by Mask, so that a token given as the user name
// (https://TOKEN@host/...) is hidden as well as a password. A string that
// does not parse but has a "scheme://" prefix has everything before the
// last "@" of its authority masked; other strings are returned unchanged.
func URL(s string) string {
	u, err := url.Parse(s)
	if err == nil {
		if u.User == nil {
			return s
		}
		u.User = url.User(Mask)
		return u.String()
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return s
	}
	return scheme + "://" + Mask + rest[at:]
}

// Secrets returns s with every whole occurrence of each non-empty secret
// replaced by Mask. An occurrence is whole when it is not part of a longer
// word: where the secret begins (ends) with a letter, digit, '_' or '-',
// the character before (after) it must not be one. So a token is masked
// in "https://TOKEN@host" or "token=TOKEN&", while a short user name such
// as "u" leaves "authentication required" alone. Longer secrets are
// replaced first, so a secret that contains another is masked whole.
func Secrets(s string, secrets ...string) string {
	secrets = slices.DeleteFunc(slices.Clone(secrets), func(x string) bool { return x == "" })
	slices.SortStableFunc(secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, secret := range secrets {
		s = replaceWhole(s, secret)
	}
	return s
}

// replaceWhole replaces the whole occurrences of secret in s with Mask.
func replaceWhole(s, secret string) string {
	first, _ := utf8.DecodeRuneInString(secret)
	last, _ := utf8.DecodeLastRuneInString(secret)
	var b strings.Builder
	from := 0 // s[:from] is written or copied to b
	for at := 0; ; {
		i := strings.Index(s[at:], secret)
		if i < 0 {
			break
		}
		start, end := at+i, at+i+len(secret)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (start == 0 || !isWord(first) || !isWord(before)) && (end == len(s) || !isWord(last) || !isWord(after)) {
			b.WriteString(s[from:start])
			b.WriteString(Mask)
			from, at = end, end
			continue
		}
		_, size := utf8.DecodeRuneInString(s[start:])
		at = start + size
	}
	if from == 0 {
		return s
	}
	b.WriteString(s[from:])
	return b.String()
}

// isWord reports whether r may be part of a word or token.
func isWord(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
