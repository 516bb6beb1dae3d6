// The transcript's following of its end (src/pure/follow.ts): kept while the webview's own
// frames add any amount of content, given up only by the user scrolling up, taken up again at
// the end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Follow } from '../../src/pure/follow';

test('a frame that adds more than a screen keeps the end in sight (a chat shown again whole)', () => {
  const f = new Follow();
  // The chat shown again: its reply laid out first at the browser's estimate (all fits)...
  assert.equal(f.target({ top: 0, height: 145, client: 145 }), undefined);
  // ...and a frame later at its real height, 122 px more than the box shows.
  assert.equal(f.target({ top: 0, height: 267, client: 175 }), 92);
  f.scrolledTo(92);
  f.scrolled({ top: 92, height: 267, client: 175 });
  // More lines stream in: the end stays in sight.
  assert.equal(f.target({ top: 92, height: 1633, client: 175 }), 1458);
});

test('the webview\'s own scroll is not the user\'s, even when the content grew before its event', () => {
  const f = new Follow();
  f.scrolledTo(500);
  f.scrolled({ top: 500, height: 2000, client: 200 });
  assert.equal(f.following, true);
  assert.equal(f.target({ top: 500, height: 2000, client: 200 }), 1800);
});

test('the webview\'s own scroll is told by its position alone, once', () => {
  const f = new Follow();
  f.scrolledTo(300);
  assert.equal(f.own(120), false);
  assert.equal(f.own(300), true);
  assert.equal(f.own(300), false, 'a second event at the same place is the user\'s');
});

test('the user scrolling up stops the following; back at the end it follows again', () => {
  const f = new Follow();
  f.scrolledTo(800);
  f.scrolled({ top: 800, height: 1000, client: 200 });
  f.scrolled({ top: 0, height: 1000, client: 200 });
  assert.equal(f.following, false);
  assert.equal(f.target({ top: 0, height: 1400, client: 200 }), undefined, 'the reader was pulled down');
  // The browser keeping a block in place as one above it grows moves the box down, short of the end.
  f.scrolled({ top: 40, height: 1440, client: 200 });
  assert.equal(f.following, false);
  // The user scrolls back down to (nearly) the end.
  f.scrolled({ top: 1236, height: 1440, client: 200 });
  assert.equal(f.following, true);
  assert.equal(f.target({ top: 1236, height: 1500, client: 200 }), 1300);
});

test('a card brought into view at the end resumes the following; one above the end does not', () => {
  const f = new Follow();
  f.scrolled({ top: 0, height: 1000, client: 200 });
  f.scrolled({ top: 0, height: 1000, client: 200 });
  f.scrolledTo(0);
  f.scrolled({ top: 0, height: 1000, client: 200 }); // own: ignored
  f.scrolled({ top: 10, height: 1000, client: 200 });
  f.scrolled({ top: 0, height: 1000, client: 200 });
  assert.equal(f.following, false);
  f.showed({ top: 780, height: 1000, client: 200 });
  assert.equal(f.following, true);
  f.scrolled({ top: 780, height: 1000, client: 200 });
  assert.equal(f.following, true, 'the card\'s own scroll event read as the user\'s');
  f.scrolled({ top: 300, height: 1000, client: 200 });
  f.showed({ top: 500, height: 1000, client: 200 });
  assert.equal(f.following, false);
});

test('another chat shown follows its end again', () => {
  const f = new Follow();
  f.scrolled({ top: 600, height: 1000, client: 200 });
  f.scrolled({ top: 100, height: 1000, client: 200 });
  assert.equal(f.following, false);
  f.reset();
  assert.equal(f.target({ top: 0, height: 1000, client: 200 }), 800);
});
