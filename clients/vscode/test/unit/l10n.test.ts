// The English bundles are complete and nothing is shown outside them (src/pure/l10n.ts describes
// the mechanism):
//   - every %key% of package.json is in package.nls.json, and every key there is used;
//   - l10n/bundle.l10n.json is exactly what `@vscode/l10n-dev export src webview` extracts from
//     the code (vscode.l10n.t in src/, l10n.t from @vscode/l10n in src/pure/ and webview/): no
//     message missing, none unused, every value its own English key;
//   - every l10n.t call passes a literal message (placeholders {0}), never a computed one;
//   - the chat view's code has no user-visible literal outside l10n.t: text between markup tags,
//     the title / aria-label / placeholder / alt attributes, what is assigned to textContent /
//     innerText / title / placeholder, label-like properties (label, name, title, description,
//     detail, tooltip) and strings a function returns (see visibleLiterals);
//   - the host's message boxes (show{Information,Warning,Error}Message) show no literal text and
//     take MessageItems, never string buttons, whose English answer code would compare with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { getL10nJson } from '@vscode/l10n-dev';
import * as l10n from '@vscode/l10n';
import { bundleScript, BUNDLE_ELEMENT_ID, parseBundle } from '../../src/pure/l10n';

const ext = path.resolve(__dirname, '../../..');
const read = (p: string) => fs.readFileSync(path.join(ext, p), 'utf8');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : /\.ts$/.test(e.name) && !/\.d\.ts$/.test(e.name) ? [p] : [];
  });
}
const code = () => [...sources(path.join(ext, 'src')), ...sources(path.join(ext, 'webview'))];

