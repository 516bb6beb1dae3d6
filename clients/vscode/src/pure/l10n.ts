// How the extension's strings are localized: the one mechanism, for every part of the extension.
//
//   - src/*.ts (code that imports `vscode`):  vscode.l10n.t('Keep All'), vscode.l10n.t('Keep ({0})', n)
//   - src/pure/*.ts and webview/*.ts:         import * as l10n from '@vscode/l10n'; l10n.t('Send')
//
// The English text is the key. Every message goes into l10n/bundle.l10n.json (English → English);
// test/unit/l10n.test.ts fails when one is missing, unused, or computed (a variable or a template
// literal), and when the chat view's markup holds a user-visible literal outside l10n.t. Never
// compare what VS Code returns from a message box or quick pick with English text: pass
// MessageItems (or items with an id) and compare the object or its id.
//
// VS Code loads the translation for the display language (l10n/bundle.l10n.<locale>.json) and
// exposes it as vscode.l10n.bundle. The host hands that same bundle to @vscode/l10n at activation
// (configureHost) and to the chat view inside its HTML (bundleScript, read by webview/l10n.ts
// before any markup is built), so the webview never needs a message of its own to get its strings.
// Without a translation (English) the bundle is undefined and l10n.t returns the English text.
import * as l10n from '@vscode/l10n';

/** The bundle shape VS Code gives (vscode.l10n.bundle). */
export type Bundle = Record<string, string> | undefined;

/** The element id of the bundle inside the chat view's HTML. */
export const BUNDLE_ELEMENT_ID = 'agentd-l10n';

/** Makes l10n.t in the host's pure modules answer from VS Code's bundle for the display language. */
export function configureHost(bundle: Bundle) {
  l10n.config({ contents: bundle ?? {} });
}

/**
 * The bundle as an inert JSON data block for the webview's HTML. Every `<` is escaped, so no
 * translation can close the element or open markup; a data block is not a script the CSP runs.
 */
export function bundleScript(bundle: Bundle): string {
  const json = JSON.stringify(bundle ?? {}).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return `<script type="application/json" id="${BUNDLE_ELEMENT_ID}">${json}</script>`;
}

/** The webview side: the bundle out of the data block's text; an unreadable one is English. */
export function parseBundle(text: string | null | undefined): Record<string, string> {
  try {
    const v = JSON.parse(text ?? '{}');
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}
