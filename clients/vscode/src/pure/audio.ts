// Audio for agent/x/transcribe: the MIME types agentd accepts, by file extension, and the
// recorder's type with its parameters dropped as agentd reads it.

/** The MIME type agentd accepts for a recording named `name`, or undefined. */
export function audioMimeType(name: string): string | undefined {
  const ext = name.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  switch (ext) {
    case 'webm': return 'audio/webm';
    case 'ogg': case 'oga': case 'opus': return 'audio/ogg';
    case 'wav': return 'audio/wav';
    case 'mp3': case 'mpga': case 'mpeg': return 'audio/mpeg';
    case 'm4a': case 'mp4': return 'audio/mp4';
    case 'flac': return 'audio/flac';
  }
  return undefined;
}

/** The largest recording agentd takes (25 MB decoded). */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

/** The text to insert: the transcript trimmed, or '' when it is only blanks. */
export function transcriptText(text: string | undefined): string {
  return (text ?? '').trim();
}