/** The number of l10n.t calls whose message is not a plain string literal. */
export function computedMessages(src: string): number {
  return [...src.matchAll(/\bl10n\.t\(\s*(['"`]?)/g)].filter((m) => m[1] !== "'" && m[1] !== '"').length;
}

const LETTER = /\p{L}/u;
const TEXT_PROPS = new Set(['textContent', 'innerText', 'title', 'placeholder', 'ariaLabel']);
const LABEL_KEYS = new Set(['label', 'name', 'title', 'description', 'detail', 'tooltip']);
const SHOWN_ATTRS = ['title', 'aria-label', 'placeholder', 'alt', 'aria-description', 'aria-roledescription'];
const ATTRS = new RegExp(`\\b(${SHOWN_ATTRS.join('|')})="([^"]*)"`, 'g');

/** Whether markup that ends with `before` is at a place whose text is shown: between tags, or in a shown attribute's value. */
function shownPosition(before: string): boolean {
  const open = before.lastIndexOf('<');
  if (open < before.lastIndexOf('>') || open < 0) return before.lastIndexOf('>') >= 0;
  const tag = before.slice(open);
  if ((tag.match(/"/g) ?? []).length % 2 === 0) return false; // between attributes
  const attr = /([\w-]+)="[^"]*$/.exec(tag)?.[1] ?? '';
  return SHOWN_ATTRS.includes(attr);
}

/** The literal strings of `code` a user would see, were it webview code (see the file comment). */
export function visibleLiterals(code: string): string[] {
  const sf = ts.createSourceFile('x.ts', code, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const isL10nCall = (n: ts.Node) => ts.isCallExpression(n) && /(^|\.)l10n\.t$/.test(n.expression.getText(sf));
  const insideL10n = (n: ts.Node) => { for (let p: ts.Node | undefined = n.parent; p; p = p.parent) if (isL10nCall(p)) return true; return false; };
  // A literal's text with each ${…} as \0; a plain string as it is.
  const textOf = (n: ts.Node): string | undefined => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return n.text;
    if (ts.isTemplateExpression(n)) return n.head.text + n.templateSpans.map((s) => '\0' + s.literal.text).join('');
    return undefined;
  };
  // The literals an expression can evaluate to (through ?:, ??, ||, parentheses).
  const leaves = (n: ts.Expression): ts.Node[] => {
    if (ts.isParenthesizedExpression(n)) return leaves(n.expression);
    if (ts.isConditionalExpression(n)) return [...leaves(n.whenTrue), ...leaves(n.whenFalse)];
    if (ts.isBinaryExpression(n) && [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(n.operatorToken.kind)) return [...leaves(n.left), ...leaves(n.right)];
    return textOf(n) === undefined ? [] : [n];
  };
  const plain = (s: string) => s.replace(/\0/g, '').replace(/&[a-z]+;|&#\d+;/g, '');
  const prose = (n: ts.Node) => { const t = plain(textOf(n) ?? ''); if (LETTER.test(t)) found.push(t.trim()); };
  const visit = (n: ts.Node) => {
    const text = textOf(n);
    if (text !== undefined && !insideL10n(n)) {
      for (const m of text.matchAll(/>([^<>]*)</g)) if (LETTER.test(plain(m[1]))) found.push(plain(m[1]).trim());
      for (const m of text.matchAll(ATTRS)) if (LETTER.test(plain(m[2]))) found.push(plain(m[2]).trim());
    }
    // A ${…} in a text position of markup (or in a shown attribute's value): the literals it may give.
    if (ts.isTemplateExpression(n) && !insideL10n(n) && /<\/?[a-z]/i.test(text ?? '')) {
      let before = n.head.text;
      for (const span of n.templateSpans) {
        if (shownPosition(before)) leaves(span.expression).filter((l) => !(textOf(l) ?? '').includes('<')).forEach(prose);
        before += '\0' + span.literal.text;
      }
    }
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken
      && ts.isPropertyAccessExpression(n.left) && TEXT_PROPS.has(n.left.name.text)) leaves(n.right).forEach(prose);
    if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && LABEL_KEYS.has(n.name.text)) leaves(n.initializer).forEach(prose);
    if (ts.isReturnStatement(n) && n.expression) leaves(n.expression).filter((l) => !/^[<\0]/.test(textOf(l) ?? '')).forEach(prose);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

const LITERAL = new Set([ts.SyntaxKind.StringLiteral, ts.SyntaxKind.NoSubstitutionTemplateLiteral, ts.SyntaxKind.TemplateExpression]);

/** Message-box calls in `code` that show a literal message or pass a string as a button. */
export function literalMessageBoxes(code: string): string[] {
  const sf = ts.createSourceFile('x.ts', code, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isCallExpression(n) && /\bshow(Information|Warning|Error)Message$/.test(n.expression.getText(sf))) {
      const [message, ...rest] = n.arguments;
      if (message && LITERAL.has(message.kind)) found.push(`message ${message.getText(sf)}`);
      for (const b of rest) if (LITERAL.has(b.kind) || ts.isCallExpression(b)) found.push(`button ${b.getText(sf)}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

test('every %key% in package.json has its English text in package.nls.json', () => {
  const nls = JSON.parse(read('package.nls.json'));
  const keys = [...read('package.json').matchAll(/"%([^%"]+)%"/g)].map((m) => m[1]);
  assert.ok(keys.length > 20, `only ${keys.length} localized manifest strings`);
  assert.deepEqual(keys.filter((k) => typeof nls[k] !== 'string' || !nls[k]), []);
  // And nothing stale: every English text is used.
  assert.deepEqual(Object.keys(nls).filter((k) => !keys.includes(k)), []);
});

test('l10n/bundle.l10n.json holds exactly the messages of the code (as @vscode/l10n-dev exports them)', async () => {
  const bundle: Record<string, unknown> = JSON.parse(read('l10n/bundle.l10n.json'));
  const files = code();
  const used = await getL10nJson(files.map((f) => ({ contents: fs.readFileSync(f, 'utf8'), extension: path.extname(f) })));
  assert.ok(Object.keys(used).length > 100, `only ${Object.keys(used).length} messages found: is the extraction broken?`);
  const hint = ' (run `npx @vscode/l10n-dev export --outDir l10n src webview` in clients/vscode)';
  assert.deepEqual(Object.keys(used).filter((k) => !(k in bundle)), [], `messages missing from l10n/bundle.l10n.json${hint}`);
  assert.deepEqual(Object.keys(bundle).filter((k) => !(k in used)), [], `unused messages in l10n/bundle.l10n.json${hint}`);
  assert.deepEqual(Object.entries(bundle).filter(([k, v]) => v !== used[k]), [], 'an English bundle entry differs from its message');
  // The webview's strings are in it too (it takes them from @vscode/l10n, not from vscode).
  for (const m of ['Send', 'Allow once', 'Deny with feedback…', 'Context {0}']) assert.equal(used[m], m, `${m} not extracted`);
});

test('every l10n.t call passes a literal message', () => {
  for (const f of code()) {
    assert.equal(computedMessages(fs.readFileSync(f, 'utf8')), 0, `${path.relative(ext, f)}: l10n.t takes a literal message (placeholders {0}), not a computed one`);
  }
});

test('the chat view shows no literal text outside l10n.t', () => {
  for (const f of sources(path.join(ext, 'webview'))) {
    assert.deepEqual(visibleLiterals(fs.readFileSync(f, 'utf8')), [], `${path.relative(ext, f)}: user-visible text outside l10n.t`);
  }
});

test('message boxes show localized text and answer with MessageItems', () => {
  for (const f of sources(path.join(ext, 'src'))) {
    assert.deepEqual(literalMessageBoxes(fs.readFileSync(f, 'utf8')), [], `${path.relative(ext, f)}: a message box with literal text or string buttons`);
  }
});

test('the scanners catch what they are for', () => {
  assert.deepEqual(literalMessageBoxes(`
    vscode.window.showErrorMessage(\`agentd: \${x}\`);
    void vscode.window.showWarningMessage(vscode.l10n.t('Fine {0}', x), 'Allow');
    vscode.window.showInformationMessage(msg, vscode.l10n.t('Show Logs'));
    vscode.window.showErrorMessage(vscode.l10n.t('Fine'), logs, ...items);
  `), ['message `agentd: ${x}`', "button 'Allow'", "button vscode.l10n.t('Show Logs')"]);
  assert.equal(computedMessages(`vscode.l10n.t('a {0}', x); l10n.t("it's"); vscode.l10n.t('don\\'t')`), 0);
  assert.equal(computedMessages('vscode.l10n.t(`x ${y}`)'), 1);
  assert.equal(computedMessages('l10n.t(msg)'), 1);
  const found = visibleLiterals(`
    el.innerHTML = \`<div class="\${c}"><span>Saves first:</span>\${x}<b>\${esc(l10n.t('Fine'))}</b></div>\`;
    const b = \`<button title="Open it" aria-label="\${esc(l10n.t('Fine too'))}">\${n} files</button>\`;
    $('.send').textContent = running ? 'Steer' : l10n.t('Send');
    const items = [{ value: 'ask', name: 'Ask' }];
    function answer(a) { switch (a) { case 'deny': return 'Denied'; default: return \`<i>\${a}</i>\`; } }
    const t = \`<summary class="\${open ? 'open' : ''}" title="\${x ? 'Shown' : ''}">\${live ? 'output (live)' : \`<b>\${y}</b>\`}\${it.title || 'tool'}</summary>\`;
    e.innerHTML = '<p>Ask agentd</p>';
    if (e.key === 'Enter') vscode.postMessage({ type: 'prompt', text: '/compact' });
    el.querySelector('details.thought > summary');
  `);
  assert.deepEqual(found.sort(), ['Ask', 'Ask agentd', 'Denied', 'Open it', 'Saves first:', 'Shown', 'Steer', 'files', 'output (live)', 'tool'].sort());
});

test('the webview gets the bundle as an inert data block that no translation can break out of', () => {
  const evil = { Send: '</script><script>alert(1)</script>', 'Line\u2028Sep': 'x\u2028y' };
  const html = bundleScript(evil);
  assert.ok(html.startsWith(`<script type="application/json" id="${BUNDLE_ELEMENT_ID}">`));
  const body = html.slice(html.indexOf('>') + 1, html.lastIndexOf('</script>'));
  assert.ok(!body.includes('<'), `markup inside the data block: ${body}`);
  assert.deepEqual(parseBundle(body), evil);
  assert.deepEqual(parseBundle(bundleScript(undefined).replace(/^<[^>]*>|<\/script>$/g, '')), {});
  // What a broken page could hold reads as English, not as an error.
  assert.deepEqual(parseBundle('not json'), {});
  assert.deepEqual(parseBundle('[1]'), {});
  assert.deepEqual(parseBundle('{"a":"b","n":1}'), { a: 'b' });
  assert.deepEqual(parseBundle(null), {});
});

test('l10n.t answers from the configured bundle and falls back to English', () => {
  l10n.config({ contents: { 'Open diff: {0}': 'Diff öffnen: {0}' } });
  try {
    assert.equal(l10n.t('Open diff: {0}', 'a.go'), 'Diff öffnen: a.go');
    assert.equal(l10n.t('Send'), 'Send');
  } finally { l10n.config({ contents: {} }); }
});
