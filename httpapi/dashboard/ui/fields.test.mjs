import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APIError } from './api.js';
import { editable, fieldTypes, isBuiltin, moveField, newField, payload, removeField, rowErrors, shape } from './fields.js';

const id = { id: 'text3208210256', name: 'id', type: 'text', system: true, primaryKey: true, min: 15, max: 15 };
const created = { id: 'autodate2990389176', name: 'created', type: 'autodate', system: false, onCreate: true, onUpdate: false };
const nick = { id: 'text1', name: 'nick', type: 'text', system: false, required: false, hidden: false, presentable: false, min: 0, max: 0, pattern: '', autogeneratePattern: '', primaryKey: false };

test('only the types strongbox stores are offered', () => {
  assert.deepEqual(fieldTypes.map(([t]) => t), ['text', 'number', 'bool', 'email', 'url']);
});

test('isBuiltin: system fields and the created and updated dates', () => {
  assert.ok(isBuiltin(id));
  assert.ok(isBuiltin(created));
  assert.ok(!isBuiltin(nick));
  assert.ok(!isBuiltin({ name: 'seen', type: 'autodate' }), 'another autodate is not built in');
});

test('newField takes a free name and its type\'s options', () => {
  assert.deepEqual(newField('text', [id, nick]), { name: 'field', type: 'text', required: false, hidden: false, presentable: false, min: 0, max: 0, pattern: '' });
  assert.equal(newField('bool', [{ name: 'field' }, { name: 'field2' }]).name, 'field3');
  assert.deepEqual(newField('number', []), { name: 'field', type: 'number', required: false, hidden: false, presentable: false, min: null, max: null, onlyInt: false });
  assert.deepEqual(newField('email', []), { name: 'field', type: 'email', required: false, hidden: false, presentable: false });
});

test('shape reads the inputs\' text as numbers, keeps the id, drops options of other types', () => {
  assert.deepEqual(shape({ id: 'n1', name: 'age', type: 'number', min: '0', max: '120', onlyInt: true, pattern: 'x' }),
    { id: 'n1', name: 'age', type: 'number', required: false, hidden: false, presentable: false, min: null, max: 120, onlyInt: true });
  assert.deepEqual(shape({ name: 'code', type: 'text', min: '2', max: '', pattern: '^[a-z]+$', onlyInt: true }),
    { name: 'code', type: 'text', required: false, hidden: false, presentable: false, min: 2, max: 0, pattern: '^[a-z]+$' });
});

test('moveField and removeField: reorder, and a built-in field is never removed', () => {
  const list = [id, nick, created];
  assert.deepEqual(moveField(list, 1, 1).map((f) => f.name), ['id', 'created', 'nick']);
  assert.deepEqual(moveField(list, 1, -1).map((f) => f.name), ['nick', 'id', 'created']);
  assert.equal(moveField(list, 0, -1), list, 'cannot move past the top');
  assert.equal(moveField(list, 2, 1), list, 'cannot move past the end');
  assert.deepEqual(removeField(list, 1).map((f) => f.name), ['id', 'created']);
  assert.equal(removeField(list, 0), list, 'a system field stays');
  assert.equal(removeField(list, 2), list, 'created stays');
});

test('payload sends the built-in fields as given and renamed fields with their id', () => {
  const out = payload([id, { ...nick, name: 'nickname' }, created]);
  assert.equal(out[0], id, 'the same object');
  assert.equal(out[2], created);
  assert.deepEqual(out[1], { id: 'text1', name: 'nickname', type: 'text', required: false, hidden: false, presentable: false, min: 0, max: 0, pattern: '' });
});

test('rowErrors puts data.fields.N.key on row N', () => {
  const err = new APIError(400, { message: 'Failed to update collection.', data: {
    fields: { 1: { name: { code: 'validation_match_invalid', message: 'Must be in a valid format.' } }, 2: { code: 'x', message: 'Built-in.' } },
    name: { code: 'y', message: 'Bad name.' },
  } });
  const { rows, rest } = rowErrors(err);
  assert.equal(rows.get(1).get('name'), 'Must be in a valid format.');
  assert.equal(rows.get(2).get(''), 'Built-in.');
  assert.deepEqual(rest, ['name: Bad name.'], 'another key, named');
  assert.equal(rowErrors(new Error('offline')).rows.size, 0);
});

test('a field of a type not offered is kept exactly, not reshaped', () => {
  const avatar = { id: 'file376926767', name: 'avatar', type: 'file', maxSelect: 1, maxSize: 0, mimeTypes: ['image/png'], protected: false, required: false };
  assert.ok(!editable(avatar));
  assert.ok(!editable(id), 'nor a built-in one');
  assert.ok(editable(nick));
  const out = payload([id, avatar, nick]);
  assert.equal(out[1], avatar, 'the same object, its options kept');
});
