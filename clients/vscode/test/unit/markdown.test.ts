// The streamed reply's renderer (src/pure/markdown.ts): rendered piece by piece as the text
// grows, it must end as the whole text rendered at once, never let the model's HTML through,
// and grow a code block by appending, not by highlighting it all again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Op, renderMarkdown, revealTo, StreamMarkdown } from '../../src/pure/markdown';

/** A DOM stand-in: the HTML the operations build (finished blocks, open code block, tail). */
class Doc {
  blocks: string[] = [];
  code: { head: string; body: string; tail: string } | undefined;
  tail = '';
  /** Characters of code HTML appended, and how many times a code block's body was replaced. */
  appended = 0;
  apply(ops: Op[]) {
    for (const o of ops) {
      switch (o.op) {
        case 'block': this.blocks.push(o.html); break;
        case 'codeOpen': this.code = { head: o.html, body: '', tail: '' }; break;
        case 'code': this.code!.body += o.html; this.appended += o.html.length; break;
        case 'codeTail': this.code!.tail = o.html; break;
        case 'codeClose': this.blocks.push(this.codeHtml()); this.code = undefined; break;
        case 'tail': this.tail = o.html; break;
      }
    }
  }
  private codeHtml(): string {
    const c = this.code!;
    return c.head.replace('<code class="hljs"></code>', `<code class="hljs">${c.body}${c.tail}</code>`);
  }
  html(): string { return this.blocks.join('') + (this.code ? this.codeHtml() : '') + this.tail; }
}

/** Streams `text` in pieces of `size` characters, then says it is final. */
function stream(text: string, size: number | number[]): Doc {
  const d = new Doc();
  const s = new StreamMarkdown();
  const sizes = Array.isArray(size) ? size : [size];
  for (let i = 0, k = 0; i < text.length; k++) {
    i = Math.min(text.length, i + sizes[k % sizes.length]);
    d.apply(s.update(text.slice(0, i)));
  }
  d.apply(s.update(text, true));
  return d;
}

const SAMPLE = [
  '# Title', '', 'A paragraph with **bold**, `code` and a [link](https://example.com).', 'Its second line.', '',
  '- one', '- two', '  still two', '', '1. first', '2. second', '',
  '> quoted', '> more', '', '| a | b |', '|---|---|', '| 1 | 2 |', '',
  '```go', 'package main', '', 'func main() {', '\t/* a comment', '\t   over lines */', '\ts := "text"', '}', '```', '',
  'Setext heading', '---', '', '~~~', 'tilde code', '~~~', 'After the code.', '',
  '```python', 'def f():', '    """doc', '    string"""', '    return 1', '```',
  'The end.',
].join('\n');

test('a reply streamed in pieces of any size ends as the whole reply rendered at once', () => {
  const whole = renderMarkdown(SAMPLE);
  for (const size of [1, 2, 3, 7, 13, 64, [1, 5, 2, 30], SAMPLE.length]) {
    assert.equal(stream(SAMPLE, size as number).html(), whole, `pieces of ${JSON.stringify(size)}`);
  }
});

test('CR LF line ends read as LF, also when a piece ends between the CR and the LF', () => {
  const text = 'one\r\n\r\ntwo\r\n```js\r\nlet x = 1;\r\n```\r\nthree';
  assert.equal(stream(text, 1).html(), renderMarkdown(text.replace(/\r\n/g, '\n')));
});

test('finished blocks are rendered once: the last block alone is rendered again', () => {
  const s = new StreamMarkdown();
  const paras = Array.from({ length: 50 }, (_, i) => `Paragraph ${i}.`).join('\n\n');
  let blocks = 0;
  let tailMax = 0;
  for (let i = 1; i <= paras.length; i++) {
    for (const o of s.update(paras.slice(0, i))) {
      if (o.op === 'block') blocks++;
      if (o.op === 'tail') tailMax = Math.max(tailMax, o.html.length);
    }
  }
  // Each paragraph became a finished block once (49; the last is finished by the final update).
  assert.ok(blocks <= 49, `${blocks} block operations`);
  assert.ok(tailMax < 40, `the open block's HTML grew to ${tailMax} characters: more than one paragraph`);
});

test('a code block grows by appending its lines: the code is highlighted about once', () => {
  const lines = ['```go', 'package main', 'func main() {'];
  for (let i = 0; i < 500; i++) lines.push(`\tx${i} := compute(${i}, "s") // step ${i}`);
  lines.push('}', '```', '');
  const text = lines.join('\n');
  const d = stream(text, 17);
  const whole = renderMarkdown(text);
  assert.equal(d.html(), whole);
  const codeHtml = /<code class="hljs">([\s\S]*)<\/code>/.exec(whole)![1].length;
  // Appended once (a line held back while it is incomplete is not appended twice).
  assert.ok(d.appended < codeHtml * 1.1, `appended ${d.appended} characters of ${codeHtml}`);
});

