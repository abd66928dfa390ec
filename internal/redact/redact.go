// Package redact removes credentials from URLs and messages before they
// are logged, stored or shown.
package redact

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
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

// Secrets returns s with every non-empty secret replaced by Mask. Longer
// secrets are replaced first, so a secret that contains another is masked
// whole.
func Secrets(s string, secrets ...string) string {
	secrets = slices.DeleteFunc(slices.Clone(secrets), func(x string) bool { return x == "" })
	slices.SortStableFunc(secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, secret := range secrets {
		s = strings.ReplaceAll(s, secret, Mask)
	}
	return s
}
