// The chat view's strings: imported first by main.ts, this loads the bundle the host put into the
// page (src/pure/l10n.ts says how the mechanism works), so that every l10n.t('…') of the webview,
// written as `import * as l10n from '@vscode/l10n'; l10n.t('Send')`, answers in the display
// language. Add each new message's English text to l10n/bundle.l10n.json.
import * as l10n from '@vscode/l10n';
import { BUNDLE_ELEMENT_ID, parseBundle } from '../src/pure/l10n';

l10n.config({ contents: parseBundle(document.getElementById(BUNDLE_ELEMENT_ID)?.textContent) });
