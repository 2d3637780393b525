/* In-browser certificate verifier: the same checks, in the same order and with the same
 * reason codes, as pytools/verify.py (verify_bytes). Pure logic, no DOM, no network; it
 * also runs under Node for the tests. Numbers: integers are kept as BigInt and floats
 * are printed the way Python's repr() prints them, so canonical bytes match Python's. */
"use strict";
var PCV = (function () {
  var MAX_BYTES = 4 * 1024 * 1024;
  var MAX_DEPTH = 500; /* pytools.publish.verify.MAX_DEPTH: deepest nesting of arrays and objects */
  var SUPPORTED = ["1"];
  var MAX_SCHEMA_REASONS = 5;
  var RED = ["too-large", "unknown-hash", "malformed-json", "not-an-object",
    "unsupported-schema-version", "schema-violation", "body-hash-mismatch",
    "unknown-theorem", "statement-hash-mismatch"];

  /* ---- strict JSON parser (mirrors Python json.loads + parse_json checks) ---- */
  function JsonError(msg) { this.message = msg; }

  function lineCol(text, pos) {
    var line = 1, col = 1;
    for (var i = 0; i < pos && i < text.length; i++) {
      if (text[i] === "\n") { line++; col = 1; } else { col++; }
    }
    return "line " + line + " column " + col;
  }

  function parse(text) {
    var i = 0;
    function fail(msg) { throw new JsonError(msg + " at " + lineCol(text, i)); }
    function ws() {
      while (i < text.length) {
        var c = text[i];
        if (c === " " || c === "\t" || c === "\n" || c === "\r") i++; else break;
      }
    }
    function value(depth) {
      ws();
      if (i >= text.length) fail("Expecting value");
      var c = text[i];
      if (c === "{") return object(depth + 1);
      if (c === "[") return array(depth + 1);
      if (c === '"') return string();
      if (text.startsWith("true", i)) { i += 4; return true; }
      if (text.startsWith("false", i)) { i += 5; return false; }
      if (text.startsWith("null", i)) { i += 4; return null; }
      if (text.startsWith("NaN", i)) fail("NaN is not a JSON number");
      if (text.startsWith("Infinity", i)) fail("Infinity is not a JSON number");
      if (text.startsWith("-Infinity", i)) fail("-Infinity is not a JSON number");
      return number();
    }
    function number() {
      var m = /^(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?/.exec(text.slice(i, i + 4096));
      if (!m) fail("Expecting value");
      i += m[0].length;
      if (m[2] === undefined && m[3] === undefined) return BigInt(m[1]);
      var x = Number(m[0]);
      if (!isFinite(x)) fail("number out of range");
      return x;
    }
    function string() {
      i++;
      var out = "";
      for (;;) {
        if (i >= text.length) fail("Unterminated string");
        var c = text[i];
        if (c === '"') { i++; break; }
        if (c === "\\") {
          var e = text[i + 1];
          var map = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
          if (e in map) { out += map[e]; i += 2; continue; }
          if (e === "u") {
            var hex = text.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("Invalid \\uXXXX escape");
            out += String.fromCharCode(parseInt(hex, 16));
            i += 6;
            continue;
          }
          fail("Invalid \\escape");
        }
        if (c.charCodeAt(0) < 0x20) fail("Invalid control character");
        out += c;
        i++;
      }
      return out;
    }
    function array(depth) {
      if (depth > MAX_DEPTH) fail("nested more than " + MAX_DEPTH + " levels deep");
      i++;
      var out = [];
      ws();
      if (text[i] === "]") { i++; return out; }
      for (;;) {
        out.push(value(depth));
        ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "]") { i++; return out; }
        fail("Expecting ',' delimiter");
      }
    }
    function object(depth) {
      if (depth > MAX_DEPTH) fail("nested more than " + MAX_DEPTH + " levels deep");
      i++;
      var out = new Map();
      ws();
      if (text[i] === "}") { i++; return out; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("Expecting property name enclosed in double quotes");
        var key = string();
        ws();
        if (text[i] !== ":") fail("Expecting ':' delimiter");
        i++;
        var v = value(depth);
        if (out.has(key)) fail("duplicate key " + JSON.stringify(key));
        out.set(key, v);
        ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "}") { i++; return out; }
        fail("Expecting ',' delimiter");
      }
    }
    var result = value(0);
    ws();
    if (i !== text.length) fail("Extra data");
    checkSurrogates(result);
    return result;
  }

  function loneSurrogate(s) {
    for (var k = 0; k < s.length; k++) {
      var u = s.charCodeAt(k);
      if (u >= 0xd800 && u <= 0xdbff) {
        var n = s.charCodeAt(k + 1);
        if (n >= 0xdc00 && n <= 0xdfff) { k++; continue; }
        return true;
      }
      if (u >= 0xdc00 && u <= 0xdfff) return true;
    }
    return false;
  }

  function checkSurrogates(v) {
    if (typeof v === "string") {
      if (loneSurrogate(v)) throw new JsonError("string is not valid Unicode (surrogates not allowed)");
    } else if (Array.isArray(v)) {
      v.forEach(checkSurrogates);
    } else if (v instanceof Map) {
      v.forEach(function (val, key) { checkSurrogates(key); checkSurrogates(val); });
    }
  }

  /* ---- canonical form (mirrors pytools.publish.canonical.canonical_bytes) ---- */
  function pyFloat(x) {
    if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
    var sign = x < 0 ? "-" : "";
    var s = String(Math.abs(x));
    var exp = 0;
    var mant = s;
    var at = s.indexOf("e");
    if (at >= 0) { mant = s.slice(0, at); exp = parseInt(s.slice(at + 1), 10); }
    var parts = mant.split(".");
    var digits = parts[0] + (parts[1] || "");
    var decpt = parts[0].length + exp; /* value = 0.DIGITS x 10^decpt */
    while (digits.length > 1 && digits[0] === "0") { digits = digits.slice(1); decpt--; }
    digits = digits.replace(/0+$/, "");
    if (digits === "") digits = "0";
    var e10 = decpt - 1;
    if (e10 < -4 || e10 >= 16) {
      var m = digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "");
      var ea = String(Math.abs(e10));
      if (ea.length < 2) ea = "0" + ea;
      return sign + m + "e" + (e10 < 0 ? "-" : "+") + ea;
    }
    if (decpt <= 0) return sign + "0." + "0".repeat(-decpt) + digits;
    if (decpt >= digits.length) return sign + digits + "0".repeat(decpt - digits.length) + ".0";
    return sign + digits.slice(0, decpt) + "." + digits.slice(decpt);
  }

  function pyString(s) {
    var out = '"';
    for (var k = 0; k < s.length; k++) {
      var c = s[k];
      var u = s.charCodeAt(k);
      if (c === '"') out += '\\"';
      else if (c === "\\") out += "\\\\";
      else if (c === "\n") out += "\\n";
      else if (c === "\r") out += "\\r";
      else if (c === "\t") out += "\\t";
      else if (c === "\b") out += "\\b";
      else if (c === "\f") out += "\\f";
      else if (u < 0x20) out += "\\u" + ("000" + u.toString(16)).slice(-4);
      else out += c;
    }
    return out + '"';
  }

  function cmpCodePoints(a, b) {
    var ia = 0, ib = 0;
    while (ia < a.length && ib < b.length) {
      var ca = a.codePointAt(ia), cb = b.codePointAt(ib);
      if (ca !== cb) return ca < cb ? -1 : 1;
      ia += ca > 0xffff ? 2 : 1;
      ib += cb > 0xffff ? 2 : 1;
    }
    if (ia < a.length) return 1;
    if (ib < b.length) return -1;
    return 0;
  }

  function dump(v, indent) {
    if (v === null) return "null";
    if (v === true) return "true";
    if (v === false) return "false";
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number") return pyFloat(v);
    if (typeof v === "string") return pyString(v);
    var inner = indent + "  ";
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      return "[\n" + v.map(function (x) { return inner + dump(x, inner); }).join(",\n") +
        "\n" + indent + "]";
    }
    var keys = Array.from(v.keys()).sort(cmpCodePoints);
    if (keys.length === 0) return "{}";
    return "{\n" + keys.map(function (k) {
      return inner + pyString(k) + ": " + dump(v.get(k), inner);
    }).join(",\n") + "\n" + indent + "}";
  }

  function canonicalText(v) { return dump(v, "") + "\n"; }

  /* ---- SHA-256 through WebCrypto ---- */
  function subtle() {
    var c = (typeof globalThis !== "undefined" && globalThis.crypto) || null;
    if (!c || !c.subtle) throw new Error("WebCrypto (crypto.subtle) is not available in this context");
    return c.subtle;
  }
  function hex(buf) {
    return Array.from(new Uint8Array(buf)).map(function (b) {
      return b.toString(16).padStart(2, "0");
    }).join("");
  }
  async function sha256(bytes) { return hex(await subtle().digest("SHA-256", bytes)); }

  /* ---- minimal JSON Schema (Draft 2020-12 subset used by pytools/publish/schemas) ---- */
  var KEYWORDS = ["$schema", "$id", "$defs", "title", "description", "type", "required",
    "properties", "items", "const", "pattern", "minLength", "minItems", "uniqueItems",
    "minimum", "$ref", "additionalProperties"];

  function typeOk(v, t) {
    switch (t) {
      case "null": return v === null;
      case "boolean": return typeof v === "boolean";
      case "string": return typeof v === "string";
      case "integer": return typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));
      case "number": return typeof v === "bigint" || typeof v === "number";
      case "array": return Array.isArray(v);
      case "object": return v instanceof Map;
    }
    return false;
  }
  function pathText(path) {
    return "$" + path.map(function (p) { return typeof p === "number" ? "[" + p + "]" : "." + p; }).join("");
  }
  function same(a, b) { return canonicalText(a) === canonicalText(b); }
  function toValue(schemaJs) { return parse(JSON.stringify(schemaJs)); }

  function validate(root, v) {
    var errors = [];
    function resolve(ref) {
      var node = root;
      ref.replace(/^#\//, "").split("/").forEach(function (p) { node = node[p]; });
      return node;
    }
    function walk(s, x, path) {
      if (s === true) return;
      if (s === false) { errors.push(pathText(path) + ": false schema"); return; }
      Object.keys(s).forEach(function (kw) {
        if (KEYWORDS.indexOf(kw) < 0) throw new Error("schema keyword not supported here: " + kw);
      });
      if (s.$ref) walk(resolve(s.$ref), x, path);
      if (s.type !== undefined) {
        var types = Array.isArray(s.type) ? s.type : [s.type];
        if (!types.some(function (t) { return typeOk(x, t); })) {
          errors.push(pathText(path) + ": not of type " + types.join(", "));
        }
      }
      if (s.const !== undefined && !same(x, toValue(s.const))) {
        errors.push(pathText(path) + ": was expected to be " + JSON.stringify(s.const));
      }
      if (x instanceof Map) {
        (s.required || []).forEach(function (k) {
          if (!x.has(k)) errors.push(pathText(path) + ": '" + k + "' is a required property");
        });
        Object.keys(s.properties || {}).forEach(function (k) {
          if (x.has(k)) walk(s.properties[k], x.get(k), path.concat([k]));
        });
      }
      if (Array.isArray(x)) {
        if (s.minItems !== undefined && x.length < s.minItems) {
          errors.push(pathText(path) + ": should be non-empty / too short");
        }
        if (s.uniqueItems) {
          var seen = x.map(canonicalText);
          if (seen.some(function (t, k) { return seen.indexOf(t) !== k; })) {
            errors.push(pathText(path) + ": has non-unique elements");
          }
        }
        if (s.items !== undefined) {
          x.forEach(function (item, k) { walk(s.items, item, path.concat([k])); });
        }
      }
      if (typeof x === "string") {
        if (s.minLength !== undefined && Array.from(x).length < s.minLength) {
          errors.push(pathText(path) + ": is too short");
        }
        if (s.pattern !== undefined && !new RegExp(s.pattern, "u").test(x)) {
          errors.push(pathText(path) + ": does not match " + JSON.stringify(s.pattern));
        }
      }
      if (s.minimum !== undefined && (typeof x === "number" || typeof x === "bigint")) {
        if (Number(x) < s.minimum) errors.push(pathText(path) + ": is less than the minimum");
      }
    }
    walk(root, v, []);
    return errors;
  }

  /* ---- the verdict (mirrors pytools.publish.verify.verify_bytes) ---- */
  function isRed(reasons) {
    return reasons.some(function (r) { return RED.indexOf(r.split(":")[0]) >= 0; });
  }
  function kindOf(obj) {
    if (obj.has("files") && !obj.has("result")) return "manifest";
    if (obj.has("result") || obj.has("body_sha256")) return "certificate";
    return "published-file";
  }
  function theoremReasons(obj, manifest) {
    var named = [];
    var items = obj.get("theorems");
    if (Array.isArray(items)) {
      items.forEach(function (it) {
        if (typeof it === "string") named.push([it, null]);
        else if (it instanceof Map && typeof it.get("name") === "string") {
          var st = it.get("statement_sha256");
          named.push([it.get("name"), typeof st === "string" ? st : null]);
        }
      });
    }
    var unknown = [], mismatched = [];
    named.forEach(function (pair) {
      var published = Object.prototype.hasOwnProperty.call(manifest.theorems, pair[0])
        ? manifest.theorems[pair[0]] : null;
      if (published === null) {
        unknown.push("unknown-theorem: " + pair[0] + " is not a published, audited theorem");
      } else if (pair[1] !== null && published.indexOf(pair[1]) < 0) {
        mismatched.push("statement-hash-mismatch: " + pair[0] + ": file says " + pair[1] +
          ", manifest says " + published.join(" or "));
      }
    });
    var reasons = unknown.concat(mismatched);
    if (named.length && !reasons.length) {
      reasons.push("theorems-ok: " + named.length + " theorem(s) published with the same statement");
    }
    return reasons;
  }
  function verdict(green, reasons, name, sha, kind, result) {
    return { green: green, reasons: reasons, path: name, sha256: sha, kind: kind, result: result || null,
      codes: reasons.map(function (r) { return r.split(":")[0]; }) };
  }

  /* bytes: Uint8Array; manifest: {sha256, files: {sha: [paths]}, theorems: {name: [hashes]}};
   * schemas: {certificate: {...}, manifest: {...}} */
  async function verifyBytes(bytes, manifest, schemas, name) {
    name = name || "<bytes>";
    if (bytes.length > MAX_BYTES) {
      return verdict(false, ["too-large: " + bytes.length + " bytes (limit " + MAX_BYTES + ")"], name, "", "unknown");
    }
    var sha = await sha256(bytes);
    if (sha === manifest.sha256) {
      return verdict(true, ["is-manifest: identical to the manifest used for verification (embedded manifest)"],
        name, sha, "manifest");
    }
    var reasons = [];
    var listed = Object.prototype.hasOwnProperty.call(manifest.files, sha) ? manifest.files[sha] : null;
    if (listed) reasons.push("listed: SHA-256 " + sha + " is published as " + listed.join(", "));
    else reasons.push("unknown-hash: SHA-256 " + sha + " is not in the manifest (tampered or not ours)");
    var obj;
    try {
      var text;
      try {
        text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch (e) {
        throw new JsonError("not UTF-8");
      }
      obj = parse(text);
    } catch (e) {
      if (!(e instanceof JsonError) && !(e instanceof RangeError)) throw e;
      if (listed) {
        reasons.push("not-json: a published file that is not JSON; it names no theorems");
        return verdict(true, reasons, name, sha, "published-file");
      }
      reasons.push("malformed-json: " + (e.message || "too deeply nested"));
      return verdict(false, reasons, name, sha, "unknown");
    }
    if (!(obj instanceof Map)) {
      if (!listed) {
        var t = Array.isArray(obj) ? "list" : typeof obj === "string" ? "str" : typeof obj === "bigint" ? "int"
          : typeof obj === "number" ? "float" : typeof obj === "boolean" ? "bool" : "NoneType";
        reasons.push("not-an-object: top level is a JSON " + t);
      }
      return verdict(!isRed(reasons), reasons, name, sha, listed ? "published-file" : "unknown");
    }
    var kind = kindOf(obj);
    var result = typeof obj.get("result") === "string" ? obj.get("result") : null;
    if (kind === "certificate" || kind === "manifest") {
      var version = obj.has("schema_version") ? obj.get("schema_version") : null;
      if (SUPPORTED.indexOf(version) < 0) {
        reasons.push("unsupported-schema-version: " + (version === null ? "null" : dump(version, "")) +
          " (this verifier knows " + SUPPORTED.join(", ") + ")");
      } else {
        var errors = validate(schemas[kind], obj);
        errors.slice(0, MAX_SCHEMA_REASONS).forEach(function (e) { reasons.push("schema-violation: " + e); });
        if (errors.length > MAX_SCHEMA_REASONS) {
          reasons.push("schema-violation: and " + (errors.length - MAX_SCHEMA_REASONS) + " more");
        }
      }
      if (kind === "certificate") {
        var stated = obj.has("body_sha256") ? obj.get("body_sha256") : null;
        var body = new Map(obj);
        body.delete("body_sha256");
        var actual = await sha256(new TextEncoder().encode(canonicalText(body)));
        if (stated !== actual) {
          reasons.push("body-hash-mismatch: body_sha256 says " + (stated === null ? "None" : String(stated)) +
            ", the body hashes to " + actual);
        }
      }
    }
    reasons = reasons.concat(theoremReasons(obj, manifest));
    return verdict(!isRed(reasons), reasons, name, sha, kind, result);
  }

  return {
    MAX_BYTES: MAX_BYTES, KEYWORDS: KEYWORDS, parse: parse, canonicalText: canonicalText,
    pyFloat: pyFloat, sha256: sha256, validate: validate, verifyBytes: verifyBytes, JsonError: JsonError
  };
})();
if (typeof module !== "undefined" && module.exports) { module.exports = PCV; }
