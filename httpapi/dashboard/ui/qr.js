// A QR code encoder (ISO/IEC 18004), enough for an otpauth URI: byte mode,
// error correction level M, versions 1 to 10 (up to 213 bytes), written by
// hand so that the dashboard needs no library. qrMatrix returns the
// modules; qrSVG draws them. The steps are the standard's: the bit stream
// (mode, count, data, terminator, pad bytes), Reed-Solomon over GF(256)
// (polynomial 0x11D) per block, interleaving, the function patterns, the
// zigzag placement, the eight masks scored by the four penalty rules, and
// the BCH-coded format (and, from version 7, version) information.

// Level M, versions 1..10: [EC codewords per block, blocks of the first
// group, data codewords of each, blocks of the second group (one more data
// codeword each)].
const blocksM = [null,
  [10, 1, 16, 0], [16, 1, 28, 0], [26, 1, 44, 0], [18, 2, 32, 0], [24, 2, 43, 0],
  [16, 4, 27, 0], [18, 4, 31, 0], [22, 2, 38, 2], [22, 3, 36, 2], [26, 4, 43, 1]];

// The centres of the alignment patterns of versions 1..10.
const alignments = [null, [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34],
  [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50]];

export const maxVersion = 10;

// dataCodewords returns how many data codewords version v holds at level M.
export function dataCodewords(v) {
  const [, b1, d1, b2] = blocksM[v];
  return b1 * d1 + b2 * (d1 + 1);
}

// The field GF(256) of the standard: exp and log tables over 0x11D.
const exp = new Uint8Array(512);
const log = new Uint8Array(256);
{
  let x = 1;
  for (let i = 0; i < 255; i++) {
    exp[i] = x;
    log[x] = i;
    x <<= 1;
    if (x & 0x100) x ^= 0x11d;
  }
  for (let i = 255; i < 512; i++) exp[i] = exp[i - 255];
}

function mul(a, b) {
  return a === 0 || b === 0 ? 0 : exp[log[a] + log[b]];
}

// rsGenerator returns the generator polynomial of degree n, (x - α^0)…(x -
// α^(n-1)), its coefficients highest first without the leading 1.
function rsGenerator(n) {
  let g = [1];
  for (let i = 0; i < n; i++) {
    const next = new Array(g.length + 1).fill(0);
    for (let j = 0; j < g.length; j++) {
      next[j] ^= g[j];
      next[j + 1] ^= mul(g[j], exp[i]);
    }
    g = next;
  }
  return g.slice(1);
}

// reedSolomon returns the n error correction codewords of data: the
// remainder of data·x^n divided by the generator.
export function reedSolomon(data, n) {
  const g = rsGenerator(n);
  const rem = new Array(n).fill(0);
  for (const d of data) {
    const factor = d ^ rem.shift();
    rem.push(0);
    for (let i = 0; i < n; i++) rem[i] ^= mul(g[i], factor);
  }
  return rem;
}

// bch returns data (of k bits) followed by its BCH remainder under the
// generator poly (of degree deg).
function bch(data, poly, deg) {
  let r = data << deg;
  for (let i = 31 - Math.clz32(r); i >= deg; i--) if ((r >>> i) & 1) r ^= poly << (i - deg);
  return (data << deg) | r;
}

// formatBits returns the 15 format bits of level M (bits 00) and mask.
export function formatBits(mask) {
  return bch(mask & 7, 0x537, 10) ^ 0x5412;
}

// versionBits returns the 18 version bits of version v (7 and up).
export function versionBits(v) {
  return bch(v, 0x1f25, 12);
}

// utf8 returns the bytes of text.
function utf8(text) {
  return Array.from(new TextEncoder().encode(text));
}

