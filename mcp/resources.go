package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docent-hq/docent/store"
)

// DocumentURI is how a document is named as an MCP resource: this
// prefix, then its doc_id.
const DocumentURI = "docent://documents/"

// resourcePage is how many documents one resources/list page holds.
const resourcePage = 100

// addResources offers each document of the caller's scope as a resource
// (text/markdown, what get_document returns), listed a page at a time.
func (s *Server) addResources() {
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: DocumentURI + "{+doc_id}", Name: "document", Title: "A document of the docs", MIMEType: "text/markdown",
		Description: "One document of the organisation's documentation as docent indexed it, as markdown; doc_id is a " +
			"search_docs passage's or an ask_docs source's doc_id.",
	}, s.readDocument)
	s.srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if lr, ok := req.(*sdk.ListResourcesRequest); ok && method == "resources/list" {
				return s.listDocuments(ctx, lr)
			}
			return next(ctx, method, req)
		}
	})
}

// listDocuments answers resources/list with the live documents the
// caller's scope allows; the cursor is the registry offset to go on from.
func (s *Server) listDocuments(ctx context.Context, req *sdk.ListResourcesRequest) (*sdk.ListResourcesResult, error) {
	c, _, err := s.start(ctx, req.Extra)
	if err != nil {
		return nil, err
	}
	offset := 0
	if req.Params != nil && req.Params.Cursor != "" {
		if offset, err = strconv.Atoi(req.Params.Cursor); err != nil || offset < 0 {
			return nil, errors.New("invalid cursor")
		}
	}
	f := store.DocFilter{Limit: resourcePage, Offset: offset}
	if len(c.Scope.Sources) == 1 {
		f.Source = c.Scope.Sources[0]
	}
	recs, err := s.opts.Documents.ListDocuments(ctx, f)
	if err != nil {
		s.log.ErrorContext(ctx, "mcp: list documents", slog.Any("error", err))
		return nil, ErrInternal
	}
	out := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}}
	for _, r := range recs {
		if !c.Scope.Allows(r.Source, r.Labels) {
			continue
		}
		desc := "from " + r.Source
		if !r.UpdatedAt.IsZero() {
			desc += ", updated " + r.UpdatedAt.UTC().Format("2006-01-02")
		}
		out.Resources = append(out.Resources, &sdk.Resource{URI: DocumentURI + r.ID, Name: r.ID, Title: r.Title,
			MIMEType: "text/markdown", Description: desc + "; " + r.URL})
	}
	if len(recs) == resourcePage {
		out.NextCursor = strconv.Itoa(offset + resourcePage)
	}
	return out, nil
}

// readDocument answers resources/read of a document: its markdown. One
// that is unknown or outside the caller's scope is "resource not found".
func (s *Server) readDocument(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	c, _, err := s.start(ctx, req.Extra)
	if err != nil {
		return nil, err
	}
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, DocumentURI)
	if ok {
		id, err = url.PathUnescape(id)
	}
	if !ok || err != nil || id == "" {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	doc, err := s.document(ctx, c, id, "")
	if errors.Is(err, ErrUnknownDocument) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: doc.Markdown}}}, nil
}
