// Loaded with `node --import` under Node 20, which lacks fs.globSync (Node 22): the MCP
// conformance suite imports it by name, so its imports of fs resolve to fs.mjs instead.
import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
