// Files and images dropped on the chat (issue 33 item 8): a file becomes a chip sent as a
// resource link (agentd reads it when the prompt runs, like an @ mention); an image file becomes
// an image content block, which agentd refuses with a clear error when the model cannot read
// images (docs/protocol.md, "Local models and the web"). Only local files are taken, and an image
// only of a known type and size.

/** The image types a prompt may carry, by file extension. */
const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };
/** The largest image sent (bytes): a model's own limits are about this size. */
export const IMAGE_MAX = 5 * 1024 * 1024;
/** At most this many files from one drop. */
export const DROP_MAX = 20;

/** The URIs of a drop's `text/uri-list` (comments and blank lines left out), at most DROP_MAX. */
export function droppedUris(list: string): string[] {
  return list.split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).slice(0, DROP_MAX);
}

/** The image type of a file name ('' when it is not an image a prompt may carry). */
export function imageType(name: string): string {
  const m = /\.([A-Za-z0-9]+)$/.exec(name);
  return (m && IMAGE_TYPES[m[1].toLowerCase()]) || '';
}

/** Whether a content block from the webview is an image block to pass on: a known type, base64 data, not too big. */
export function validImageBlock(b: unknown): boolean {
  const x = b as { type?: unknown; mimeType?: unknown; data?: unknown };
  if (x?.type !== 'image' || typeof x.mimeType !== 'string' || typeof x.data !== 'string') return false;
  if (!Object.values(IMAGE_TYPES).includes(x.mimeType)) return false;
  if (x.data.length > Math.ceil(IMAGE_MAX / 3) * 4 || !/^[A-Za-z0-9+/]*={0,2}$/.test(x.data)) return false;
  return true;
}
