// Dictation: speech to text through agentd's agent/x/transcribe (the user's transcription
// provider, an OpenAI-compatible /audio/transcriptions), inserted where the cursor was.
//
// agentd: Dictate records in a small webview with the browser's MediaRecorder; the extension host
// has no microphone of its own, and a webview may have none either (code-server in a browser
// without the permission, a remote machine), so the panel says so and offers agentd: Transcribe
// Audio File…, which sends a recording from disk the same way.
import * as vscode from 'vscode';
import { Daemon } from './daemon';
import { ToDaemon } from './pure/protocol';
import { audioMimeType, MAX_AUDIO_BYTES, transcriptText } from './pure/audio';

export function registerDictation(context: vscode.ExtensionContext, daemon: Daemon): void {
  // Where the text goes: the editor and selection of the moment the command ran (the panel
  // takes the focus away from it).
  const insertInto = async (target: { editor: vscode.TextEditor; selection: vscode.Selection } | undefined, text: string) => {
    const t = transcriptText(text);
    if (!t) {
      void vscode.window.showInformationMessage(vscode.l10n.t('agentd heard nothing to write.'));
      return;
    }
    if (target && !target.editor.document.isClosed) {
      const ok = await target.editor.edit((b) => b.replace(target.selection, t));
      if (ok) return;
    }
    await vscode.env.clipboard.writeText(t);
    void vscode.window.showInformationMessage(vscode.l10n.t('No editor to write into: the transcript is on the clipboard.'));
  };
  const transcribe = async (audio: Uint8Array, mimeType: string) => {
    if (audio.byteLength > MAX_AUDIO_BYTES) throw new Error(vscode.l10n.t('the recording is larger than 25 MB'));
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('agentd is transcribing…'), cancellable: true },
      (_p, token) => daemon.request(ToDaemon.transcribe, { audio: Buffer.from(audio).toString('base64'), mimeType }, token));
    return r.text;
  };
  const failed = (e: unknown) => {
    if (e instanceof vscode.CancellationError) return;
    void vscode.window.showErrorMessage(vscode.l10n.t('agentd could not transcribe: {0}', e instanceof Error ? e.message : String(e)));
  };
  const here = () => {
    const editor = vscode.window.activeTextEditor;
    return editor ? { editor, selection: editor.selection } : undefined;
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('agentd.transcribeFile', async (file?: vscode.Uri) => {
      const target = here();
      if (!file) {
        const picked = await vscode.window.showOpenDialog({
          canSelectMany: false, openLabel: vscode.l10n.t('Transcribe'),
          filters: { [vscode.l10n.t('Audio')]: ['wav', 'webm', 'ogg', 'opus', 'mp3', 'm4a', 'flac'] },
        });
        file = picked?.[0];
        if (!file) return;
      }
      const mimeType = audioMimeType(file.path);
      if (!mimeType) {
        void vscode.window.showErrorMessage(vscode.l10n.t('{0} is not a recording agentd can transcribe (wav, webm, ogg, mp3, m4a, flac).', file.path));
        return;
      }
      try {
        await insertInto(target, await transcribe(await vscode.workspace.fs.readFile(file), mimeType));
      } catch (e) { failed(e); }
    }),
    vscode.commands.registerCommand('agentd.dictate', () => {
      const target = here();
      const panel = vscode.window.createWebviewPanel('agentd.dictation', vscode.l10n.t('agentd: Dictation'),
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false }, { enableScripts: true });
      const nonce = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
      panel.webview.html = recorderHtml(panel.webview.cspSource, nonce);
      panel.webview.onDidReceiveMessage(async (m: { type?: string; data?: string; mimeType?: string; message?: string }) => {
        if (m.type === 'audio' && typeof m.data === 'string' && typeof m.mimeType === 'string') {
          panel.dispose();
          const mime = m.mimeType.split(';')[0].trim();
          try {
            await insertInto(target, await transcribe(Buffer.from(m.data, 'base64'), mime));
          } catch (e) { failed(e); }
        } else if (m.type === 'no-microphone') {
          const file: vscode.MessageItem = { title: vscode.l10n.t('Transcribe Audio File…') };
          const c = await vscode.window.showWarningMessage(vscode.l10n.t('No microphone here ({0}). Transcribe a recording instead?', String(m.message ?? '')), file);
          panel.dispose();
          if (c === file) await vscode.commands.executeCommand('agentd.transcribeFile');
        }
      }, undefined, context.subscriptions);
    }),
  );
}

/** The recorder: Record / Stop with MediaRecorder, the recording posted back as base64. */
function recorderHtml(cspSource: string, nonce: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}'; media-src mediastream: blob:;">
<style nonce="${nonce}">body{font-family:var(--vscode-font-family);padding:1em} button{font-size:1.1em;margin-right:.5em}</style>
</head><body>
<p id="status">Press Record and speak; Stop sends the recording to your transcription model.</p>
<button id="rec">Record</button><button id="stop" disabled>Stop</button>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const status = document.getElementById('status'), rec = document.getElementById('rec'), stop = document.getElementById('stop');
let recorder = null, chunks = [];
rec.onclick = async () => {
  if (!navigator.mediaDevices || typeof MediaRecorder === 'undefined') { vscode.postMessage({ type: 'no-microphone', message: 'this view cannot record' }); return; }
  let stream;
  try { stream = await navigator.mediaDevices.getUserMedia({ audio: true }); }
  catch (e) { vscode.postMessage({ type: 'no-microphone', message: String(e && e.message || e) }); return; }
  recorder = new MediaRecorder(stream); chunks = [];
  recorder.ondataavailable = (e) => { if (e.data.size) chunks.push(e.data); };
  recorder.onstop = async () => {
    stream.getTracks().forEach((t) => t.stop());
    const blob = new Blob(chunks, { type: recorder.mimeType || 'audio/webm' });
    const bytes = new Uint8Array(await blob.arrayBuffer());
    let bin = ''; for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    vscode.postMessage({ type: 'audio', data: btoa(bin), mimeType: blob.type });
  };
  recorder.start(); rec.disabled = true; stop.disabled = false; status.textContent = 'Recording… press Stop when you are done.';
};
stop.onclick = () => { if (recorder && recorder.state !== 'inactive') { recorder.stop(); stop.disabled = true; status.textContent = 'Transcribing…'; } };
</script></body></html>`;
}
