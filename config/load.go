package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// DefaultPath is the file Resolve uses when neither a flag nor
// DOCENT_CONFIG names one and it exists in the working directory.
const DefaultPath = "docent.yaml"

// Error is one configuration problem. It prints as
// "config: FILE:LINE: KEY: MESSAGE", leaving out what is unknown.
type Error struct {
	// File is the config file, "" for defaults and environment.
	File string
	// Line is the 1-based line in File, 0 when unknown.
	Line int
	// Key is the dotted YAML key path, for example "sources[1].git.url".
	Key string
	// Msg says what is wrong.
	Msg string
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads the YAML file at path over Default, applies environment
// overrides (DOCENT_DATA) and validates the result against what impl says
// this build can run. An empty path means defaults plus environment.
// getenv looks up variables for ${VAR} expansion and overrides
// (os.LookupEnv in production).
//
// Errors are *Error values naming the file, line and full key path;
// every unknown key and every value of the wrong kind is reported at
// once (joined with errors.Join), as is every validation problem.
func Load(path string, getenv func(string) (string, bool), impl Implementations) (Config, error) {
	cfg := Default()
	if path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
		if cfg, err = parse(path, raw, getenv); err != nil {
			return Config{}, err
		}
	}
	if v, ok := getenv("DOCENT_DATA"); ok && v != "" {
		cfg.DataDir = v
	}
	cfg.normalize()
	if err := cfg.Validate(impl); err != nil {
		if path != "" {
			raw, _ := os.ReadFile(path)
			err = locate(path, raw, getenv, err)
		}
		return Config{}, err
	}
	return cfg, nil
}

// Resolve picks the config file and loads it: the --config flag value if
// set, else DOCENT_CONFIG, else ./docent.yaml when it exists, else defaults
// only. It returns the path used ("" for defaults). A file named by the
// flag or DOCENT_CONFIG must exist.
func Resolve(flagPath string, getenv func(string) (string, bool), impl Implementations) (Config, string, error) {
	path := flagPath
	if path == "" {
		if v, ok := getenv("DOCENT_CONFIG"); ok {
			path = v
		}
	}
	if path == "" {
		if _, err := os.Stat(DefaultPath); err == nil {
			path = DefaultPath
		}
	}
	cfg, err := Load(path, getenv, impl)
	if err != nil {
		return Config{}, path, err
	}
	return cfg, path, nil
}

// parse expands and decodes raw over the defaults.
func parse(file string, raw []byte, getenv func(string) (string, bool)) (Config, error) {
	text, err := expand(raw, getenv)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.File = file
		}
		return Config{}, err
	}
	f, err := parser.ParseBytes(text, 0)
	if err != nil {
		return Config{}, yamlError(file, text, err)
	}
	cfg := Default()
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			return Config{}, &Error{File: file, Line: doc.Body.GetToken().Position.Line, Msg: "the file holds more than one YAML document; want one"}
		}
		body = doc.Body
	}
	if body == nil {
		return cfg, nil // empty or comments only: the defaults
	}
	if errs := checkSchema(file, body, reflect.TypeFor[Config]()); len(errs) > 0 {
		all := make([]error, len(errs))
		for i, e := range errs {
			all[i] = e
		}
		return Config{}, errors.Join(all...)
	}
	cfg.Sources = nil // a file that lists sources replaces the default list
	dec := yaml.NewDecoder(bytes.NewReader(text))
	if err := dec.DecodeFromNode(body, &cfg); err != nil {
		return Config{}, yamlError(file, text, err)
	}
	if cfg.Sources == nil {
		cfg.Sources = Default().Sources
	}
	set := lines(f)
	cfg.resolvePaths(filepath.Dir(file), set)
	if _, ok := set["server.public_url"]; ok {
		cfg.Server.publicURLFromAddr = false
	} else {
		cfg.Server.Listen(cfg.Server.Addr)
	}
	return cfg, nil
}

// resolvePaths makes the relative paths the file sets (data_dir, a dir
// source's path, a local git repository's path, answerer.synonyms)
// relative to dir, the
// config file's folder, so that a config means the same files whatever
// folder docent runs from. Paths from defaults and the environment
// (DOCENT_DATA) stay relative to the working directory.
func (c *Config) resolvePaths(dir string, set map[string]int) {
	if dir == "" || dir == "." {
		return
	}
	resolve := func(p string) string {
		if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "~") {
			return p
		}
		return filepath.Join(dir, p)
	}
	if _, ok := set["data_dir"]; ok {
		c.DataDir = resolve(c.DataDir)
	}
	c.Answerer.Synonyms = resolve(c.Answerer.Synonyms)
	for i := range c.Sources {
		s := &c.Sources[i]
		if s.Dir != nil {
			s.Dir.Path = resolve(s.Dir.Path)
		}
		if s.Git != nil {
			s.Git.Path = resolve(s.Git.Path)
		}
	}
}

// yamlError turns a go-yaml error into an *Error with the line and, where
// the message names a Go type rather than the key, the YAML key path.
func yamlError(file string, text []byte, err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return &Error{File: file, Msg: err.Error()}
	}
	tk := ye.GetToken()
	e := &Error{File: file, Line: tk.Position.Line, Msg: ye.GetMessage()}
	if f, perr := parser.ParseBytes(text, 0); perr == nil {
		e.Key = pathAt(f, tk.Position.Line, tk.Position.Column)
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && te.DstType != nil {
		e.Msg = fmt.Sprintf("cannot use %q here: want %s", tk.Value, kindName(te.DstType))
	}
	return e
}

