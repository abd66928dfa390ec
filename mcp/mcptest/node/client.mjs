// A third-party MCP client for docent's tests: the TypeScript SDK's own
// Client drives a docent MCP server as Claude, Cursor or VS Code would,
// and prints what came back as one JSON object on stdout.
//
//   node client.mjs stdio COMMAND [ARG...]   launch `docent mcp` and speak over its stdio
//   node client.mjs http URL [TOKEN]         POST to docent serve's /mcp (bearer TOKEN)
//
// QUESTION (env) is what it searches for and asks. It lists the tools
// (the SDK compiles each tool's output schema and checks every result's
// structured content against it), calls search_docs and ask_docs with
// the question and get_document with the top passage's doc_id, and exits
// non-zero on any error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
const question = process.env.QUESTION || "How do I reset my VPN token?";

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" });
} else if (mode === "http") {
  const headers = rest[0] ? { Authorization: `Bearer ${rest[0]}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  console.error("usage: node client.mjs stdio COMMAND [ARG...] | http URL [TOKEN]");
  process.exit(2);
}

const client = new Client({ name: "docent-ts-sdk-test", version: "1.0.0" });
await client.connect(transport);
const out = { server: client.getServerVersion(), tools: [] };
const listed = await client.listTools();
for (const t of listed.tools) {
  out.tools.push({
    name: t.name,
    description: t.description,
    inputType: t.inputSchema?.type,
    inputRequired: t.inputSchema?.required ?? [],
    outputType: t.outputSchema?.type,
  });
}
const call = async (name, args) => {
  const res = await client.callTool({ name, arguments: args });
  return { isError: res.isError ?? false, structured: res.structuredContent, text: res.content?.map((c) => c.text).join("\n") };
};
out.search = await call("search_docs", { query: question });
out.ask = await call("ask_docs", { question });
const top = out.search.structured?.passages?.[0];
out.document = top ? await call("get_document", { doc_id: top.doc_id }) : null;
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
