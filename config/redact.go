package config

import (
	"log/slog"
	"reflect"

	"github.com/goccy/go-yaml"

	"github.com/docent-hq/docent/internal/redact"
)

// redactedValue replaces every non-empty secret when config is printed.
const redactedValue = redact.Mask

// Redacted returns the configuration as YAML with every non-empty secret
// (fields tagged secret:"true") replaced by "REDACTED" and the user info of
// URLs (user name and password, either of which may hold a token) masked.
// It is safe to log or show.
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
			d.WebURL = redact.URL(d.WebURL)
			s.Dir = &d
		}
		if s.Git != nil {
			g := *s.Git
			g.URL = redact.URL(g.URL)
			g.WebURL = redact.URL(g.WebURL)
			s.Git = &g
		}
		out.Sources[i] = s
	}
	out.Index.Typesense.URL = redact.URL(out.Index.Typesense.URL)
	out.Embedder.BaseURL = redact.URL(out.Embedder.BaseURL)
	out.Answerer.BaseURL = redact.URL(out.Answerer.BaseURL)
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
