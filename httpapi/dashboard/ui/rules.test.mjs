import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyToggle, availableFields, completions, formState, insertCompletion, ruleState, ruleValue, stateText, tokenAt } from './rules.js';

test('ruleState tells locked, public and filter apart', () => {
  for (const [v, want] of [[null, 'locked'], [undefined, 'locked'], ['', 'public'], ['  ', 'public'], ['id = @request.auth.id', 'filter']]) {
    assert.equal(ruleState(v), want, `ruleState(${JSON.stringify(v)})`);
  }
  assert.equal(formState(true, 'verified = true'), 'locked');
  assert.equal(formState(false, ''), 'public');
});

test('ruleValue never saves the opposite of the state shown', () => {
  assert.equal(ruleValue(true, 'verified = true'), null, 'a locked rule is null whatever text is kept');
  assert.equal(ruleValue(false, ''), '', 'an unlocked empty rule is public');
  assert.equal(ruleValue(false, '  verified = true \n'), 'verified = true');
});

test('applyToggle: unlocking keeps the text, locking text asks first', () => {
  assert.deepEqual(applyToggle(true, 'a = 1'), { locked: false, text: 'a = 1', ask: false }, 'unlock');
  assert.deepEqual(applyToggle(false, ''), { locked: true, text: '', ask: false }, 'lock an empty rule');
  assert.deepEqual(applyToggle(false, ' '), { locked: true, text: ' ', ask: false }, 'lock a blank rule');
  assert.deepEqual(applyToggle(false, 'a = 1'), { locked: false, text: 'a = 1', ask: true }, 'lock a filter: ask');
  assert.deepEqual(applyToggle(false, 'a = 1', true), { locked: true, text: 'a = 1', ask: false }, 'lock a filter, confirmed');
  const back = applyToggle(applyToggle(false, 'a = 1', true).locked, 'a = 1');
  assert.deepEqual(back, { locked: false, text: 'a = 1', ask: false }, 'lock then unlock brings the text back');
});

test('stateText names the state, and an empty manage rule as not allowed', () => {
  assert.match(stateText('locked', 'listRule'), /superusers only/);
  assert.match(stateText('public', 'listRule'), /anyone/);
  assert.match(stateText('public', 'manageRule'), /cannot be public/);
  assert.match(stateText('filter', 'viewRule'), /Filter/);
});

test('tokenAt, completions and insertCompletion complete the word at the caret', () => {
  const names = ['@request.auth.id', '@request.auth.email', '@request.body.email', 'email', 'emailVisibility', 'verified'];
  assert.deepEqual(tokenAt('verified = true && @request.au', 30), { start: 19, word: '@request.au' });
  assert.deepEqual(tokenAt('a = ', 4), { start: 4, word: '' });
  assert.deepEqual(completions('@request.au', names), ['@request.auth.id', '@request.auth.email']);
  assert.deepEqual(completions('EM', names), ['email', 'emailVisibility'], 'case-insensitive');
  assert.deepEqual(completions('email', names), ['emailVisibility'], 'not the word itself');
  assert.deepEqual(completions('', names), [], 'nothing for no word');
  assert.equal(completions('e', names, 1).length, 1, 'at most max');
  assert.deepEqual(insertCompletion('id = @request.au && x', 16, '@request.auth.id'), { text: 'id = @request.auth.id && x', caret: 21 });
});

test('availableFields lists own fields, @request.auth.*, @request.body.* and @collection.*', () => {
  const users = { name: 'users', type: 'auth', fields: [{ name: 'id', system: true }, { name: 'tokenKey', system: true, hidden: true }, { name: 'nick' }] };
  const other = { name: 'staff', type: 'auth', fields: [{ name: 'level' }, { name: 'secret', hidden: true }] };
  const groups = Object.fromEntries(availableFields(users, [users, other]).map(([t, n]) => [t, n]));
  assert.deepEqual(groups['Fields of users'], ['id', 'nick'], 'a hidden system field is left out');
  assert.ok(groups['The signed-in record'].includes('@request.auth.level'), 'fields of any auth collection');
  assert.ok(!groups['The signed-in record'].includes('@request.auth.secret'), 'not a hidden one');
  assert.deepEqual(groups['The submitted body'], ['@request.body.nick']);
  assert.deepEqual(groups['Other collections (refused: this server joins none)'], ['@collection.users.', '@collection.staff.']);
});
