// string-utils: case conversion, slugs, truncation, padding, wrapping and
// escaping.
//
//   const s = requireVendor("string-utils");
//   s.slugify("Héllo, World!")        // "hello-world"
//   s.camelCase("user_id")            // "userId"
//   s.snakeCase("parseHTTPResponse")  // "parse_http_response"
//   s.truncate("a long sentence", 9)  // "a long s…"
//
// Every function takes any value and applies String() to it first.
// See README.md.
"use strict";

const str = (v) => (v === null || v === undefined ? "" : String(v));

/** Remove diacritics: "Crème brûlée" -> "Creme brulee". */
function deburr(s) {
  return str(s).normalize("NFD").replace(/[\u0300-\u036f]/g, "");
}

/**
 * Split into words at spaces, punctuation, and case changes:
 * "parseHTTPResponse2xx" -> ["parse", "HTTP", "Response", "2", "xx"].
 */
function words(s) {
  return (
    str(s).match(
      /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{Lt}\p{Ll}*|\p{Lo}+|\p{N}+/gu,
    ) || []
  );
}

const lower = (w) => w.toLowerCase();
const upperFirst = (w) => (w ? w[0].toUpperCase() + w.slice(1) : w);
const capitalizeWord = (w) => upperFirst(w.toLowerCase());

/** "Hello world" -> "helloWorld" */
function camelCase(s) {
  return words(s)
    .map((w, i) => (i === 0 ? lower(w) : capitalizeWord(w)))
    .join("");
}

/** "hello world" -> "HelloWorld" */
function pascalCase(s) {
  return words(s).map(capitalizeWord).join("");
}

/** "Hello World" -> "hello_world" */
function snakeCase(s) {
  return words(s).map(lower).join("_");
}

/** "Hello World" -> "hello-world" */
function kebabCase(s) {
  return words(s).map(lower).join("-");
}

/** "hello world" -> "HELLO_WORLD" */
function constantCase(s) {
  return words(s)
    .map((w) => w.toUpperCase())
    .join("_");
}

const SMALL_WORDS = new Set(
  "a an and as at but by for in nor of on or per the to vs via".split(" "),
);

/**
 * "the lord of the rings" -> "The Lord of the Rings": words capitalized,
 * small words lower-case except first and last. Spacing and punctuation
 * are kept.
 */
function titleCase(s) {
  const text = str(s);
  const parts = text.split(/(\s+)/);
  const wordIndexes = parts.map((p, i) => (/\S/.test(p) ? i : -1)).filter((i) => i >= 0);
  const first = wordIndexes[0];
  const last = wordIndexes[wordIndexes.length - 1];
  return parts
    .map((p, i) => {
      if (!/\S/.test(p)) return p;
      const bare = p.toLowerCase().replace(/[^\p{L}]/gu, "");
      if (i !== first && i !== last && SMALL_WORDS.has(bare)) return p.toLowerCase();
      return p.replace(/\p{L}/u, (c) => c.toUpperCase());
    })
    .join("");
}

/** "hello World" -> "Hello world" */
function capitalize(s) {
  return capitalizeWord(str(s));
}

/**
 * URL-friendly slug: "Héllo, World!" -> "hello-world".
 * @param {object} [options] separator ("-"), lower (true), maxLength
 */
