package config

import (
	"log/slog"
	"reflect"
	"slices"

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
			s.Dir = &d
		}
		if s.Git != nil {
			g := *s.Git
			s.Git = &g
		}
		if s.Confluence != nil {
			cf := *s.Confluence
			cf.Spaces, cf.ExcludeLabels, cf.Roots = slices.Clone(cf.Spaces), slices.Clone(cf.ExcludeLabels), slices.Clone(cf.Roots)
			s.Confluence = &cf
		}
		if s.Notion != nil {
			n := *s.Notion
			n.Roots = slices.Clone(n.Roots)
			s.Notion = &n
		}
		out.Sources[i] = s
	}
	out.Index.Typesense.Nodes = append([]string(nil), c.Index.Typesense.Nodes...)
	out.Slack = c.Slack.clone()
	out.Discord = c.Discord.clone()
	out.Auth.Admins = append([]AdminConfig(nil), c.Auth.Admins...)
	out.Auth.TrustedHeader.Allowed = append([]string(nil), c.Auth.TrustedHeader.Allowed...)
	redactSecrets(reflect.ValueOf(&out).Elem())
	return out
}

// redactSecrets walks v (already a private copy): non-empty string fields
// tagged secret:"true" become "REDACTED", and every other string has the
// user info of any URL in it masked (a token may be given as a URL's user
// name or password). It follows pointers, slices and structs.
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
	case reflect.String:
		if v.CanSet() {
			v.SetString(redact.URL(v.String()))
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

// Secrets returns every secret value in c: fields tagged secret:"true" and
// the user info of URLs. Pass them to redact.Secrets to mask them in text
// that may quote them (provider errors, logs).
func (c Config) Secrets() []string {
	var out []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.String:
			out = append(out, redact.UserInfo(v.String())...)
		case reflect.Struct:
			t := v.Type()
			for i := 0; i < t.NumField(); i++ {
				if t.Field(i).Tag.Get("secret") == "true" && v.Field(i).String() != "" {
					out = append(out, v.Field(i).String())
					continue
				}
				walk(v.Field(i))
			}
		}
	}
	walk(reflect.ValueOf(c))
	return out
}
