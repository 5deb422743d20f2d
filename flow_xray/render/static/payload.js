// payload.js -> FX.payload: the embedded trace data, inflated and decoded (render/payload.py).
// Public: read() -- a promise of the page's data object; unpack(embedded) -- the same from the
// parsed #fx-data object; canonicalText(row, key) -- the JSON text of a row's detail field
// (an object or array) when it is exactly JSON.stringify of the value read, else undefined
// (search.js searches that text instead of writing the value out again); isCanonical(text). Trace pages hold {"format": 4, "packed": base64 of gzip of: the
// length of a JSON document, the document (head, strings, columns), binary columns, then the
// detail texts, NUL-separated}; other pages hold their data as plain JSON, returned as it is.
// A million-call page must open in seconds and small, so the columns stay columns: numbers
// in typed arrays, span ids as their bytes, details as JSON text. Each row is an object
// holding only its index; its fields are getters on a shared prototype that read the
// columns (a detail is parsed from its text when read; one shared by many rows, once).

FX.payload = (function () {
  const FORMAT = 4;
  const SEPARATOR = 0;
  const ROW = Symbol("row");
  const RAW = Symbol("raw texts");

  function read() {
    return Promise.resolve().then(function () {
      return unpack(FX.util.readPayload());
    });
  }

  function unpack(embedded) {
    if (!embedded || typeof embedded.packed !== "string") return Promise.resolve(embedded);
    if (embedded.format !== FORMAT) {
      return Promise.reject(new Error("unknown packed data format " + String(embedded.format)));
    }
    return inflate(embedded.packed).then(function (buffer) {
      const bytes = new Uint8Array(buffer);
      const size = new DataView(buffer).getUint32(0, true);
      const utf8 = new TextDecoder();
      const body = JSON.parse(utf8.decode(bytes.subarray(4, 4 + size)));
      const blob = bytes.subarray(4 + size, 4 + size + body.blob);
      const texts = new Texts(utf8.decode(bytes.subarray(4 + size + body.blob)));
      if (texts.count !== body.texts) throw new Error("packed data holds " + texts.count + " texts, says " + body.texts);
      return decode(body, blob, texts);
    });
  }

  function bytesOf(base64) {
    const binary = atob(base64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  // The browser's own gzip (DecompressionStream): no code of ours inflates anything.
  function inflate(base64) {
    const stream = new Blob([bytesOf(base64)]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).arrayBuffer();
  }

  // The detail texts: one string, each text found by where it starts (after its NUL).
  function Texts(all) {
    const starts = [];
    for (let at = all.indexOf("\u0000"); at >= 0; at = all.indexOf("\u0000", at + 1)) starts.push(at + 1);
    this.all = all;
    this.starts = Int32Array.from(starts);
    this.count = starts.length;
  }
  Texts.prototype.at = function (i) {
    const end = i + 1 < this.count ? this.starts[i + 1] - 1 : this.all.length;
    return this.all.slice(this.starts[i], end);
  };

  // 8-byte values stored as 8 planes (render/payload.py _planes) back side by side.
  function unplane(blob, offset, count) {
    const out = new Uint8Array(count * 8);
    for (let b = 0; b < 8; b++) {
      const plane = blob.subarray(offset + b * count, offset + (b + 1) * count);
      for (let i = 0; i < count; i++) out[i * 8 + b] = plane[i];
    }
    return out;
  }

  function floats(blob, offset, count) {
    const bytes = unplane(blob, offset, count);
    return new Float64Array(bytes.buffer);  // (little-endian: every browser this page runs in)
  }

  // Integers k, stored as differences to the one before ("N") or as they are ("K").
  function integers(blob, offset, count, steps) {
    const words = new Int32Array(unplane(blob, offset, count).buffer);
    const out = new Float64Array(count);
    let k = 0;
    for (let i = 0; i < count; i++) {
      const word = (words[2 * i] >>> 0) + words[2 * i + 1] * 4294967296;
      k = steps ? k + word : word;
      out[i] = k;
    }
    return out;
  }

  // A column of integers k standing for k / scale ([offset, scale]), each stored less the k
  // of another column in the same row when a third value names it ([offset, scale, base]).
  function scaled(column, blob, count, ints) {
    const values = column[2], scale = values[1];
    const k = integers(blob, values[0], count, column[1] === "N");
    if (values.length > 2) {
      const base = ints[values[2]];
      for (let i = 0; i < count; i++) k[i] += base[i];
    }
    ints[column[0]] = k;
    if (scale === 1) return k;
    const out = new Float64Array(count);
    for (let i = 0; i < count; i++) out[i] = k[i] / scale;
    return out;
  }

  const HEX = [];
  for (let b = 0; b < 256; b++) HEX.push((b < 16 ? "0" : "") + b.toString(16));

  // The function giving row i's value of one column (or undefined: the row lacks the field).
  function reader(column, body, blob, texts, readers, ints) {
    const kind = column[1], values = column[2], count = body.count;
    if (kind === "c") return function () { return values; };
    if (kind === "v" || kind === "t") return function (i) { return values[i]; };
    if (kind === "s") {
      const strings = body.strings;
      const indexes = Int32Array.from(values);
      return function (i) { return indexes[i] < 0 ? null : strings[indexes[i]]; };
    }
    if (kind === "F" || kind === "N" || kind === "K") {
      const numbers = kind === "F" ? floats(blob, values, count) : scaled(column, blob, count, ints);
      return function (i) { const x = numbers[i]; return x !== x ? null : x; };
    }
    if (kind === "X") {
      const width = values[1];
      const bytes = blob.slice(values[0], values[0] + width * count);
      return function (i) {
        let out = "";
        for (let b = i * width; b < (i + 1) * width; b++) out += HEX[bytes[b]];
        return out;
      };
    }
    if (kind === "p") {
      const prefix = values[0], other = values[1];
      return function (i) { return prefix + readers[other](i); };
    }
    if (kind === "J") return function (i) { return JSON.parse(texts.at(values + i)); };
    if (kind === "j") {  // texts shared by many rows: each parsed once, the value shared
      const parsed = new Map();
      const indexes = Int32Array.from(values);
      return function (i) {
        const t = indexes[i];
        if (parsed.has(t)) return parsed.get(t);
        const value = JSON.parse(texts.at(t));
        parsed.set(t, value);
        return value;
      };
    }
    throw new Error("unknown packed column kind " + String(kind));
  }

  // For a column of texts each row its own ("J"), the function giving row i's text when it
  // is canonical (isCanonical, judged once per row: the next search skips the scan), else
  // undefined. (Texts shared by many rows are parsed once and their values shared:
  // search.js writes each such value out once.)
  function rawReader(column, texts, count) {
    const first = column[2];
    const absent = new Set(column[3]);
    const judged = new Int8Array(count);  // 0 not yet, 1 canonical, -1 not
    return function (i) {
      if (absent.size && absent.has(i)) return undefined;
      if (judged[i] < 0) return undefined;
      const text = texts.at(first + i);
      if (!judged[i]) judged[i] = isCanonical(text) ? 1 : -1;
      return judged[i] > 0 ? text : undefined;
    };
  }

  function decode(body, blob, texts) {
    const count = body.count;
    function Row(i) { this[ROW] = i; }
    const readers = {};
    const raw = {};
    const ints = {};  // each integer column's k, for the columns stored less it
    for (const column of body.columns) {
      readers[column[0]] = reader(column, body, blob, texts, readers, ints);
      if (column[1] === "J") raw[column[0]] = rawReader(column, texts, count);
    }
    Row.prototype[RAW] = raw;
    for (const column of body.columns) field(Row.prototype, column[0], readers[column[0]], column[3], count);
    const rows = new Array(count);
    for (let i = 0; i < count; i++) rows[i] = new Row(i);
    const data = body.head;
    data.nodes = rows;
    return data;
  }

  // A field every row reads from its column (undefined for the rows listed absent); a value
  // assigned to a row is kept on that row.
  function field(proto, key, read, absent, count) {
    let missing = null;
    if (absent.length) {
      missing = new Uint8Array(count);
      for (const i of absent) missing[i] = 1;
    }
    Object.defineProperty(proto, key, {
      configurable: true,
      enumerable: true, // for..in (copy as JSON) lists it like an own field
      get: missing ? function () {
        const i = this[ROW];
        return missing[i] ? undefined : read(i);
      } : function () {
        return read(this[ROW]);
      },
      set: function (value) {
        Object.defineProperty(this, key, { value: value, writable: true, enumerable: true, configurable: true });
      },
    });
  }

  function canonicalText(row, key) {
    const raw = row && row[RAW];
    if (!raw || !raw[key] || Object.prototype.hasOwnProperty.call(row, key)) return undefined;
    return raw[key](row[ROW]);
  }

  // Whether JSON.stringify(JSON.parse(text)) === text, for an object or array, judged by one
  // scan that accepts only a subset of JSON where that holds: no whitespace between tokens,
  // integers of at most 15 digits (never -0), strings without \u or \/ escapes, object keys
  // neither repeated nor made of digits only (JavaScript puts those first). False says
  // nothing (the value is then written out to be searched).
  const VALUE = 0, KEY = 1, COLON = 2, NEXT = 3;  // what isCanonical expects next

  function isCanonical(text) {
    const n = text.length;
    const first = text.charCodeAt(0);
    if (first !== 123 && first !== 91) return false;  // { [
    const stack = [];  // per open container: an array of its keys (objects) or null (arrays)
    let i = 0;
    let want = VALUE;  // NEXT: a comma or the close of the open container
    while (i < n) {
      const c = text.charCodeAt(i);
      if (want === COLON) {
        if (c !== 58) return false;
        i++;
        want = VALUE;
      } else if (want === NEXT) {
        if (!stack.length) return false;  // something after the whole value
        const inObject = stack[stack.length - 1] !== null;
        if (c === 44) {
          want = inObject ? KEY : VALUE;
        } else {
          if (c !== (inObject ? 125 : 93)) return false;
          stack.pop();
        }
        i++;
      } else if (c === 34) {  // a string: a key or a value
        const end = stringEnd(text, i);
        if (end < 0) return false;
        if (want === KEY) {
          const keys = stack[stack.length - 1];
          if (digitsOnly(text, i + 1, end)) return false;
          const key = text.slice(i + 1, end);
          if (keys.length && keys.indexOf(key) >= 0) return false;
          keys.push(key);
          want = COLON;
        } else {
          want = NEXT;
        }
        i = end + 1;
      } else if (want === KEY) {
        if (c !== 125 || text.charCodeAt(i - 1) !== 123) return false;  // only {}
        stack.pop();
        i++;
        want = NEXT;
      } else if (c === 123 || c === 91) {
        stack.push(c === 123 ? [] : null);
        i++;
        want = c === 123 ? KEY : VALUE;
      } else if (c === 93 && text.charCodeAt(i - 1) === 91) {  // []
        stack.pop();
        i++;
        want = NEXT;
      } else {
        i = literalEnd(text, i);
        if (i < 0) return false;
        want = NEXT;
      }
    }
    return want === NEXT && !stack.length;
  }

  function digitsOnly(text, start, end) {
    if (start === end) return false;
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c < 48 || c > 57) return false;
    }
    return true;
  }

  // Where true, false, null or an integer JavaScript writes the same (at most 15 digits, not
  // -0, not followed by a fraction or an exponent) starting at `i` ends; -1 if none does.
  function literalEnd(text, i) {
    if (text.startsWith("true", i) || text.startsWith("null", i)) return i + 4;
    if (text.startsWith("false", i)) return i + 5;
    let j = text.charCodeAt(i) === 45 ? i + 1 : i;  // -
    const lead = text.charCodeAt(j);
    if (lead === 48) {
      if (j > i) return -1;  // -0
      j++;
    } else if (lead >= 49 && lead <= 57) {
      const start = j;
      while (j < text.length && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
      if (j - start > 15) return -1;
    } else {
      return -1;
    }
    const after = text.charCodeAt(j);
    if (after === 46 || after === 101 || after === 69 || (after >= 48 && after <= 57)) return -1;  // . e E digit
    return j;
  }

  // The index of the quote closing the string opened at `start`, or -1 (an escape other
  // than \" \\ \b \f \n \r \t, a control character, a lone surrogate, or no end).
  function stringEnd(text, start) {
    for (let i = start + 1; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 34) return i;
      if (c < 32 || (c >= 0xdc00 && c <= 0xdfff)) return -1;  // (a lone low surrogate)
      if (c >= 0xd800 && c <= 0xdbff) {  // a high surrogate: with its low one
        const low = text.charCodeAt(i + 1);
        if (!(low >= 0xdc00 && low <= 0xdfff)) return -1;
        i++;
        continue;
      }
      if (c === 92) {
        const e = text.charCodeAt(i + 1);
        if (e !== 34 && e !== 92 && e !== 98 && e !== 102 && e !== 110 && e !== 114 && e !== 116) return -1;
        i++;
      }
    }
    return -1;
  }

  return { read: read, unpack: unpack, canonicalText: canonicalText, isCanonical: isCanonical };
})();