function slugify(s, options = {}) {
  const sep = options.separator === undefined ? "-" : options.separator;
  let out = deburr(s)
    .replace(/&/g, " and ")
    .replace(/['’]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, sep);
  if (options.lower !== false) out = out.toLowerCase();
  if (sep) {
    const edge = new RegExp("^" + escapeRegExp(sep) + "+|" + escapeRegExp(sep) + "+$", "g");
    out = out.replace(edge, "");
  }
  if (options.maxLength !== undefined && out.length > options.maxLength) {
    out = out.slice(0, options.maxLength);
    if (sep) out = out.replace(new RegExp(escapeRegExp(sep) + "+$"), "");
  }
  return out;
}

/**
 * Shorten to at most `length` characters (code points), ending in the
 * ellipsis. Options: ellipsis ("…"), wordBoundary (false: cut at a space
 * when possible).
 */
function truncate(s, length, options = {}) {
  const chars = [...str(s)];
  if (!(length >= 0)) throw new RangeError("string-utils: truncate length must be >= 0");
  if (chars.length <= length) return chars.join("");
  const ellipsis = options.ellipsis === undefined ? "…" : String(options.ellipsis);
  const room = Math.max(0, length - [...ellipsis].length);
  let cut = chars.slice(0, room).join("");
  if (options.wordBoundary) {
    const space = cut.search(/\s\S*$/);
    if (space > 0) cut = cut.slice(0, space);
  }
  return cut.replace(/\s+$/, "") + ellipsis;
}

function fillTo(count, fill) {
  const f = fill === undefined || fill === "" ? " " : String(fill);
  return count > 0 ? f.repeat(Math.ceil(count / f.length)).slice(0, count) : "";
}

/** Pad on the left to `length` characters (code points). */
function padStart(s, length, fill) {
  const text = str(s);
  return fillTo(length - [...text].length, fill) + text;
}

/** Pad on the right to `length` characters (code points). */
function padEnd(s, length, fill) {
  const text = str(s);
  return text + fillTo(length - [...text].length, fill);
}

/** Center within `length` characters (extra space goes right). */
function center(s, length, fill) {
  const text = str(s);
  const total = length - [...text].length;
  if (total <= 0) return text;
  const left = Math.floor(total / 2);
  return fillTo(left, fill) + text + fillTo(total - left, fill);
}

/** Word-wrap to lines of at most `width` characters (long words are split). */
function wrap(s, width = 80) {
  if (!(width >= 1)) throw new RangeError("string-utils: wrap width must be >= 1");
  return str(s)
    .split("\n")
    .map((para) => {
      const lines = [];
      let line = "";
      for (const word of para.split(/\s+/).filter(Boolean)) {
        let w = word;
        while ([...w].length > width) {
          if (line) {
            lines.push(line);
            line = "";
          }
          const cps = [...w];
          lines.push(cps.slice(0, width).join(""));
          w = cps.slice(width).join("");
        }
        if (!w) continue;
        if (!line) line = w;
        else if ([...line].length + 1 + [...w].length <= width) line += " " + w;
        else {
          lines.push(line);
          line = w;
        }
      }
      if (line || lines.length === 0) lines.push(line);
      return lines.join("\n");
    })
    .join("\n");
}

const HTML_ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const HTML_UNESCAPES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** Escape & < > " ' for HTML. */
function escapeHtml(s) {
  return str(s).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** Decode the common named entities and numeric ones (&#39; &#x27;). */
function unescapeHtml(s) {
  return str(s).replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e) => {
    if (e[0] === "#") {
      const cp = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return cp >= 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
    }
    const named = HTML_UNESCAPES[e.toLowerCase()];
    return named === undefined ? m : named;
  });
}

/** Escape RegExp syntax characters: new RegExp(escapeRegExp("a.b")). */
function escapeRegExp(s) {
  return str(s).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** plural(1, "file") -> "1 file"; plural(3, "box", "boxes") -> "3 boxes". */
function plural(count, singular, pluralForm) {
  const word = count === 1 ? singular : pluralForm === undefined ? singular + "s" : pluralForm;
  return count + " " + word;
}

module.exports = {
  words,
  camelCase,
  pascalCase,
  snakeCase,
  kebabCase,
  constantCase,
  titleCase,
  capitalize,
  deburr,
  slugify,
  truncate,
  padStart,
  padEnd,
  center,
  wrap,
  escapeHtml,
  unescapeHtml,
  escapeRegExp,
  plural,
};
