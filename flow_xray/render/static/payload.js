// payload.js -> FX.payload: the embedded trace data, inflated and decoded (render/payload.py).
// Public: read() -- a promise of the page's data object; unpack(embedded) -- the same from the
// parsed #fx-data object. Trace pages hold {"format": 3, "packed": base64 of gzip of: the
// length of a JSON document, the document (head, strings, columns), binary columns, then the
// detail texts, NUL-separated}; other pages hold their data as plain JSON, returned as it is.
// A million-call page must open in seconds and small, so the columns stay columns: numbers
// in typed arrays, span ids as their bytes, details as JSON text. Each row is an object
// holding only its index; its fields are getters on a shared prototype that read the
// columns (a detail is parsed from its text when read; one shared by many rows, once).

FX.payload = (function () {
  const FORMAT = 3;
  const SEPARATOR = 0;
  const ROW = Symbol("row");

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

  // Integers k stored as differences to the one before, standing for k / scale.
  function scaled(blob, offset, scale, count) {
    const words = new Int32Array(unplane(blob, offset, count).buffer);
    const out = new Float64Array(count);
    let k = 0;
    for (let i = 0; i < count; i++) {
      k += (words[2 * i] >>> 0) + words[2 * i + 1] * 4294967296;
      out[i] = k / scale;
    }
    return out;
  }

  const HEX = [];
  for (let b = 0; b < 256; b++) HEX.push((b < 16 ? "0" : "") + b.toString(16));

  // The function giving row i's value of one column (or undefined: the row lacks the field).
  function reader(column, body, blob, texts, readers) {
    const kind = column[1], values = column[2], count = body.count;
    if (kind === "c") return function () { return values; };
    if (kind === "v" || kind === "t") return function (i) { return values[i]; };
    if (kind === "s") {
      const strings = body.strings;
      const indexes = Int32Array.from(values);
      return function (i) { return indexes[i] < 0 ? null : strings[indexes[i]]; };
    }
    if (kind === "F" || kind === "N") {
      const numbers = kind === "F" ? floats(blob, values, count) : scaled(blob, values[0], values[1], count);
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

  function decode(body, blob, texts) {
    const count = body.count;
    function Row(i) { this[ROW] = i; }
    const readers = {};
    for (const column of body.columns) readers[column[0]] = reader(column, body, blob, texts, readers);
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

  return { read: read, unpack: unpack };
})();
