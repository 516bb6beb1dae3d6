// Files dropped on the chat (src/pure/drop.ts): what is taken, and what is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DROP_MAX, droppedUris, IMAGE_MAX, imageType, validImageBlock } from '../../src/pure/drop';

test('a drop\'s URI list: comments and blank lines left out, at most DROP_MAX', () => {
  assert.deepEqual(droppedUris('# comment\r\nfile:///w/a.txt\r\n\r\nfile:///w/b.png\n'), ['file:///w/a.txt', 'file:///w/b.png']);
  assert.equal(droppedUris(Array.from({ length: 50 }, (_, i) => `file:///w/${i}`).join('\n')).length, DROP_MAX);
  assert.deepEqual(droppedUris(''), []);
});

test('only known image types are images', () => {
  assert.equal(imageType('/w/shot.PNG'), 'image/png');
  assert.equal(imageType('/w/a.jpeg'), 'image/jpeg');
  assert.equal(imageType('/w/a.svg'), '', 'an SVG is a document that can hold script, not an image block');
  assert.equal(imageType('/w/png'), '');
});

test('an image block from the webview passes only with a known type, base64 data and a bounded size', () => {
  assert.ok(validImageBlock({ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }));
  assert.ok(!validImageBlock({ type: 'image', mimeType: 'image/svg+xml', data: 'PHN2Zz4=' }));
  assert.ok(!validImageBlock({ type: 'image', mimeType: 'image/png', data: 'not base64!' }));
  assert.ok(!validImageBlock({ type: 'image', mimeType: 'image/png', data: 'A'.repeat(Math.ceil(IMAGE_MAX / 3) * 4 + 4) }));
  assert.ok(!validImageBlock({ type: 'image', mimeType: 'image/png' }));
  assert.ok(!validImageBlock({ type: 'text', text: 'x' }));
  assert.ok(!validImageBlock(null));
});
