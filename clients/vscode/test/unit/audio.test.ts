import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audioMimeType, transcriptText } from '../../src/pure/audio';

test('audioMimeType names only the types agentd accepts', () => {
  assert.equal(audioMimeType('/tmp/memo.WAV'), 'audio/wav');
  assert.equal(audioMimeType('a.webm'), 'audio/webm');
  assert.equal(audioMimeType('a.m4a'), 'audio/mp4');
  assert.equal(audioMimeType('a.opus'), 'audio/ogg');
  assert.equal(audioMimeType('notes.txt'), undefined);
  assert.equal(audioMimeType('wav'), undefined);
  assert.equal(audioMimeType('/etc/passwd'), undefined);
});

test('transcriptText trims and drops a blank transcript', () => {
  assert.equal(transcriptText('  hello there\n'), 'hello there');
  assert.equal(transcriptText(' \n'), '');
  assert.equal(transcriptText(undefined), '');
});
