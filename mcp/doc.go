// Package mcp serves docent over the Model Context Protocol, on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk), so that coding
// agents and assistants (Claude, Cursor, VS Code) can search the docs,
// get cited answers and read whole pages where people work.
//
// Three tools, named and described for a model:
//
//   - search_docs {query, source?, labels?, limit?}: ranked passages, each
//     with its title › section, URL, source, updated date and text; the
//     hybrid retrieval the answers use, with the same filters and scope.
//   - ask_docs {question, source?}: the grounded answer with [n] markers,
//     its numbered sources with URLs and its status (answered, uncertain,
//     not_found). Every ask is a stored turn (platform "mcp", the token's
//     name as the user), so it shows in the console like any other.
//   - get_document {doc_id | url}: a document's markdown as indexed (its
//     chunks in order, the overlap between them removed), with metadata.
//
// Each document in the caller's scope is also a resource,
// docent://documents/{doc_id} (text/markdown, what get_document returns),
// listed a page at a time.
//
// Each tool has an input and an output schema: results come as structured
// content and as text. Failures are tool errors with a message a model
// can act on: not ready (the first sync is running), over rate (the
// token's requests per minute), too busy (admission refused), unknown
// document, outside the token's scope.
//
// Transports: Run serves one client over stdio (`docent mcp`); Handler
// serves streamable HTTP (`/mcp` on `docent serve`), stateless with JSON
// responses, behind the API's bearer-token guard, which hands the token
// on as the request's docent.Caller. A caller's scope (sources, labels)
// narrows every retrieval filter, bounds get_document, and is checked
// again on every citation of an answer, so a scoped token never receives
// a passage, answer or document from outside it.
package mcp
