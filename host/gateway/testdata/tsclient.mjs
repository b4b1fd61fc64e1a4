// The official TypeScript SDK's client against the gateway: connects over
// streamable HTTP with a bearer token, lists the tools, calls echo, and
// prints what it saw as one JSON line. Arguments: the SDK's folder, the
// MCP endpoint's URL, the token.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [sdk, url, token] = process.argv.slice(2);
const { Client } = await import(pathToFileURL(join(sdk, 'dist/esm/client/index.js')).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(sdk, 'dist/esm/client/streamableHttp.js')).href);

const client = new Client({ name: 'ts-sdk-test', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
const tools = await client.listTools();
const res = await client.callTool({ name: 'mcp_ts_echo', arguments: { message: 'from the TypeScript SDK' } });
console.log(JSON.stringify({
  protocol: transport.protocolVersion ?? '',
  tools: tools.tools.map((t) => t.name),
  echo: res.content?.[0]?.text ?? '',
  isError: res.isError ?? false,
}));
await client.close();
