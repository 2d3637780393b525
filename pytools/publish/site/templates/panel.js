/* The verifier panel: drop files or pick a sample, give your own anchor (pin, key), show
 * green or red with the reasons. The page never fills in a key or a pin for you. */
(function () {
  var data = JSON.parse(document.getElementById("pcv-data").textContent);
  var schemas = data.schemas;
  var ENVELOPE_NAME = "MANIFEST.intoto.jsonl";
  var samples = {};
  data.samples.forEach(function (s) { samples[s.id] = s; });

  function b64bytes(b64) {
    var bin = atob(b64);
    var out = new Uint8Array(bin.length);
    for (var k = 0; k < bin.length; k++) out[k] = bin.charCodeAt(k);
    return out;
  }
  var embedded = null;
  async function embeddedManifest() {
    if (!embedded) embedded = await PCV.loadManifest(b64bytes(data.manifest.b64), schemas, data.manifest.name);
    return embedded;
  }

  var box = document.getElementById("verdict");
  var badge = document.getElementById("verdict-badge");
  var nameEl = document.getElementById("verdict-name");
  var anchorEl = document.getElementById("verdict-anchor");
  var shaEl = document.getElementById("verdict-sha");
  var list = document.getElementById("verdict-reasons");
  var more = document.getElementById("verdicts-more");

  function reasonItem(r) {
    var li = document.createElement("li");
    var code = r.split(":")[0];
    var strong = document.createElement("code");
    strong.textContent = code;
    li.appendChild(strong);
    li.appendChild(document.createTextNode(r.slice(code.length)));
    li.className = "reason r-" + code;
    li.title = PCV.meaning(code);
    return li;
  }
  function show(state, name, v, anchorText) {
    box.className = "verdict " + state;
    box.setAttribute("data-state", state);
    box.setAttribute("data-codes", v ? v.codes.join(" ") : "");
    badge.textContent = state === "loading" ? "loading" : state === "green" ? "GREEN" :
      state === "red" ? "RED" : "error";
    badge.className = "badge " + state;
    nameEl.textContent = name + (v ? "  (" + v.kind + (v.result ? " " + v.result : "") + ")" : "");
    anchorEl.textContent = anchorText || "";
    shaEl.textContent = v && v.sha256 ? "SHA-256 " + v.sha256 : "";
    list.textContent = "";
    (v ? v.reasons : []).forEach(function (r) { list.appendChild(reasonItem(r)); });
  }
  function showError(name, message) {
    show("error", name, null, "");
    shaEl.textContent = message;
  }

  /* Which dropped file is what: an envelope, a manifest to check against, or a subject. */
  function classify(files) {
    if (files.length === 1) return files.map(function (f) { return Object.assign({ role: "file" }, f); });
    var manifestSeen = false;
    return files.map(function (f) {
      if (/\.intoto\.jsonl$/.test(f.name)) return Object.assign({ role: "envelope" }, f);
      if (!manifestSeen) {
        try {
          var obj = PCV.parse(new TextDecoder("utf-8", { fatal: true }).decode(f.bytes));
          if (obj instanceof Map && obj.has("files") && !obj.has("result")) {
            manifestSeen = true;
            return Object.assign({ role: "manifest" }, f);
          }
        } catch (e) { /* not JSON: a subject */ }
      }
      return Object.assign({ role: "file" }, f);
    });
  }
  function defaultEnvelopeName(manifestName) {
    var at = manifestName.lastIndexOf("/");
    return at >= 0 ? manifestName.slice(0, at + 1) + ENVELOPE_NAME : ENVELOPE_NAME;
  }

  /* files: [{name, bytes, role}]; options: {pin, keys, requireSignature}. The verdict of every
   * subject file under the manifest and signature given (else the embedded ones). */
  async function verifySet(files, options) {
    var mfile = files.filter(function (f) { return f.role === "manifest"; })[0];
    var efile = files.filter(function (f) { return f.role === "envelope"; })[0];
    var manifest, envelope, envelopeName;
    if (mfile) {
      manifest = await PCV.loadManifest(mfile.bytes, schemas, mfile.name);
      envelope = efile ? efile.bytes : null;
      envelopeName = efile ? efile.name : defaultEnvelopeName(mfile.name);
    } else {
      manifest = await embeddedManifest();
      envelope = efile ? efile.bytes : data.envelope ? b64bytes(data.envelope.b64) : null;
      envelopeName = efile ? efile.name : data.envelope ? data.envelope.name : defaultEnvelopeName(data.manifest.name);
    }
    var anchor = await PCV.checkAnchor(manifest, options, envelope, envelopeName, schemas);
    var out = [];
    for (var k = 0; k < files.length; k++) {
      if (files[k].role !== "file") continue;
      out.push({ index: k, verdict: files[k].error !== undefined
        ? PCV.unreadable(files[k].name, files[k].error, anchor)
        : await PCV.verifyBytes(files[k].bytes, manifest, schemas, files[k].name, anchor,
          files[k].size) });
    }
    return { manifest: manifest, anchor: anchor, verdicts: out };
  }
  function anchorLine(result) {
    return "Manifest " + result.manifest.path + " (SHA-256 " + result.manifest.sha256 + "): " +
      PCV.anchorSummary(result.anchor);
  }

  async function sampleOptions(s) {
    var keys = [];
    for (var k = 0; k < s.keys.length; k++) keys = keys.concat(await PCV.parsePublicKeys(s.keys[k], "pasted key"));
    return { pin: s.pin, keys: keys, requireSignature: s.requireSignature || keys.length > 0 };
  }
  function sampleFiles(s) {
    return s.files.map(function (f) { return { name: f.name, role: f.role, bytes: b64bytes(f.b64) }; });
  }

  var seq = 0;
  async function run(files, optionsPromise) {
    var mine = ++seq;
    var subjects = files.filter(function (f) { return f.role === "file"; });
    show("loading", subjects.length ? subjects[0].name : "(no file to check)", null, "");
    more.textContent = "";
    try {
      var options = await optionsPromise;
      var result = await verifySet(files, options);
      if (mine !== seq) return;
      if (!result.verdicts.length) { showError("(no file to check)", "only a manifest or a signature was given"); return; }
      if (result.verdicts.length === 1) {
        var only = result.verdicts[0].verdict;
        show(only.green ? "green" : "red", files[result.verdicts[0].index].name, only, anchorLine(result));
      } else {
        showOverall(files, result);
      }
      showTrust(files, result.verdicts);
    } catch (e) {
      if (mine === seq) showError(subjects.length ? subjects[0].name : "(input)", String(e && e.message ? e.message : e));
    }
  }

  /* Several files: one verdict over them all (red if any file is red, as the command line's
   * exit status 1), the first red file's reasons in the box, and every file listed below it. */
  function showOverall(files, result) {
    var reds = result.verdicts.filter(function (item) { return !item.verdict.green; });
    var lead = reds.length ? reds[0] : null;
    var count = result.verdicts.length;
    show(lead ? "red" : "green", count + " files: " + (count - reds.length) + " green, " +
      reds.length + " red" + (lead ? "; first red: " + files[lead.index].name : ""),
      lead ? lead.verdict : null, anchorLine(result));
    result.verdicts.forEach(function (item) {
      var v = item.verdict;
      var li = document.createElement("li");
      li.className = "more " + (v.green ? "green" : "red");
      li.setAttribute("data-codes", v.codes.join(" "));
      li.textContent = (v.green ? "GREEN " : "RED ") + files[item.index].name + "  (" + v.kind +
        (v.result ? " " + v.result : "") + ")" + (v.green ? "" : ": " + v.codes.join(", "));
      more.appendChild(li);
    });
  }

  /* What the first green certificate says it rests on (its trust field), under the verdicts. */
  function showTrust(files, verdicts) {
    var green = verdicts.filter(function (v) { return v.verdict.green && v.verdict.kind === "certificate"; })[0];
    if (!green) return;
    var lines = PCV.trustLines(PCV.parse(new TextDecoder().decode(files[green.index].bytes)));
    var li = document.createElement("li");
    li.className = "trust";
    li.textContent = "What " + files[green.index].name + " rests on:\n" + lines.join("\n");
    more.appendChild(li);
  }

  async function userOptions() {
    var pinText = document.getElementById("pin").value.trim();
    var pem = document.getElementById("pubkey").value.trim();
    var pin = pinText ? PCV.normalisePin(pinText) : null;
    var keys = pem ? await PCV.parsePublicKeys(pem, "pasted key") : [];
    var require = document.getElementById("require-sig").checked;
    return { pin: pin, keys: keys, requireSignature: require || keys.length > 0 };
  }
  async function checkFiles(fileList) {
    var files = [];
    for (var k = 0; k < fileList.length; k++) {
      var f = fileList[k];
      if (f.size > PCV.MAX_BYTES) { /* not read: its size says enough */
        files.push({ name: f.name, bytes: new Uint8Array(0), size: f.size });
        continue;
      }
      try {
        files.push({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) });
      } catch (e) {
        files.push({ name: f.name, bytes: new Uint8Array(0), error: String(e && e.message || e) });
      }
    }
    await run(classify(files), userOptions());
  }

  document.querySelectorAll("button.sample").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var s = samples[btn.getAttribute("data-sample")];
      run(sampleFiles(s), sampleOptions(s));
    });
  });
  var input = document.getElementById("file");
  input.addEventListener("change", function () {
    if (input.files && input.files.length) {
      var chosen = Array.from(input.files);
      input.value = ""; /* so that choosing the same file again checks it again */
      checkFiles(chosen);
    }
  });
  var drop = document.getElementById("drop");
  ["dragenter", "dragover"].forEach(function (ev) {
    drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.add("over"); });
  });
  ["dragleave", "drop"].forEach(function (ev) {
    drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.remove("over"); });
  });
  drop.addEventListener("drop", function (e) {
    var fl = e.dataTransfer && e.dataTransfer.files;
    if (fl && fl.length) checkFiles(fl);
  });
  /* Stop a file dropped outside the zone from replacing the page. */
  window.addEventListener("dragover", function (e) { e.preventDefault(); });
  window.addEventListener("drop", function (e) { e.preventDefault(); });

  /* Self-check: this page's verdicts against the command line's, embedded at build time. */
  (async function () {
    var edEl = document.getElementById("ed25519");
    var ed = await PCV.ed25519Supported();
    edEl.setAttribute("data-state", ed ? "yes" : "no");
    edEl.textContent = ed ? "This browser verifies Ed25519 signatures (WebCrypto): a pasted key is checked here."
      : "This browser's WebCrypto cannot verify Ed25519 signatures: signatures are NOT checked on this page " +
        "(a key you paste is refused); check them with pytools verify --key.";
    var el = document.getElementById("selfcheck");
    var agree = 0, skipped = 0, results = [];
    try {
      for (var k = 0; k < data.samples.length; k++) {
        var s = data.samples[k];
        if (s.keys.length && !ed) { skipped++; results.push({ id: s.id, skipped: true }); continue; }
        var r = await verifySet(sampleFiles(s), await sampleOptions(s));
        var v = r.verdicts.filter(function (x) { return x.index === s.subject; })[0].verdict;
        var ok = v.green === s.expected.green && v.reasons.join("\n") === s.expected.reasons.join("\n");
        if (ok) agree++;
        results.push({ id: s.id, green: v.green, codes: v.codes, agrees: ok });
      }
      var checked = data.samples.length - skipped;
      el.textContent = "Self-check: this page and the command line agree on " + agree + " of " + checked +
        " samples (verdict and every reason)" + (skipped ? "; " + skipped + " signed sample(s) skipped: no Ed25519 here" : "") + ".";
      el.setAttribute("data-state", agree === checked ? "agree" : "disagree");
    } catch (e) {
      el.textContent = "Self-check failed: " + (e && e.message ? e.message : e);
      el.setAttribute("data-state", "error");
    }
    window.PCV_SELFCHECK = results;
  })();
})();
