package config

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// checkSchema walks the YAML tree against the Go type of the value it
// will be decoded into and returns every problem at once: keys the type
// does not have (with the nearest known key suggested), and scalars of
// the wrong kind (a word where a number goes, a bad duration, a mapping
// where a list goes). Each error names the full key path and its line.
func checkSchema(file string, node ast.Node, t reflect.Type) []*Error {
	var errs []*Error
	walkSchema(file, node, t, "", &errs)
	slices.SortStableFunc(errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	return errs
}

var durationType = reflect.TypeFor[time.Duration]()

func walkSchema(file string, node ast.Node, t reflect.Type, path string, errs *[]*Error) {
	node = unwrap(node)
	if node == nil {
		return
	}
	if _, ok := node.(*ast.NullNode); ok {
		return
	}
	if _, ok := node.(*ast.AliasNode); ok {
		return // an alias repeats a node checked where it was anchored
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bad := func(msg string) {
		*errs = append(*errs, &Error{File: file, Line: line(node), Key: path, Msg: msg})
	}
	if t == durationType {
		s, ok := scalarText(node)
		if _, err := time.ParseDuration(s); !ok || err != nil {
			bad(fmt.Sprintf("invalid duration %s (want a Go duration like 10s or 1m30s)", describe(node)))
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := mappingValues(node)
		if !ok {
			bad(fmt.Sprintf("cannot use %s here: want a mapping", describe(node)))
			return
		}
		fields := yamlFields(t)
		for _, mv := range m {
			key, _ := scalarText(mv.Key)
			f, ok := fields[key]
			kp := join(path, key)
			if !ok {
				*errs = append(*errs, &Error{File: file, Line: line(mv.Key), Key: kp, Msg: unknownKey(key, fields)})
				continue
			}
			walkSchema(file, mv.Value, f.Type, kp, errs)
		}
	case reflect.Map:
		m, ok := mappingValues(node)
		if !ok {
			bad(fmt.Sprintf("cannot use %s here: want a mapping", describe(node)))
			return
		}
		for _, mv := range m {
			key, _ := scalarText(mv.Key)
			walkSchema(file, mv.Value, t.Elem(), join(path, key), errs)
		}
	case reflect.Slice, reflect.Array:
		seq, ok := node.(*ast.SequenceNode)
		if !ok {
			bad(fmt.Sprintf("cannot use %s here: want a list", describe(node)))
			return
		}
		for i, v := range seq.Values {
			walkSchema(file, v, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	case reflect.String:
		if _, ok := scalarText(node); !ok {
			bad(fmt.Sprintf("cannot use %s here: want a string", describe(node)))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if _, ok := node.(*ast.IntegerNode); ok {
			return
		}
		if s, ok := scalarText(node); !ok || !parsesInt(s) {
			bad(fmt.Sprintf("cannot use %s here: want an integer", describe(node)))
		}
	case reflect.Float32, reflect.Float64:
		switch node.(type) {
		case *ast.IntegerNode, *ast.FloatNode:
			return
		}
		s, ok := scalarText(node)
		if _, err := strconv.ParseFloat(s, 64); !ok || err != nil {
			bad(fmt.Sprintf("cannot use %s here: want a number", describe(node)))
		}
	case reflect.Bool:
		if _, ok := node.(*ast.BoolNode); ok {
			return
		}
		if s, ok := scalarText(node); !ok || (s != "true" && s != "false") {
			bad(fmt.Sprintf("cannot use %s here: want true or false", describe(node)))
		}
	}
}

// unwrap returns the node under anchors and tags.
func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
}

// mappingValues returns the key/value pairs of a mapping node.
func mappingValues(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch v := n.(type) {
	case *ast.MappingNode:
		return v.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}, true
	}
	return nil, false
}

// scalarText returns the text of a scalar node; ok is false for
// mappings and lists.
func scalarText(n ast.Node) (string, bool) {
	switch v := unwrap(n).(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case ast.ScalarNode:
		return v.GetToken().Value, true
	}
	return "", false
}

// describe quotes a scalar's text or names a node's kind, for messages.
func describe(n ast.Node) string {
	if s, ok := scalarText(n); ok {
		return strconv.Quote(s)
	}
	switch unwrap(n).(type) {
	case *ast.SequenceNode:
		return "a list"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	}
	return "this value"
}

func parsesInt(s string) bool {
	_, err := strconv.ParseInt(s, 0, 64)
	return err == nil
}

func line(n ast.Node) int {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps a struct's YAML keys to its fields.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

// unknownKey says that key is not known here and suggests the nearest key.
func unknownKey(key string, fields map[string]reflect.StructField) string {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	best, dist := "", 1<<30
	for _, k := range known {
		if d := editDistance(key, k); d < dist {
			best, dist = k, d
		}
	}
	if best != "" && dist <= max(2, len(key)/3) {
		return fmt.Sprintf("unknown key %q (did you mean %q?)", key, best)
	}
	return fmt.Sprintf("unknown key %q (known here: %s)", key, strings.Join(known, ", "))
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
