package typesensetest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// clause is one condition of a filter_by expression: field, operator and
// the values it compares against.
type clause struct {
	field  string
	op     string // "=", "!=", ">=", "<=", ">", "<", or "" (token match)
	values []string
	set    map[string]bool // values, for exact matches
}

// filter is a conjunction of clauses (the subset of filter_by syntax
// docent emits: clauses joined by &&, value lists in brackets, values
// optionally in backticks). Parentheses and || are refused as unsupported.
type filter []clause

// parseFilter parses s against c's schema; unknown fields are a 404 and
// malformed syntax a 400, as on the real server.
func (c *collection) parseFilter(s string) (filter, *apiError) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out filter
	for len(s) > 0 {
		cl, rest, err := parseClause(s)
		if err != nil {
			return nil, err
		}
		if cl.field != "id" {
			f := c.fields[cl.field]
			if f == nil || !f.indexed() {
				return nil, errorf(http.StatusNotFound, "Could not find a filter field named `%s` in the schema.", cl.field)
			}
			if err := checkClause(f, cl); err != nil {
				return nil, err
			}
		} else if cl.op != "=" && cl.op != "" && cl.op != "!=" {
			return nil, errorf(http.StatusBadRequest, "Error with filter field `id`: only equality is supported.")
		}
		cl.set = make(map[string]bool, len(cl.values))
		for _, v := range cl.values {
			cl.set[v] = true
		}
		out = append(out, cl)
		rest = strings.TrimSpace(rest)
		if rest == "" {
			break
		}
		if !strings.HasPrefix(rest, "&&") {
			return nil, errorf(http.StatusBadRequest, "Could not parse the filter query.")
		}
		s = strings.TrimSpace(rest[2:])
		if s == "" {
			return nil, errorf(http.StatusBadRequest, "Could not parse the filter query.")
		}
	}
	return out, nil
}

func parseClause(s string) (clause, string, *apiError) {
	bad := errorf(http.StatusBadRequest, "Could not parse the filter query.")
	if strings.HasPrefix(s, "(") || strings.HasPrefix(s, "||") {
		return clause{}, "", errorf(http.StatusBadRequest, "Could not parse the filter query: this test server supports clauses joined by && only.")
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return clause{}, "", bad
	}
	cl := clause{field: strings.TrimSpace(s[:i])}
	s = s[i+1:]
	for _, op := range []string{"!=", ">=", "<=", "=", ">", "<"} {
		if strings.HasPrefix(s, op) {
			cl.op = op
			s = s[len(op):]
			break
		}
	}
	s = strings.TrimLeft(s, " ")
	if strings.HasPrefix(s, "[") {
		s = s[1:]
		for {
			v, rest, ok := parseValue(s, ",]")
			if !ok {
				return clause{}, "", bad
			}
			cl.values = append(cl.values, v)
			rest = strings.TrimLeft(rest, " ")
			if strings.HasPrefix(rest, "]") {
				return cl, rest[1:], nil
			}
			if !strings.HasPrefix(rest, ",") {
				return clause{}, "", bad
			}
			s = rest[1:]
		}
	}
	v, rest, ok := parseValue(s, "&|")
	if !ok || v == "" {
		return clause{}, "", bad
	}
	cl.values = []string{v}
	return cl, rest, nil
}

// parseValue reads one value ending before any byte of stop: either in
// backticks (taken verbatim; a backtick cannot be escaped) or bare
// (trimmed; brackets and parentheses are syntax there).
func parseValue(s, stop string) (string, string, bool) {
	s = strings.TrimLeft(s, " ")
	if strings.HasPrefix(s, "`") {
		end := strings.IndexByte(s[1:], '`')
		if end < 0 {
			return "", "", false
		}
		return s[1 : end+1], s[end+2:], true
	}
	end := strings.IndexAny(s, stop)
	if end < 0 {
		end = len(s)
	}
	v := strings.TrimSpace(s[:end])
	if strings.ContainsAny(v, "()[]`") {
		return "", "", false
	}
	return v, s[end:], true
}

func checkClause(f *field, cl clause) *apiError {
	switch f.Type {
	case "int32", "int64", "float":
		for _, v := range cl.values {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return errorf(http.StatusBadRequest, "Error with filter field `%s`: Not a %s.", f.Name, f.Type)
			}
		}
	case "bool":
		for _, v := range cl.values {
			if v != "true" && v != "false" {
				return errorf(http.StatusBadRequest, "Value of filter field `%s` must be `true` or `false`.", f.Name)
			}
		}
	case "string", "string[]":
		if cl.op != "" && cl.op != "=" && cl.op != "!=" {
			return errorf(http.StatusBadRequest, "Error with filter field `%s`: comparison operators apply to numbers.", f.Name)
		}
	default:
		return errorf(http.StatusBadRequest, "Cannot filter on field `%s` of type %s.", f.Name, f.Type)
	}
	return nil
}

// match reports whether d passes every clause.
func (c *collection) match(fl filter, d *document) bool {
	for _, cl := range fl {
		if !c.matchClause(cl, d) {
			return false
		}
	}
	return true
}

func (c *collection) matchClause(cl clause, d *document) bool {
	if cl.field == "id" {
		return cl.set[d.id] != (cl.op == "!=")
	}
	f := c.fields[cl.field]
	v, ok := d.raw[cl.field]
	if !ok || v == nil {
		return cl.op == "!="
	}
	switch f.Type {
	case "string", "string[]":
		var vals []string
		if s, ok := v.(string); ok {
			vals = []string{s}
		} else {
			for _, x := range v.([]any) {
				vals = append(vals, x.(string))
			}
		}
		hit := false
		if cl.op != "" {
			for _, have := range vals {
				hit = hit || cl.set[have]
			}
			return hit != (cl.op == "!=")
		}
		for _, want := range cl.values {
			for _, have := range vals {
				if cl.op == "" {
					// Token match: every token of want among have's tokens.
					ht := c.tokenize(have, false)
					all := true
					for _, t := range c.tokenize(want, false) {
						all = all && slices.Contains(ht, t)
					}
					hit = hit || all
				} else {
					hit = hit || have == want
				}
			}
		}
		return hit != (cl.op == "!=")
	case "bool":
		b, _ := v.(bool)
		hit := slices.Contains(cl.values, strconv.FormatBool(b))
		return hit != (cl.op == "!=")
	default:
		n, err := v.(json.Number).Float64()
		if err != nil {
			return false
		}
		hit := false
		for _, s := range cl.values {
			x, _ := strconv.ParseFloat(s, 64)
			switch cl.op {
			case "", "=", "!=":
				hit = hit || n == x
			case ">":
				hit = hit || n > x
			case ">=":
				hit = hit || n >= x
			case "<":
				hit = hit || n < x
			case "<=":
				hit = hit || n <= x
			}
		}
		return hit != (cl.op == "!=")
	}
}
