package config

import (
	"log/slog"
	"net/url"
	"reflect"

	"github.com/goccy/go-yaml"
)

// redactedValue replaces every non-empty secret when config is printed.
const redactedValue = "REDACTED"

// Redacted returns the configuration as YAML with every non-empty secret
// (fields tagged secret:"true") replaced by "REDACTED" and passwords in
// URLs masked. It is safe to log or show.
func (c Config) Redacted() string {
	b, err := yaml.Marshal(c.redact())
	if err != nil {
		return "config: " + err.Error()
	}
	return string(b)
}

// String returns Redacted, so formatting a Config never leaks a secret.
func (c Config) String() string { return c.Redacted() }

// LogValue implements slog.LogValuer: the redacted config as one YAML
// string, so no handler can reach the secret fields.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.Redacted()) }

// redact returns a deep copy of c with secrets replaced.
func (c Config) redact() Config {
	out := c
	out.Sources = make([]SourceConfig, len(c.Sources))
	for i, s := range c.Sources {
		if s.Dir != nil {
			d := *s.Dir
			d.WebURL = redactURL(d.WebURL)
			s.Dir = &d
		}
		if s.Git != nil {
			g := *s.Git
			g.URL = redactURL(g.URL)
			g.WebURL = redactURL(g.WebURL)
			s.Git = &g
		}
		out.Sources[i] = s
	}
	out.Index.Typesense.URL = redactURL(out.Index.Typesense.URL)
	out.Embedder.BaseURL = redactURL(out.Embedder.BaseURL)
	out.Answerer.BaseURL = redactURL(out.Answerer.BaseURL)
	redactSecrets(reflect.ValueOf(&out).Elem())
	return out
}

// redactSecrets walks v (already a private copy) and replaces non-empty
// string fields tagged secret:"true", following pointers and slices.
func redactSecrets(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			redactSecrets(v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			redactSecrets(v.Index(i))
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := v.Field(i)
			if t.Field(i).Tag.Get("secret") == "true" && f.Kind() == reflect.String {
				if f.String() != "" {
					f.SetString(redactedValue)
				}
				continue
			}
			redactSecrets(f)
		}
	}
}

// redactURL masks the password of a URL's user info; other strings are
// returned unchanged.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), redactedValue)
		return u.String()
	}
	return s
}
