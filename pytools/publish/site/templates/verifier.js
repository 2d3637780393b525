/* In-browser certificate verifier: the same checks, in the same order and with the same
 * reasons, as pytools/publish/verify.py (verify_bytes), anchor.py (pin, signature),
 * attest.py (DSSE + in-toto, Ed25519 through WebCrypto), manifest.py, validation.py and
 * certificate_policy.py. Pure logic, no DOM, no network; it also runs under Node for the tests.
 * Numbers: integers are kept as BigInt and floats are printed the way Python's repr()
 * prints them, so canonical bytes match Python's. */
"use strict";
var PCV = (function () {
  var MAX_BYTES = 4 * 1024 * 1024;
  var MAX_DEPTH = 500; /* pytools.publish.verify.MAX_DEPTH: deepest nesting of arrays and objects */
  var SUPPORTED = ["2"];
  var MAX_SCHEMA_REASONS = 5;
  /* The reason codes: the one table (pytools/publish/verify_codes.json), embedded by the site
   * builder (pytools.publish.site.page.verifier_script); no code's colour is written here. */
  var CODES = /*@reason-codes@*/null;
  if (!Array.isArray(CODES)) throw new Error("verifier.js: the reason-code table is not embedded");
  function codesWhere(verdict) {
    return CODES.filter(function (c) { return c.verdict === verdict; }).map(function (c) { return c.code; });
  }
  var RED = codesWhere("red");
  var OK = codesWhere("green");
  function meaning(code) {
    var found = CODES.filter(function (c) { return c.code === code; });
    return found.length ? found[0].meaning : "";
  }
  /* pytools.publish.certificate_policy */
  var ALLOWED_AXIOMS = ["Classical.choice", "Quot.sound", "propext"];
  var REQUIRED_CHECKS = ["olean-audit", "reviewed-statements"];
  var KERNEL_CHECKS = ["kernel-replay", "leanchecker"];
  /* pytools.publish.attest */
  var PAYLOAD_TYPE = "application/vnd.in-toto+json";

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

  /* ---- JSON Schema subset (mirrors pytools.publish.validation: same keywords, same words) ---- */
  var KEYWORDS = ["$schema", "$id", "$defs", "$ref", "$comment", "title", "description", "examples",
    "type", "required", "properties", "additionalProperties", "items", "const", "enum",
    "pattern", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minimum",
    "maximum"];

  function pyDumps(v) { /* json.dumps(v, ensure_ascii=False, sort_keys=True) of a plain value */
    if (v === null) return "null";
    if (v === true) return "true";
    if (v === false) return "false";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : pyFloat(v);
    if (typeof v === "string") return pyString(v);
    if (Array.isArray(v)) return "[" + v.map(pyDumps).join(", ") + "]";
    return "{" + Object.keys(v).sort(cmpCodePoints).map(function (k) {
      return pyString(k) + ": " + pyDumps(v[k]);
    }).join(", ") + "}";
  }
  function pointerToken(k) { return String(k).replace(/~/g, "~0").replace(/\//g, "~1"); }
  function pointer(path) { return path.map(function (p) { return "/" + pointerToken(p); }).join(""); }
  function where(ptr) { return ptr || "(document)"; }
  function jsonType(v) {
    if (v === null) return "null";
    if (typeof v === "boolean") return "boolean";
    if (typeof v === "bigint") return "integer";
    if (typeof v === "number") return "number";
    if (typeof v === "string") return "string";
    if (Array.isArray(v)) return "array";
    return "object";
  }
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
  function same(a, b) { return canonicalText(a) === canonicalText(b); }
  function toValue(schemaJs) { return parse(JSON.stringify(schemaJs)); }
  function uniqSorted(lines) {
    return lines.filter(function (l, k) { return lines.indexOf(l) === k; }).sort(cmpCodePoints);
  }

  /* Every violation of schemas[name] by v, as sorted "<pointer>: <problem>" lines. */
  function schemaErrors(schemas, name, v, prefix) {
    var root = schemas[name];
    if (!root) throw new Error("no schema named " + name);
    var lines = [];
    prefix = prefix || "";
    function resolve(ref) {
      var node = root;
      ref.replace(/^#\//, "").split("/").forEach(function (p) { node = node[p]; });
      return node;
    }
    function num(x) { return typeof x === "bigint" ? Number(x) : x; }
    function walk(s, x, path) {
      if (s === true) return;
      var at = prefix + pointer(path);
      if (s === false) { lines.push(where(at) + ": fails false"); return; }
      Object.keys(s).forEach(function (kw) {
        if (KEYWORDS.indexOf(kw) < 0) throw new Error("schema keyword not supported here: " + kw);
      });
      if (s.$ref) walk(resolve(s.$ref), x, path);
      if (s.type !== undefined) {
        var types = Array.isArray(s.type) ? s.type : [s.type];
        if (!types.some(function (t) { return typeOk(x, t); })) {
          lines.push(where(at) + ": expected " + types.join(" or ") + ", found " + jsonType(x));
        }
      }
      if (s.const !== undefined && !same(x, toValue(s.const))) {
        lines.push(where(at) + ": must be " + pyDumps(s.const));
      }
      if (s.enum !== undefined && !s.enum.some(function (e) { return same(x, toValue(e)); })) {
        lines.push(where(at) + ": must be one of " + pyDumps(s.enum));
      }
      if (x instanceof Map) {
        (s.required || []).forEach(function (k) {
          if (!x.has(k)) lines.push(at + "/" + pointerToken(k) + ": required property is missing");
        });
        var props = s.properties || {};
        x.forEach(function (val, k) {
          if (Object.prototype.hasOwnProperty.call(props, k)) walk(props[k], val, path.concat([k]));
          else if (s.additionalProperties === false) {
            lines.push(at + "/" + pointerToken(k) + ": property not allowed here");
          } else if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
            walk(s.additionalProperties, val, path.concat([k]));
          }
        });
      }
      if (Array.isArray(x)) {
        if (s.minItems !== undefined && x.length < s.minItems) lines.push(where(at) + ": fewer than " + s.minItems + " item(s)");
        if (s.maxItems !== undefined && x.length > s.maxItems) lines.push(where(at) + ": more than " + s.maxItems + " item(s)");
        if (s.uniqueItems) {
          var seen = x.map(canonicalText);
          if (seen.some(function (t, k) { return seen.indexOf(t) !== k; })) lines.push(where(at) + ": items are not unique");
        }
        if (s.items !== undefined) x.forEach(function (item, k) { walk(s.items, item, path.concat([k])); });
      }
      if (typeof x === "string") {
        var n = Array.from(x).length;
        if (s.minLength !== undefined && n < s.minLength) lines.push(where(at) + ": shorter than " + s.minLength + " character(s)");
        if (s.maxLength !== undefined && n > s.maxLength) lines.push(where(at) + ": longer than " + s.maxLength + " character(s)");
        if (s.pattern !== undefined && !new RegExp(s.pattern, "u").test(x)) {
          lines.push(where(at) + ": does not match the pattern " + pyDumps(s.pattern));
        }
      }
      if ((typeof x === "number" || typeof x === "bigint")) {
        if (s.minimum !== undefined && num(x) < s.minimum) lines.push(where(at) + ": less than the minimum " + s.minimum);
        if (s.maximum !== undefined && num(x) > s.maximum) lines.push(where(at) + ": more than the maximum " + s.maximum);
      }
    }
    walk(root, v, []);
    return uniqSorted(lines);
  }
  function figureResults(schemas) {
    return Object.keys(schemas).filter(function (n) { return n.indexOf("figures/") === 0; })
      .map(function (n) { return n.slice(8); }).sort(cmpCodePoints);
  }
  function certificateErrors(schemas, cert) {
    var errors = schemaErrors(schemas, "certificate", cert);
    if (!(cert instanceof Map) || typeof cert.get("result") !== "string") return errors;
    var result = cert.get("result");
    var fname = "figures/" + result;
    if (!Object.prototype.hasOwnProperty.call(schemas, fname)) {
      errors.push("/result: no figures schema for result " + pyString(result) + " (known: " +
        (figureResults(schemas).join(", ") || "none") + ")");
    } else if (cert.has("figures")) {
      errors = errors.concat(schemaErrors(schemas, fname, cert.get("figures"), "/figures"));
    }
    return uniqSorted(errors);
  }
  function schemaReasons(errors) {
    var out = errors.slice(0, MAX_SCHEMA_REASONS).map(function (e) { return "schema-violation: " + e; });
    if (errors.length > MAX_SCHEMA_REASONS) out.push("schema-violation: and " + (errors.length - MAX_SCHEMA_REASONS) + " more");
    return out;
  }

  /* ---- the manifest (mirrors pytools.publish.manifest) ---- */
  function uniquenessErrors(obj) {
    var errors = [];
    if (!(obj instanceof Map)) return errors;
    [["files", ["path"]], ["theorems", ["name", "result"]]].forEach(function (spec) {
      var items = obj.get(spec[0]);
      if (!Array.isArray(items)) return;
      var seen = new Map();
      items.forEach(function (item, index) {
        if (!(item instanceof Map) || !spec[1].every(function (f) { return typeof item.get(f) === "string"; })) return;
        var ident = JSON.stringify(spec[1].map(function (f) { return item.get(f); }));
        if (seen.has(ident)) {
          var what = spec[0] === "files" ? "path" : "theorem for this result";
          errors.push("/" + spec[0] + "/" + index + ": duplicate " + what + " (first at /" + spec[0] + "/" + seen.get(ident) + ")");
        } else seen.set(ident, index);
      });
    });
    return errors;
  }
  function manifestProblems(obj, schemas) {
    if (!(obj instanceof Map)) return ["(document): not a JSON object"];
    var version = obj.has("schema_version") ? obj.get("schema_version") : null;
    if (SUPPORTED.indexOf(version) < 0) {
      return ["/schema_version: unsupported " + (version === null ? "null" : dump(version, "").replace(/\n\s*/g, "")) +
        " (supported: " + SUPPORTED.join(", ") + ")"];
    }
    return uniqSorted(schemaErrors(schemas, "manifest", obj).concat(uniquenessErrors(obj)));
  }
  function ManifestError(msg) { this.message = msg; }

  /* A manifest from its bytes; throws ManifestError naming `name` and the problem. */
  async function loadManifest(bytes, schemas, name) {
    if (bytes.length > MAX_BYTES) throw new ManifestError("manifest " + name + ": too large (" + bytes.length + " bytes, limit " + MAX_BYTES + ")");
    var obj;
    try { obj = parse(decodeUtf8(bytes)); } catch (e) {
      if (!(e instanceof JsonError) && !(e instanceof RangeError)) throw e;
      throw new ManifestError("manifest " + name + ": malformed JSON: " + (e.message || "too deeply nested"));
    }
    var problems = manifestProblems(obj, schemas);
    if (problems.length) {
      throw new ManifestError("manifest " + name + ": schema violation: " + problems[0] +
        (problems.length > 1 ? " (and " + (problems.length - 1) + " more)" : ""));
    }
    var files = {}, listed = {}, theorems = {};
    obj.get("files").forEach(function (e) {
      var sha = e.get("sha256");
      (files[sha] = files[sha] || []).push(e.get("path"));
      listed[e.get("path")] = sha;
    });
    obj.get("theorems").forEach(function (e) {
      var n = e.get("name");
      (theorems[n] = theorems[n] || []).push({ result: e.get("result"), term: e.get("statement_sha256"),
        text: e.get("statement_text_sha256") });
    });
    return { path: name, sha256: await sha256(bytes), size: bytes.length, files: files,
      listed: listed, theorems: theorems, data: obj };
  }
  function has(o, k) { return Object.prototype.hasOwnProperty.call(o, k); }
  function decodeUtf8(bytes) {
    try { return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes); }
    catch (e) { throw new JsonError("not UTF-8"); }
  }

  /* ---- the policy (mirrors pytools.publish.certificate_policy.policy_problems) ---- */
  function policyProblems(cert) {
    var problems = [];
    var audit = cert.get("audit");
    if (!(audit instanceof Map)) return ["/audit: no audit block"];
    var findings = audit.get("findings");
    if (typeof findings !== "bigint" || findings > 0n) {
      problems.push("/audit/findings: the certificate records findings, the policy allows 0");
    }
    var allowed = audit.get("allowed_axioms");
    var want = ALLOWED_AXIOMS.slice().sort(cmpCodePoints).join("\u0000");
    if (!Array.isArray(allowed) || allowed.map(function (a) { return typeof a === "string" ? a : dump(a, ""); })
      .sort(cmpCodePoints).join("\u0000") !== want) {
      problems.push("/audit/allowed_axioms: differs from the policy's " + ALLOWED_AXIOMS.join(", "));
    }
    var theorems = cert.get("theorems");
    (Array.isArray(theorems) ? theorems : []).forEach(function (t, index) {
      var axioms = t instanceof Map ? t.get("axioms") : null;
      if (!Array.isArray(axioms)) return;
      var extra = axioms.filter(function (a) { return typeof a === "string" && ALLOWED_AXIOMS.indexOf(a) < 0; })
        .sort(cmpCodePoints);
      if (extra.length) {
        problems.push("/theorems/" + index + "/axioms: " + pyStr(t.get("name")) + " depends on " +
          extra.join(", ") + ", outside the allowed axioms");
      }
    });
    var checks = audit.get("checks");
    var status = {};
    (Array.isArray(checks) ? checks : []).forEach(function (c) {
      if (c instanceof Map && typeof c.get("name") === "string") status[c.get("name")] = c.get("status");
    });
    REQUIRED_CHECKS.forEach(function (n) {
      if (status[n] !== "passed") {
        problems.push("/audit/checks: required check " + n + " " + (has(status, n) ? "did not pass" : "is not recorded"));
      }
    });
    if (!KERNEL_CHECKS.some(function (n) { return status[n] === "passed"; })) {
      problems.push("/audit/checks: no kernel re-check passed (one of " + KERNEL_CHECKS.join(", ") + " is required)");
    }
    return problems;
  }
  function pyStr(v) { return typeof v === "string" ? v : v === undefined || v === null ? "None" : dump(v, ""); }

  /* ---- DSSE envelope, in-toto statement, Ed25519 (mirrors pytools.publish.attest) ---- */
  /* Strict base64, standard or URL-safe (DSSE: verifiers MUST accept either), padding optional. */
  function b64decode(text) {
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) throw new JsonError("invalid base64");
    var std = text.replace(/-/g, "+").replace(/_/g, "/");
    std = std.replace(/=+$/, "");
    if (std.length % 4 === 1) throw new JsonError("invalid base64 length");
    while (std.length % 4) std += "=";
    var bin = atob(std);
    var out = new Uint8Array(bin.length);
    for (var k = 0; k < bin.length; k++) out[k] = bin.charCodeAt(k);
    return out;
  }
  function concatBytes(parts) {
    var n = parts.reduce(function (a, p) { return a + p.length; }, 0);
    var out = new Uint8Array(n), at = 0;
    parts.forEach(function (p) { out.set(p, at); at += p.length; });
    return out;
  }
  function pae(type, payload) {
    var enc = new TextEncoder();
    var t = enc.encode(type);
    return concatBytes([enc.encode("DSSEv1 " + t.length + " "), t, enc.encode(" " + payload.length + " "), payload]);
  }
  function readEnvelope(bytes, schemas) {
    var text = decodeUtf8(bytes);
    var lines = text.split("\n").filter(function (l) { return l.trim() !== ""; });
    if (lines.length !== 1) throw new JsonError("expected one envelope (one JSON line), found " + lines.length);
    var env = parse(lines[0]);
    var errors = schemaErrors(schemas, "envelope", env);
    if (errors.length) throw new JsonError("not a DSSE envelope: " + errors[0]);
    return env;
  }

  var ED25519_SUPPORT = null;
  /* Whether this browser's WebCrypto verifies Ed25519 (RFC 8032 test key 1 as the probe). */
  async function ed25519Supported() {
    if (ED25519_SUPPORT !== null) return ED25519_SUPPORT;
    try {
      var probe = new Uint8Array("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
        .match(/../g).map(function (h) { return parseInt(h, 16); }));
      await subtle().importKey("raw", probe, { name: "Ed25519" }, false, ["verify"]);
      ED25519_SUPPORT = true;
    } catch (e) { ED25519_SUPPORT = false; }
    return ED25519_SUPPORT;
  }
  function KeyFileError(msg) { this.message = msg; }
  /* Trusted keys from PEM text (one or more PUBLIC KEY blocks): [{keyid, key, source}]. */
  async function parsePublicKeys(text, source) {
    var re = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
    var blocks = [], m;
    while ((m = re.exec(text)) !== null) blocks.push(m);
    if (!blocks.length) throw new KeyFileError(source + ": no PEM public key (-----BEGIN PUBLIC KEY-----)");
    if (!(await ed25519Supported())) throw new KeyFileError("this browser's WebCrypto has no Ed25519");
    var keys = [];
    for (var k = 0; k < blocks.length; k++) {
      var label = blocks[k][1];
      if (label !== "PUBLIC KEY") {
        throw new KeyFileError(source + ": PEM block " + (k + 1) + " is a " + label + ", not a PUBLIC KEY" +
          (label.indexOf("PRIVATE") >= 0 ? " (never hand a private key to verify)" : ""));
      }
      var der;
      try { der = b64decode(blocks[k][2].replace(/\s+/g, "")); } catch (e) {
        throw new KeyFileError(source + ": PEM block " + (k + 1) + ": unreadable (bad base64)");
      }
      var key;
      try { key = await subtle().importKey("spki", der, { name: "Ed25519" }, true, ["verify"]); } catch (e) {
        throw new KeyFileError(source + ": PEM block " + (k + 1) + ": not an Ed25519 key");
      }
      var raw = new Uint8Array(await subtle().exportKey("raw", key));
      keys.push({ keyid: await sha256(raw), key: key, source: source });
    }
    return keys;
  }
  async function checkEnvelope(bytes, trusted, schemas) {
    var env, payload, sigs;
    try {
      env = readEnvelope(bytes, schemas);
      payload = b64decode(env.get("payload"));
      sigs = env.get("signatures").map(function (s) {
        return [s.has("keyid") ? s.get("keyid") : "", b64decode(s.get("sig"))];
      });
    } catch (e) {
      if (!(e instanceof JsonError) && !(e instanceof RangeError)) throw e;
      return { statement: null, signer: null, problem: "signature-invalid: " + (e.message || "too deeply nested") };
    }
    var claimed = sigs.map(function (s) { return s[0]; });
    var message = pae(env.get("payloadType"), payload);
    var signer = null, triedMatching = false;
    for (var i = 0; i < sigs.length && !signer; i++) {
      var kid = sigs[i][0];
      var order = trusted.slice().sort(function (a, b) {
        return ((a.keyid !== kid) - (b.keyid !== kid)) || cmpCodePoints(a.keyid, b.keyid);
      });
      triedMatching = triedMatching || trusted.some(function (t) { return t.keyid === kid; });
      for (var j = 0; j < order.length; j++) {
        var ok = false;
        try { ok = await subtle().verify({ name: "Ed25519" }, order[j].key, sigs[i][1], message); } catch (e) { ok = false; }
        if (ok) { signer = order[j].keyid; break; }
      }
    }
    if (!signer) {
      var named = claimed.map(function (k) { return k ? k.slice(0, 16) + "…" : "(no key id)"; }).join(", ");
      if (triedMatching) {
        return { statement: null, signer: null, problem: "signature-bad: the signature by " + named +
          " does not verify: envelope or payload altered" };
      }
      return { statement: null, signer: null, problem: "signature-untrusted: signed by key " + named +
        ", which is not a trusted key" };
    }
    var obj;
    try { obj = parse(decodeUtf8(payload)); } catch (e) {
      if (!(e instanceof JsonError) && !(e instanceof RangeError)) throw e;
      return { statement: null, signer: signer, problem: "signature-invalid: payload: " + (e.message || "too deeply nested") };
    }
    var errors = schemaErrors(schemas, "statement", obj);
    if (errors.length) return { statement: null, signer: signer, problem: "signature-invalid: statement: " + errors[0] };
    return { statement: obj, signer: signer, problem: null };
  }
  function covers(statement, manifestSha, listed) {
    var signed = statement.get("predicate").get("manifest");
    if (signed.get("sha256") !== manifestSha) {
      return "manifest-not-signed: the signed statement covers manifest " + signed.get("sha256") +
        ", not this one (" + manifestSha + ")";
    }
    var subjects = {};
    statement.get("subject").forEach(function (s) { subjects[s.get("name")] = s.get("digest").get("sha256"); });
    var expected = Object.assign({}, listed);
    expected[signed.get("path")] = manifestSha;
    var a = Object.keys(subjects).map(function (k) { return [k, subjects[k]]; });
    var b = Object.keys(expected).map(function (k) { return [k, expected[k]]; });
    function key(p) { return p[0] + "\u0000" + p[1]; }
    var ak = a.map(key), bk = b.map(key);
    var differ = a.filter(function (p) { return bk.indexOf(key(p)) < 0; })
      .concat(b.filter(function (p) { return ak.indexOf(key(p)) < 0; }));
    if (!differ.length) return null;
    differ.sort(function (x, y) { return cmpCodePoints(x[0], y[0]) || cmpCodePoints(x[1], y[1]); });
    return "manifest-not-signed: the statement's subjects differ from the manifest's files (" + differ[0][0] + ")";
  }

  /* ---- the anchor (mirrors pytools.publish.anchor.check_anchor) ----
   * options: {pin: hex|null, keys: [trusted keys], requireSignature: bool} */
  async function checkAnchor(manifest, options, envelope, envelopeName, schemas) {
    var reasons = [], signer = null;
    var keys = options.keys || [];
    if (options.pin) {
      if (manifest.sha256 === options.pin) reasons.push("manifest-pinned: the manifest's SHA-256 is the pinned " + options.pin);
      else reasons.push("manifest-not-pinned: the manifest's SHA-256 is " + manifest.sha256 + ", the pin says " + options.pin);
    }
    if (keys.length) {
      if (!envelope) {
        reasons.push("signature-missing: no signature envelope (" + envelopeName + "), but a trusted key was given");
      } else {
        var checked = await checkEnvelope(envelope, keys, schemas);
        if (checked.problem) reasons.push(checked.problem);
        else {
          var problem = covers(checked.statement, manifest.sha256, manifest.listed);
          if (problem) reasons.push(problem);
          else {
            signer = checked.signer;
            var src = keys.filter(function (k) { return k.keyid === signer; })[0];
            reasons.push("manifest-signed: a statement covering this manifest and its files is signed by trusted key " +
              signer + " (" + (src ? src.source : "?") + ")");
          }
        }
      }
    } else if (options.requireSignature) {
      reasons.push(!envelope ? "signature-missing: a signature is required but there is no envelope (" + envelopeName + ")"
        : "signature-unverified: a signature is required but no trusted key was given (--key or --trusted-keys)");
    } else if (!options.pin) {
      reasons.push(envelope ? "signature-unchecked: " + envelopeName + " is there but no trusted key was given: integrity only, not authenticity"
        : "integrity-only: the manifest is neither pinned (--manifest-sha256) nor signed: integrity only, not authenticity");
    }
    return { reasons: reasons, signer: signer, red: isRed(reasons), envelope: envelopeName,
      envelopeSha256: envelope ? await sha256(envelope) : null };
  }
  function anchorSummary(anchor) {
    if (anchor.red) return "anchor failed";
    var codes = anchor.reasons.map(function (r) { return r.split(":")[0]; });
    var held = [];
    if (codes.indexOf("manifest-pinned") >= 0) held.push("pinned");
    if (codes.indexOf("manifest-signed") >= 0) held.push("signed by " + anchor.signer);
    return held.length ? held.join(" and ") : "integrity only, not authenticity";
  }

  /* ---- the verdict (mirrors pytools.publish.verify.verify_bytes) ---- */
  function codeOf(r) { return r.split(":")[0]; }
  function isRed(reasons) { return reasons.some(function (r) { return RED.indexOf(codeOf(r)) >= 0; }); }
  function kindOf(obj) {
    if (obj.has("files") && !obj.has("result")) return "manifest";
    if (obj.has("result") || obj.has("body_sha256")) return "certificate";
    return "other";
  }
  async function claims(obj, kind) {
    var out = [];
    var items = obj.get("theorems");
    var list = Array.isArray(items) ? items : [];
    for (var k = 0; k < list.length; k++) {
      var it = list[k];
      if (typeof it === "string") out.push([it, null, null]);
      else if (it instanceof Map && typeof it.get("name") === "string") {
        var term = it.get("statement_sha256");
        var text = null;
        if (kind === "certificate") {
          var st = it.get("statement");
          text = typeof st === "string" ? await sha256(new TextEncoder().encode(st)) : null;
        } else {
          text = it.get("statement_text_sha256");
        }
        out.push([it.get("name"), typeof term === "string" ? term : null, typeof text === "string" ? text : null]);
      }
    }
    return out;
  }
  function sortedUnique(xs) { return uniqSorted(xs); }
  async function theoremReasons(obj, kind, manifest) {
    var result = kind === "certificate" ? obj.get("result") : null;
    var reasons = [];
    var named = await claims(obj, kind);
    named.forEach(function (c) {
      var published = has(manifest.theorems, c[0]) ? manifest.theorems[c[0]] : null;
      if (!published) { reasons.push("unknown-theorem: " + c[0] + " is not a published, audited theorem"); return; }
      var entries = published;
      if (typeof result === "string") {
        entries = published.filter(function (p) { return p.result === result; });
        if (!entries.length) {
          reasons.push("theorem-wrong-result: " + c[0] + " is published for " +
            sortedUnique(published.map(function (p) { return p.result; })).join(", ") + ", not for " + result);
          return;
        }
      }
      if (c[1] !== null && entries.every(function (p) { return p.term !== c[1]; })) {
        reasons.push("statement-hash-mismatch: " + c[0] + ": file says " + c[1] + ", manifest says " +
          sortedUnique(entries.map(function (p) { return p.term; })).join(" or "));
      } else if (c[2] !== null && entries.every(function (p) { return p.text !== c[2]; })) {
        reasons.push("statement-text-mismatch: " + c[0] + ": the statement shown hashes to " + c[2] +
          ", manifest says " + sortedUnique(entries.map(function (p) { return p.text; })).join(" or "));
      }
    });
    if (named.length && !reasons.length) {
      reasons.push("theorems-ok: " + named.length + " theorem(s) published" +
        (typeof result === "string" ? " for " + result : "") + " with the same statement (term and text)");
    }
    return reasons;
  }
  function verdict(reasons, name, sha, kind, result) {
    var red = isRed(reasons);
    if (red) reasons = reasons.filter(function (r) { return OK.indexOf(codeOf(r)) < 0; });
    return { green: !red, reasons: reasons, path: name, sha256: sha, kind: kind, result: result || null,
      codes: reasons.map(codeOf) };
  }
  function typeName(obj) {
    return Array.isArray(obj) ? "list" : typeof obj === "string" ? "str" : typeof obj === "bigint" ? "int"
      : typeof obj === "number" ? "float" : typeof obj === "boolean" ? "bool" : "NoneType";
  }

  /* The red verdict of an input that could not be read (as the command line gives it). */
  function unreadable(name, why, anchor) {
    var reasons = anchor ? anchor.reasons.slice() : [];
    reasons.push("unreadable: " + why);
    return verdict(reasons, name || "<file>", "", "unknown");
  }

  /* bytes: Uint8Array; manifest: from loadManifest; anchor: from checkAnchor (or null);
   * size: the file's size when its bytes were not read (a file over the limit). */
  async function verifyBytes(bytes, manifest, schemas, name, anchor, size) {
    name = name || "<bytes>";
    var reasons = anchor ? anchor.reasons.slice() : [];
    size = typeof size === "number" ? size : bytes.length;
    if (size > MAX_BYTES) {
      reasons.push("too-large: " + size + " bytes (limit " + MAX_BYTES + ")");
      return verdict(reasons, name, "", "unknown");
    }
    var sha = await sha256(bytes);
    if (sha === manifest.sha256) {
      reasons.push("is-manifest: identical to the manifest used for verification (" + manifest.path + ")");
      return verdict(reasons, name, sha, "manifest");
    }
    if (anchor && anchor.envelopeSha256 === sha) {
      reasons.push("is-signature: the signature envelope of this manifest (" + anchor.envelope +
        "); not listed, since it signs the manifest");
      return verdict(reasons, name, sha, "signature");
    }
    var listed = has(manifest.files, sha) ? manifest.files[sha] : null;
    if (listed) reasons.push("listed: SHA-256 " + sha + " is published as " + listed.join(", "));
    else reasons.push("unknown-hash: SHA-256 " + sha + " is not in the manifest (tampered or not ours)");
    var obj;
    try { obj = parse(decodeUtf8(bytes)); } catch (e) {
      if (!(e instanceof JsonError) && !(e instanceof RangeError)) throw e;
      if (listed) {
        reasons.push("not-json: a published file that is not JSON; it names no theorems");
        return verdict(reasons, name, sha, "published-file");
      }
      reasons.push("malformed-json: " + (e.message || "too deeply nested"));
      return verdict(reasons, name, sha, "unknown");
    }
    if (!listed) {
      var canon = new TextEncoder().encode(canonicalText(obj));
      var differs = canon.length !== bytes.length || canon.some(function (b, k) { return b !== bytes[k]; });
      if (differs) {
        var hint = "not-canonical: valid JSON, but not in canonical form (sorted keys, two-space indent, UTF-8, " +
          "one final newline), so its SHA-256 differs from the published file's";
        var csha = await sha256(canon);
        if (has(manifest.files, csha)) hint += "; in canonical form it is published as " + manifest.files[csha].join(", ");
        reasons.push(hint);
      }
    }
    if (!(obj instanceof Map)) {
      if (!listed) reasons.push("not-an-object: top level is a JSON " + typeName(obj));
      return verdict(reasons, name, sha, listed ? "published-file" : "unknown");
    }
    var kind = kindOf(obj);
    var result = typeof obj.get("result") === "string" ? obj.get("result") : null;
    if (kind === "other") {
      if (!listed) {
        reasons.push("not-a-certificate: a JSON object that is neither a certificate (no result) nor a manifest (no files)");
        return verdict(reasons, name, sha, "unknown");
      }
      reasons = reasons.concat(await theoremReasons(obj, kind, manifest));
      return verdict(reasons, name, sha, "published-file");
    }
    var version = obj.has("schema_version") ? obj.get("schema_version") : null;
    var supported = SUPPORTED.indexOf(version) >= 0;
    if (!supported) {
      var vkind = version === null || typeof version === "string" ? null :
        typeof version === "boolean" ? "boolean" :
        typeof version === "number" || typeof version === "bigint" ? "number" :
        Array.isArray(version) ? "array" : "object";
      reasons.push("unsupported-schema-version: " + (version === null ? "null" : dump(version, "")) +
        (vkind ? " is a " + vkind + ", not a string" : "") + " (this verifier knows " +
        SUPPORTED.map(function (v) { return dump(v, ""); }).join(", ") + ")");
    } else if (kind === "certificate") {
      reasons = reasons.concat(schemaReasons(certificateErrors(schemas, obj)));
    } else {
      reasons = reasons.concat(schemaReasons(manifestProblems(obj, schemas)));
    }
    if (kind === "certificate") {
      var stated = obj.has("body_sha256") ? obj.get("body_sha256") : null;
      var body = new Map(obj);
      body.delete("body_sha256");
      var actual = await sha256(new TextEncoder().encode(canonicalText(body)));
      if (stated !== actual) {
        reasons.push("body-hash-mismatch: body_sha256 says " + (stated === null ? "None" : pyStr(stated)) +
          ", the body hashes to " + actual);
      }
    }
    reasons = reasons.concat(await theoremReasons(obj, kind, manifest));
    if (kind === "certificate" && supported) {
      var problems = policyProblems(obj);
      problems.forEach(function (p) { reasons.push("policy-violation: " + p); });
      if (!problems.length) {
        reasons.push("policy-ok: no finding, axioms within " + ALLOWED_AXIOMS.join(", ") + ", required checks passed");
      }
    }
    return verdict(reasons, name, sha, kind, result);
  }

  /* What a certificate says it rests on (its trust field), as pytools.publish.trust.trust_lines
   * renders it: the same lines, so the page, `pytools verify` and README say the same. */
  function trustLines(cert) {
    function get(m, k) { return m instanceof Map ? m.get(k) : m[k]; }
    var t = get(cert, "trust");
    if (!t) return [];
    var kernel = get(t, "kernel"), issues = get(t, "kernel_issues");
    var lines = ["- Lean kernel: " + get(kernel, "kind") + " Lean " + get(kernel, "version") + ", commit `" +
      (get(kernel, "commit") || "unknown") + "` (read from " + get(kernel, "read_from") + ")."];
    var listed = get(issues, "issues");
    if (!get(issues, "assessed")) {
      lines.push("- Known kernel soundness issues: not assessed for this version (the list covers " +
        get(issues, "assessed_for").join(", ") + ").");
    } else if (!listed.length) {
      lines.push("- Known kernel soundness issues fixed later: none known.");
    } else {
      lines.push("- Known kernel soundness issues of this version, fixed later:");
      listed.forEach(function (i) {
        var rules = get(i, "excluded_by_rules").map(function (r) { return "`" + r + "`"; }).join(", ") || "none";
        lines.push("  - " + get(i, "id") + " (fixed by " + get(i, "fixed_by").join(", ") + ", merged " +
          get(i, "merged") + "): " + get(i, "title") + ". Needs " + get(i, "needs") + ". Rules excluding it: " +
          rules + ". Not excluded: " + get(i, "not_excluded") + ".");
      });
    }
    [["olean_reader", "`.olean` reader"], ["audit_rules", "audit rules"], ["kernel_replay", "kernel replay driver"],
      ["browser_verifier", "browser verifier"]].forEach(function (p) {
      var part = get(t, p[0]);
      var extra = p[0] === "audit_rules" ? " (" + get(part, "rules").length + " rules)" : "";
      lines.push("- " + p[1] + extra + ": SHA-256 `" + get(part, "sha256") + "` of " + get(part, "files").join(", ") + ".");
    });
    var signing = get(t, "signing");
    lines.push("- Signing: " + get(signing, "certificate") + "; " + get(signing, "release") + ".");
    return lines;
  }

  /* Normalise a pin typed by a person: 64 hex digits, lower case; throws otherwise. */
  function normalisePin(text) {
    var pin = String(text).trim();
    if (!/^[0-9a-fA-F]{64}$/.test(pin)) throw new KeyFileError("--manifest-sha256 '" + text + "': not 64 hex digits");
    return pin.toLowerCase();
  }

  return {
    MAX_BYTES: MAX_BYTES, KEYWORDS: KEYWORDS, parse: parse, canonicalText: canonicalText, pyFloat: pyFloat,
    sha256: sha256, schemaErrors: schemaErrors, certificateErrors: certificateErrors, loadManifest: loadManifest,
    ManifestError: ManifestError, KeyFileError: KeyFileError, parsePublicKeys: parsePublicKeys,
    ed25519Supported: ed25519Supported, checkAnchor: checkAnchor, anchorSummary: anchorSummary,
    verifyBytes: verifyBytes, unreadable: unreadable, normalisePin: normalisePin, JsonError: JsonError, b64decode: b64decode,
    meaning: meaning, trustLines: trustLines
  };
})();
if (typeof module !== "undefined" && module.exports) { module.exports = PCV; }