// codewords returns the data and EC codewords of bytes in version v,
// interleaved as they are placed.
function codewords(bytes, v) {
  const bits = [];
  const put = (value, n) => {
    for (let i = n - 1; i >= 0; i--) bits.push((value >>> i) & 1);
  };
  put(0b0100, 4); // byte mode
  put(bytes.length, v < 10 ? 8 : 16);
  for (const b of bytes) put(b, 8);
  const capacity = dataCodewords(v) * 8;
  put(0, Math.min(4, capacity - bits.length)); // terminator
  while (bits.length % 8) bits.push(0);
  const data = [];
  for (let i = 0; i < bits.length; i += 8) data.push(parseInt(bits.slice(i, i + 8).join(''), 2));
  for (let pad = 0xec; data.length < capacity / 8; pad ^= 0xec ^ 0x11) data.push(pad);
  const [ec, b1, d1, b2] = blocksM[v];
  const blocks = [];
  let at = 0;
  for (let i = 0; i < b1 + b2; i++) {
    const len = i < b1 ? d1 : d1 + 1;
    const d = data.slice(at, at + len);
    at += len;
    blocks.push({ d, e: reedSolomon(d, ec) });
  }
  const out = [];
  for (let i = 0; i <= d1; i++) for (const b of blocks) if (i < b.d.length) out.push(b.d[i]);
  for (let i = 0; i < ec; i++) for (const b of blocks) out.push(b.e[i]);
  return out;
}

// The eight mask conditions (row i, column j).
const masks = [
  (i, j) => (i + j) % 2 === 0,
  (i) => i % 2 === 0,
  (i, j) => j % 3 === 0,
  (i, j) => (i + j) % 3 === 0,
  (i, j) => (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0,
  (i, j) => ((i * j) % 2) + ((i * j) % 3) === 0,
  (i, j) => (((i * j) % 2) + ((i * j) % 3)) % 2 === 0,
  (i, j) => (((i + j) % 2) + ((i * j) % 3)) % 2 === 0,
];

// grid is a QR symbol being built: dark modules, and which ones are
// function patterns (not data, not masked).
function grid(v) {
  const size = 17 + 4 * v;
  const dark = Array.from({ length: size }, () => new Array(size).fill(false));
  const fn = Array.from({ length: size }, () => new Array(size).fill(false));
  const set = (r, c, on) => {
    dark[r][c] = on;
    fn[r][c] = true;
  };
  return { v, size, dark, fn, set };
}

// drawFunctions draws the finder, separator, timing and alignment
// patterns, the dark module, and reserves the format and version areas.
function drawFunctions(g) {
  const { size, set } = g;
  for (const [r0, c0] of [[0, 0], [0, size - 7], [size - 7, 0]]) {
    for (let r = -1; r <= 7; r++) {
      for (let c = -1; c <= 7; c++) {
        const rr = r0 + r;
        const cc = c0 + c;
        if (rr < 0 || cc < 0 || rr >= size || cc >= size) continue;
        const ring = Math.max(Math.abs(r - 3), Math.abs(c - 3));
        set(rr, cc, ring !== 2 && ring !== 4);
      }
    }
  }
  for (let i = 8; i < size - 8; i++) {
    set(6, i, i % 2 === 0);
    set(i, 6, i % 2 === 0);
  }
  const pos = alignments[g.v];
  for (const r of pos) {
    for (const c of pos) {
      if ((r === 6 && c === 6) || (r === 6 && c === size - 7) || (r === size - 7 && c === 6)) continue;
      for (let dr = -2; dr <= 2; dr++) {
        for (let dc = -2; dc <= 2; dc++) set(r + dr, c + dc, Math.max(Math.abs(dr), Math.abs(dc)) !== 1);
      }
    }
  }
  drawFormat(g, 0);
  if (g.v >= 7) drawVersion(g);
}

// drawFormat writes the format bits of mask in both copies, and the dark
// module beside the lower one.
function drawFormat(g, mask) {
  const { size, set } = g;
  const bits = formatBits(mask);
  const bit = (i) => ((bits >>> i) & 1) === 1;
  for (let i = 0; i <= 5; i++) set(i, 8, bit(i));
  set(7, 8, bit(6));
  set(8, 8, bit(7));
  set(8, 7, bit(8));
  for (let i = 9; i < 15; i++) set(8, 14 - i, bit(i));
  for (let i = 0; i < 8; i++) set(8, size - 1 - i, bit(i));
  for (let i = 8; i < 15; i++) set(size - 15 + i, 8, bit(i));
  set(size - 8, 8, true);
}

// drawVersion writes the two copies of the version bits.
function drawVersion(g) {
  const bits = versionBits(g.v);
  for (let i = 0; i < 18; i++) {
    const on = ((bits >>> i) & 1) === 1;
    const a = g.size - 11 + (i % 3);
    const b = Math.floor(i / 3);
    g.set(b, a, on);
    g.set(a, b, on);
  }
}

// placeData places the codewords' bits in the zigzag order: pairs of
// columns from the right, up then down, skipping the timing column.
function placeData(g, words) {
  const { size, dark, fn } = g;
  let k = 0;
  const total = words.length * 8;
  for (let right = size - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    const upward = ((right + 1) & 2) === 0;
    for (let n = 0; n < size; n++) {
      const r = upward ? size - 1 - n : n;
      for (let j = 0; j < 2; j++) {
        const c = right - j;
        if (fn[r][c]) continue;
        if (k < total) dark[r][c] = ((words[k >>> 3] >>> (7 - (k & 7))) & 1) === 1;
        k++;
      }
    }
  }
}

function applyMask(g, mask) {
  const cond = masks[mask];
  for (let r = 0; r < g.size; r++) {
    for (let c = 0; c < g.size; c++) if (!g.fn[r][c] && cond(r, c)) g.dark[r][c] = !g.dark[r][c];
  }
}

// penalty scores a masked symbol by the standard's four rules: runs of 5
// or more of one colour, 2×2 blocks, finder-like 1:1:3:1:1 patterns with
// 4 light modules on a side, and the balance of dark modules.
export function penalty(dark) {
  const size = dark.length;
  let score = 0;
  const line = (get) => {
    let run = 1;
    for (let i = 1; i <= size; i++) {
      if (i < size && get(i) === get(i - 1)) {
        run++;
        continue;
      }
      if (run >= 5) score += run - 2;
      run = 1;
    }
    for (let i = 0; i + 11 <= size; i++) {
      const s = Array.from({ length: 11 }, (_, k) => (get(i + k) ? 1 : 0)).join('');
      if (s === '10111010000' || s === '00001011101') score += 40;
    }
  };
  for (let r = 0; r < size; r++) line((c) => dark[r][c]);
  for (let c = 0; c < size; c++) line((r) => dark[r][c]);
  let darkCount = 0;
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      if (dark[r][c]) darkCount++;
      if (r + 1 < size && c + 1 < size) {
        const v = dark[r][c];
        if (dark[r][c + 1] === v && dark[r + 1][c] === v && dark[r + 1][c + 1] === v) score += 3;
      }
    }
  }
  const percent = (darkCount * 100) / (size * size);
  score += Math.floor(Math.abs(percent - 50) / 5) * 10;
  return score;
}

