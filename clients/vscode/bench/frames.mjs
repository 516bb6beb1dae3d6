// What a frame of a streamed reply costs the chat's page, by how its DOM is built, in the e2e's
// Chromium (headless): a 2,000-block reply (or a 2,000-line code block) with a block (a line)
// appended, the open tail replaced and the transcript scrolled to its end on every frame, the way
// webview/main.ts's LiveMarkdown does. Each layout runs in the same page one after the other,
// the anchor beside the change, and the round repeats so that a busy machine shows as spread:
//   prose: per-block  content-visibility on every finished block (the chat until 2026-12-02)
//          grouped    content-visibility on groups of 32 blocks (LiveMarkdown's md-group)
//          none       no content-visibility
//   code:  inline     the open block's lines appended as text into one <code> (until 2026-12-02)
//          parts      each append a block box, 32 to a content-visibility group (code-part, code-group)
// Prints per variant the median of the rounds: ms per frame (rAF to rAF; 16.7 is the display's
// pace, more is the page's main thread) and ms of the frame's script with the layout it forces.
// Usage: node bench/frames.mjs [rounds] [frames]   (needs clients/vscode/test/install.sh's playwright-core)
import { createRequire } from 'node:module';

const dir = process.env.AGENTD_VSCODE_E2E_DIR || '/tmp/agentd-vscode-e2e';
const { chromium } = createRequire(`${dir}/node_modules/`)('playwright-core');
const rounds = Number(process.argv[2] || 3);
const frames = Number(process.argv[3] || 200);
const N = 2000;
const GROUP = 32;

const CSS = `
  .messages { height: 300px; overflow: auto; font: 13px/1.5 sans-serif; }
  .md p { margin: 0.4em 0; }
  .md-tail { display: contents; }
  .v-per-block .md > :not(.md-tail) { content-visibility: auto; contain-intrinsic-size: auto 2em; }
  .v-grouped .md-group, .v-parts .code-group { content-visibility: auto; contain-intrinsic-size: auto 2em; }
  .v-grouped .md-group > :last-child { margin-bottom: 0; }
  pre { margin: 0; overflow-x: auto; } pre > code { display: block; }
  .code-part, .code-tail { display: block; }
  .code-group { display: block; min-width: 100%; width: max-content; }`;

/** In the page: builds the variant, streams `frames` frames into it, returns its costs. */
async function run([v, frames, N, GROUP]) {
  const m = document.querySelector('.messages');
  m.className = `messages v-${v}`;
  m.innerHTML = '<div class="md"><div class="md-tail"></div></div>';
  const md = m.firstChild;
  const tail = md.lastChild;
  const para = (i) => `<p>Line ${i} of the long reply: the <strong>daemon</strong> streams text and <code>code</code> as it comes, with a <a>link</a>.</p>`;
  const line = (i) => `\t<span class="k">x${i}</span> := compute(${i}, <span class="s">"step ${i}"</span>) <span class="c">// the ${i}th step</span>\n`;
  let group = null;
  const put = (html) => {
    if (v !== 'grouped') { tail.insertAdjacentHTML('beforebegin', html); return; }
    if (!group || group.childElementCount >= GROUP) { group = document.createElement('div'); group.className = 'md-group'; md.insertBefore(group, tail); }
    group.insertAdjacentHTML('beforeend', html);
  };
  let code = null, codeTail = null, codeGroup = null;
  const append = (html) => {
    if (v === 'inline') { codeTail.insertAdjacentHTML('beforebegin', html); return; }
    if (!codeGroup || codeGroup.childElementCount >= GROUP) { codeGroup = document.createElement('span'); codeGroup.className = 'code-group'; codeTail.before(codeGroup); }
    codeGroup.insertAdjacentHTML('beforeend', `<span class="code-part">${html}</span>`);
  };
  const codeVariant = v === 'inline' || v === 'parts';
  if (codeVariant) {
    tail.insertAdjacentHTML('beforebegin', '<pre><code><span class="code-tail"></span></code></pre>');
    code = md.querySelector('code');
    codeTail = code.lastChild;
    for (let i = 0; i < N; i += 4) append(line(i) + line(i + 1) + line(i + 2) + line(i + 3));
  } else for (let i = 0; i < N; i++) put(para(i));
  m.scrollTop = m.scrollHeight;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  let script = 0;
  const t0 = performance.now();
  await new Promise((done) => {
    let k = 0;
    const f = () => {
      const a = performance.now();
      if (codeVariant) { append(line(N + k)); codeTail.innerHTML = `\t<span class="k">open</span> ${k}`; } else { put(para(N + k)); tail.innerHTML = `<p>The open block, ${k}</p>`; }
      m.scrollTop = m.scrollHeight;
      script += performance.now() - a;
      if (++k < frames) requestAnimationFrame(f); else done();
    };
    requestAnimationFrame(f);
  });
  return { frameMs: (performance.now() - t0) / frames, scriptMs: script / frames };
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 350, height: 500 } });
  await page.setContent(`<style>${CSS}</style><div class="messages"></div>`);
  const variants = ['per-block', 'grouped', 'none', 'inline', 'parts'];
  const got = Object.fromEntries(variants.map((v) => [v, []]));
  for (let r = 0; r < rounds; r++) for (const v of variants) got[v].push(await page.evaluate(run, [v, frames, N, GROUP]));
  const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
  for (const v of variants) {
    const f = got[v].map((x) => x.frameMs), s = got[v].map((x) => x.scriptMs);
    console.log(`${v.padEnd(9)} ${med(f).toFixed(1).padStart(6)} ms/frame (${f.map((x) => x.toFixed(0)).join(', ')})  script+forced layout ${med(s).toFixed(1)} ms`);
  }
} finally { await browser.close(); }
