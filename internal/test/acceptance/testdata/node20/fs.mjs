// node:fs with the one export Node 20 lacks; the client scenarios never call it.
export * from 'node:fs';
import fs from 'node:fs';
export default fs;
export function globSync() { throw new Error('fs.globSync needs Node 22'); }