// kindName describes a Go type to someone writing YAML.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "a mapping"
	}
	return t.String()
}

// pathAt returns the key path of the node at line:column, "" if none.
func pathAt(f *ast.File, line, col int) string {
	var found string
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		ast.Walk(visitFunc(func(n ast.Node) bool {
			if tk := n.GetToken(); tk != nil && tk.Position.Line == line && tk.Position.Column == col {
				if p := keyPath(n.GetPath()); p != "" {
					found = p
				}
			}
			return true
		}), doc)
	}
	return found
}

// lines maps every key path in f to the line it starts on.
func lines(f *ast.File) map[string]int {
	m := map[string]int{}
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		ast.Walk(visitFunc(func(n ast.Node) bool {
			tk := n.GetToken()
			if tk == nil {
				return true
			}
			p := keyPath(n.GetPath())
			if l, ok := m[p]; !ok || tk.Position.Line < l {
				m[p] = tk.Position.Line
			}
			return true
		}), doc)
	}
	return m
}

// keyPath turns a YAMLPath ("$.sources[0].git") into a key ("sources[0].git").
func keyPath(p string) string {
	return strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
}

type visitFunc func(ast.Node) bool

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	if f(n) {
		return f
	}
	return nil
}

// locate adds file and line numbers to validation errors, using the
// nearest key present in the file (a missing key reports its parent).
func locate(file string, raw []byte, getenv func(string) (string, bool), err error) error {
	text, xerr := expand(raw, getenv)
	if xerr != nil {
		return err
	}
	f, perr := parser.ParseBytes(text, 0)
	if perr != nil {
		return err
	}
	at := lines(f)
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var ce *Error
		if !errors.As(e, &ce) {
			continue
		}
		for k := ce.Key; k != ""; k = parentKey(k) {
			if l, ok := at[k]; ok {
				ce.File, ce.Line = file, l
				break
			}
		}
		if ce.File == "" {
			ce.File = file
		}
	}
	return errors.Join(errs...)
}

// parentKey drops the last element of a key path.
func parentKey(k string) string {
	i := strings.LastIndexAny(k, ".[")
	if i < 0 {
		return ""
	}
	return k[:i]
}

// expand replaces ${VAR} with its value and $$ with $, outside comments.
// Inside double quotes the value is escaped for a double-quoted scalar,
// inside single quotes for a single-quoted one. A value with a newline in
// a plain scalar is refused: it would shift every later line number.
// Quotes are recognised only where a YAML scalar can start (line start or
// after ":", "-", ",", "[", "{", "?"), so "don't" stays a plain scalar.
func expand(raw []byte, getenv func(string) (string, bool)) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(raw))
	for i, line := range strings.SplitAfter(string(raw), "\n") {
		lineNo := i + 1
		var quote byte // 0, '"' or '\''
		var prev byte  // last non-blank byte outside quotes; 0 at line start
		for j := 0; j < len(line); j++ {
			ch := line[j]
			blank := ch == ' ' || ch == '\t'
			switch {
			case quote == 0 && ch == '#' && (j == 0 || line[j-1] == ' ' || line[j-1] == '\t'):
				out.WriteString(line[j:]) // a comment: copy the rest verbatim
				j = len(line)
				continue
			case quote == 0 && (ch == '"' || ch == '\'') && strings.IndexByte("\x00:-,[{?", prev) >= 0:
				quote = ch
			case quote == '"' && ch == '\\' && j+1 < len(line):
				out.WriteByte(ch)
				j++
				ch = line[j]
			case quote == '"' && ch == '"', quote == '\'' && ch == '\'':
				quote = 0
			case ch == '$' && j+1 < len(line) && line[j+1] == '$':
				out.WriteByte('$')
				j++
				prev = '$'
				continue
			case ch == '$' && j+1 < len(line) && line[j+1] == '{':
				end := strings.IndexByte(line[j:], '}')
				if end < 0 {
					return nil, &Error{Line: lineNo, Msg: "unterminated ${ (write $$ for a literal dollar)"}
				}
				name := line[j+2 : j+end]
				if !validVarName(name) {
					return nil, &Error{Line: lineNo, Msg: fmt.Sprintf("invalid variable name %q in ${...}", name)}
				}
				val, ok := getenv(name)
				if !ok {
					return nil, &Error{Line: lineNo, Msg: fmt.Sprintf("environment variable %s is not set (referenced as ${%s})", name, name)}
				}
				switch quote {
				case '"':
					q := strconv.Quote(val)
					out.WriteString(q[1 : len(q)-1])
				case '\'':
					out.WriteString(strings.ReplaceAll(val, "'", "''"))
				default:
					if strings.ContainsAny(val, "\r\n") {
						return nil, &Error{Line: lineNo, Msg: fmt.Sprintf("environment variable %s contains a newline; quote the placeholder: \"${%s}\"", name, name)}
					}
					out.WriteString(val)
					prev = '$'
				}
				j += end
				continue
			}
			if quote == 0 && !blank {
				prev = ch
			}
			out.WriteByte(ch)
		}
	}
	return out.Bytes(), nil
}

// validVarName reports whether s is a shell-style variable name.
func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
