// payload.js -> FX.payload: the embedded trace data, inflated and decoded (render/payload.py).
// Public: read() -- a promise of the page's data object; unpack(embedded) -- the same from the
// parsed #fx-data object. Trace pages hold {"format": 2, "packed": base64 of gzip of columns,
// then the detail texts, NUL-separated}; other pages hold their data as plain JSON, returned
// as it is.
// Rows come back as objects; their detail fields (inputs, output, attributes, events) are
// parsed from JSON text when first read, so a million-call page opens without parsing them all.

FX.payload = (function () {
  const FORMAT = 2;
  const SEPARATOR = "\u0000";
  const LAZY = new Set(["inputs", "output", "attributes", "events"]);
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
    return inflate(embedded.packed).then(function (text) {
      const cut = text.indexOf(SEPARATOR);
      const body = JSON.parse(cut < 0 ? text : text.slice(0, cut));
      const texts = cut < 0 ? [] : text.slice(cut + 1).split(SEPARATOR);
      if (texts.length !== body.texts) throw new Error("packed data holds " + texts.length + " texts, says " + body.texts);
      return decode(body, texts);
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
    return new Response(stream).text();
  }

  function decode(body, texts) {
    const count = body.count;
    const strings = body.strings;
    function Row() {}
    const rows = new Array(count);
    for (let i = 0; i < count; i++) {
      const row = new Row();
      row[ROW] = i;
      rows[i] = row;
    }
    for (const column of body.columns) {
      const key = column[0], kind = column[1], values = column[2];
      const absent = new Set(column[3]);
      // "J": each row its own text, from index `values` on; "j": an index per row.
      const textAt = kind === "J" ? function (i) { return values + i; } : function (i) { return values[i]; };
      if ((kind === "j" || kind === "J") && LAZY.has(key)) {
        lazyField(Row.prototype, key, textAt, absent, texts);
        continue;
      }
      if (kind === "c") {  // one value for every row
        for (let i = 0; i < count; i++) if (!(absent.size && absent.has(i))) rows[i][key] = values;
        continue;
      }
      if (kind === "f") {  // little-endian 64-bit floats, NaN for null
        const view = new DataView(bytesOf(values).buffer);
        for (let i = 0; i < count; i++) {
          if (absent.size && absent.has(i)) continue;
          const x = view.getFloat64(i * 8, true);
          rows[i][key] = Number.isNaN(x) ? null : x;
        }
        continue;
      }
      for (let i = 0; i < count; i++) {
        if (absent.size && absent.has(i)) continue;
        if (kind === "s") rows[i][key] = values[i] < 0 ? null : strings[values[i]];
        else if (kind === "j" || kind === "J") rows[i][key] = JSON.parse(texts[textAt(i)]);
        else rows[i][key] = values[i];  // "v" and "t"
      }
    }
    const data = body.head;
    data.nodes = rows;
    return data;
  }

  // A field read from JSON text on first use, then kept on the row as a plain value.
  function lazyField(proto, key, textAt, absent, texts) {
    function own(row, value) {
      Object.defineProperty(row, key, { value: value, writable: true, enumerable: true, configurable: true });
    }
    Object.defineProperty(proto, key, {
      configurable: true,
      enumerable: true, // for..in (copy as JSON) lists it like the eager fields
      get: function () {
        const i = this[ROW];
        if (absent.has(i)) return undefined;
        const value = JSON.parse(texts[textAt(i)]);
        own(this, value);
        return value;
      },
      set: function (value) {
        own(this, value);
      },
    });
  }

  return { read: read, unpack: unpack };
})();