test('a code block is appended in whole lines, each with its line end, the open rest from a line start', () => {
  // The webview gives each appended part a box of its own: a part that began or ended mid-line
  // would show a line broken in two.
  const lines = ['Intro.', '', '```go', 'package main', '', 'func main() {'];
  for (let i = 0; i < 120; i++) lines.push(i % 9 ? `\tx${i} := f(${i}) // step ${i}` : '');
  lines.push('}', '```', 'After.');
  const text = lines.join('\n');
  for (const size of [1, 3, 17, 64]) {
    const s = new StreamMarkdown();
    const d = new Doc();
    let parts = 0;
    for (let i = size; ; i = Math.min(text.length, i + size)) {
      const ops = s.update(text.slice(0, i), i === text.length);
      for (const o of ops) {
        if (o.op === 'code' && d.code && !/\n$/.test(o.html)) {
          // Only the block's last line, appended as it closes, has no line end.
          assert.ok(ops.some((x) => x.op === 'codeClose'), `pieces of ${size}: a part ends mid-line: ${JSON.stringify(o.html.slice(-40))}`);
        }
        if (o.op === 'code') parts++;
        if (o.op === 'codeTail' && o.html) {
          const src = text.slice(0, i);
          const shown = o.html.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"');
          assert.ok(src.endsWith(shown), `pieces of ${size}: the open rest is not the text's end`);
          assert.equal(src[src.length - shown.length - 1], '\n', `pieces of ${size}: the open rest starts mid-line: ${JSON.stringify(shown.slice(0, 30))}`);
        }
      }
      d.apply(ops);
      if (i === text.length) break;
    }
    assert.equal(d.html(), renderMarkdown(text), `pieces of ${size}`);
    assert.ok(parts > 1 || size === 64, `pieces of ${size}: appended in ${parts} parts`);
  }
});

test('a comment open across lines is appended only once it closes, and shows meanwhile', () => {
  const s = new StreamMarkdown();
  const d = new Doc();
  d.apply(s.update('```c\nint a;\n/* open\nstill\n'));
  assert.ok(d.code, 'the code block is open');
  assert.ok(!/still/.test(d.code!.body), 'the open comment was appended as final');
  assert.ok(/still/.test(d.code!.tail), 'the open comment is not shown');
  d.apply(s.update('```c\nint a;\n/* open\nstill\n*/ int b;\nint c;\n'));
  assert.ok(/still/.test(d.code!.body));
  assert.ok(/hljs-comment/.test(d.code!.body));
  d.apply(s.update('```c\nint a;\n/* open\nstill\n*/ int b;\nint c;\n```\ndone', true));
  assert.equal(d.html(), renderMarkdown('```c\nint a;\n/* open\nstill\n*/ int b;\nint c;\n```\ndone'));
});

test('the model\'s HTML stays text at every point of the stream, inside code or not', () => {
  const evil = 'Look: <img src=x onerror="alert(1)"> and <script>alert(2)</script>\n\n<div onclick="x()">block html</div>\n\n'
    + '<iframe src="javascript:alert(3)"></iframe>\n\n```html\n<script>alert(4)</script>\n```\n[click](javascript:alert(5)) ![pic](x" onerror="alert(6))\n';
  const s = new StreamMarkdown();
  const d = new Doc();
  for (let i = 1; i <= evil.length; i++) {
    d.apply(s.update(evil.slice(0, i), i === evil.length));
    const h = d.html();
    assert.doesNotMatch(h, /<(img|script|iframe|div onclick)\b/i, `after ${i} characters: ${h}`);
    assert.doesNotMatch(h, /<[a-z][^>]*\s(on\w+|href|src)\s*=/i, `after ${i} characters: ${h}`);
  }
  assert.match(d.html(), /&lt;img src=x onerror=/);
  assert.match(d.html(), /&lt;script&gt;alert\(2\)/);
});

/** Frames until a streaming reply shows all `length` characters, from `shown`. */
function framesToShow(shown: number, length: number): number {
  let frames = 0;
  for (let n = shown; n < length; frames++) {
    const next = revealTo(n, length, true);
    assert.ok(next > n && next <= length, `revealTo(${n}, ${length}) = ${next}`);
    n = next;
  }
  return frames;
}

test('a streamed chunk is on screen within three frames of arriving; a burst unrolls', () => {
  // The fake model's chunks (160 characters) and smaller ones: the reply's end, once it came,
  // is on screen about 50 ms later whatever follows it (the turn's end may come much later).
  for (const chunk of [1, 4, 40, 64, 65, 160, 200]) assert.ok(framesToShow(1000, 1000 + chunk) <= 3, `${chunk} characters: ${framesToShow(1000, 1000 + chunk)} frames`);
  // A burst of 8,000 characters is not shown whole in one frame, and not over more than a few.
  assert.ok(revealTo(0, 8000, true) < 8000);
  assert.ok(framesToShow(0, 8000) <= 9, `${framesToShow(0, 8000)} frames`);
  // A finished reply shows whole at once; nothing shows beyond the text.
  assert.equal(revealTo(10, 5000, false), 5000);
  assert.equal(revealTo(5000, 5000, true), 5000);
  assert.equal(revealTo(6000, 5000, true), 5000);
});
