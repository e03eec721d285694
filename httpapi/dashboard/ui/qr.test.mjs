// Unit tests of qr.js (Node's test runner: node --test): the Reed-Solomon
// code, the format and version bits against the standard's tables, and
// whole symbols against Debian's qrencode (package qrencode), named by
// STRONGBOX_QRENCODE, mask for mask.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dataCodewords, formatBits, qrMatrix, reedSolomon, versionBits } from './qr.js';

test('reedSolomon gives the EC codewords of the standard\'s worked examples', () => {
  for (const tc of [
    // "HELLO WORLD" in alphanumeric mode, version 1-M (the tutorial example
    // of ISO/IEC 18004's procedure): 16 data codewords, 10 EC codewords.
    { data: [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17], n: 10,
      want: [196, 35, 39, 119, 235, 215, 231, 226, 93, 23] },
    // ISO/IEC 18004 Annex I: "01234567" in numeric mode, version 1-M.
    { data: [16, 32, 12, 86, 97, 128, 236, 17, 236, 17, 236, 17, 236, 17, 236, 17], n: 10,
      want: [165, 36, 212, 193, 237, 54, 199, 135, 44, 85] },
  ]) {
    assert.deepEqual(reedSolomon(tc.data, tc.n), tc.want, `reedSolomon(${tc.data}, ${tc.n})`);
  }
});

test('formatBits of level M match the standard\'s table', () => {
  const want = ['101010000010010', '101000100100101', '101111001111100', '101101101001011',
    '100010111111001', '100000011001110', '100111110010111', '100101010100000'];
  for (let mask = 0; mask < 8; mask++) {
    assert.equal(formatBits(mask).toString(2).padStart(15, '0'), want[mask], `formatBits(${mask})`);
  }
});

test('versionBits match the standard\'s table', () => {
  for (const [v, want] of [[7, 0x07c94], [8, 0x085bc], [9, 0x09a99], [10, 0x0a4d3]]) {
    assert.equal(versionBits(v), want, `versionBits(${v})`);
  }
});

test('qrMatrix picks the smallest version, and refuses what version 10 cannot hold', () => {
  const sizeOf = (n) => qrMatrix('a'.repeat(n)).length;
  assert.equal(sizeOf(14), 21, '14 bytes: version 1');
  assert.equal(sizeOf(15), 25, '15 bytes: version 2');
  const uri = 'otpauth://totp/Acme%20Co:someone.long@example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Acme%20Co';
  assert.equal(qrMatrix(uri).length, 17 + 4 * 6, `a ${uri.length}-byte URI: version 6`);
  assert.equal(dataCodewords(10), 216);
  assert.equal(sizeOf(213), 57, '213 bytes: version 10');
  assert.throws(() => qrMatrix('a'.repeat(214)), /do not fit/);
});

// qrencodeMatrix returns qrencode's symbol of text (byte mode, level M,
// version at least v) as rows of booleans.
function qrencodeMatrix(bin, text, v) {
  const out = execFileSync(bin, ['-8', '-l', 'M', '-v', String(v), '-m', '0', '-t', 'ASCII', '-o', '-', text], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l !== '').map((l) => Array.from(l.match(/../g), (p) => p === '##'));
}

// maskOf reads the mask of a level-M symbol from its first format copy.
function maskOf(m) {
  let bits = 0;
  const cells = [[0, 8], [1, 8], [2, 8], [3, 8], [4, 8], [5, 8], [7, 8], [8, 8], [8, 7], [8, 5], [8, 4], [8, 3], [8, 2], [8, 1], [8, 0]];
  cells.forEach(([r, c], i) => { if (m[r][c]) bits |= 1 << i; });
  for (let mask = 0; mask < 8; mask++) if (formatBits(mask) === bits) return mask;
  throw new Error(`no level-M mask has the format bits ${bits.toString(2)}`);
}

test('qrMatrix draws the symbol qrencode draws, module for module', { skip: !process.env.STRONGBOX_QRENCODE && 'STRONGBOX_QRENCODE is unset (Debian package qrencode: STRONGBOX_QRENCODE=/usr/bin/qrencode)' }, () => {
  const bin = process.env.STRONGBOX_QRENCODE;
  const texts = [
    'a',
    'otpauth://totp/Acme:ann@example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Acme',
    'otpauth://totp/%C3%9Cn%C3%AF%20Co:a.rather.long.address+tag@subdomain.example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=%C3%9Cn%C3%AF%20Co',
  ];
  let masks = new Set();
  for (const text of texts) {
    for (let v = 1; v <= 10; v++) {
      const want = qrencodeMatrix(bin, text, v);
      const version = (want.length - 17) / 4;
      if (version !== v) continue; // the text needs a larger version
      const mask = maskOf(want);
      masks.add(mask);
      const got = qrMatrix(text, { version: v, mask });
      assert.equal(got.length, want.length, `${text} v${v}: size`);
      for (let r = 0; r < want.length; r++) {
        assert.deepEqual(got[r].map(Number).join(''), want[r].map(Number).join(''), `${text} v${v} mask ${mask}: row ${r}`);
      }
    }
  }
  assert.ok(masks.size >= 3, `only masks ${[...masks]} were compared`);
});