// qrMatrix returns the modules of text's QR code (rows of booleans, true
// dark, without the quiet zone) at level M in the smallest version that
// holds it, or in version (if given, and large enough), with mask (if
// given) else the one of least penalty. It throws for text over the
// capacity of version 10.
export function qrMatrix(text, { version, mask } = {}) {
  const bytes = utf8(text);
  let v = version || 1;
  while (v <= maxVersion && 4 + (v < 10 ? 8 : 16) + 8 * bytes.length > dataCodewords(v) * 8) v++;
  if (v > maxVersion) throw new Error(`qr: ${bytes.length} bytes do not fit in a version ${maxVersion} code`);
  const words = codewords(bytes, v);
  const build = (m) => {
    const g = grid(v);
    drawFunctions(g);
    placeData(g, words);
    applyMask(g, m);
    drawFormat(g, m);
    return g.dark;
  };
  if (mask !== undefined) return build(mask);
  let best = null;
  let bestScore = Infinity;
  for (let m = 0; m < 8; m++) {
    const d = build(m);
    const s = penalty(d);
    if (s < bestScore) {
      best = d;
      bestScore = s;
    }
  }
  return best;
}

const svgNS = 'http://www.w3.org/2000/svg';

// qrSVG returns an <svg> of text's QR code, one path of unit squares with
// a quiet zone of 4 modules, titled label (its accessible name).
export function qrSVG(text, label) {
  const m = qrMatrix(text);
  const n = m.length + 8;
  let d = '';
  m.forEach((row, r) => row.forEach((on, c) => {
    if (on) d += `M${c + 4} ${r + 4}h1v1h-1z`;
  }));
  const svg = document.createElementNS(svgNS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${n} ${n}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('shape-rendering', 'crispEdges');
  svg.setAttribute('class', 'qr');
  const bg = document.createElementNS(svgNS, 'rect');
  bg.setAttribute('width', String(n));
  bg.setAttribute('height', String(n));
  bg.setAttribute('fill', '#fff');
  const path = document.createElementNS(svgNS, 'path');
  path.setAttribute('d', d);
  path.setAttribute('fill', '#000');
  svg.append(bg, path);
  return svg;
}
