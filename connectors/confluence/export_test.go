package confluence

import (
	"strings"

	"golang.org/x/net/html"
)

// hidden are elements whose text a reader never sees on the page: the
// document head, scripts, form fields, macro parameters, editor
// placeholders, resource identifiers and ADF fallbacks.
var hidden = map[string]bool{
	"head": true, "title": true, "script": true, "style": true, "template": true, "textarea": true,
	"iframe": true, "noscript": true, "noembed": true, "noframes": true,
	"ac:parameter": true, "ac:placeholder": true, "ac:adf-attribute": true, "ac:adf-fallback": true,
	"ac:task-id": true, "ac:task-status": true,
}

// VisibleText is the text a reader of the page sees, for the fuzz test:
// every text node of the parsed page outside hidden elements, separated
// by spaces.
func VisibleText(storage string) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (hidden[n.Data] || strings.HasPrefix(n.Data, "ri:")) {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(Parse(storage))
	return b.String()
}
