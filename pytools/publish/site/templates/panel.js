/* The verifier panel: drop a file or pick a sample, show green or red with the reasons. */
(function () {
  var data = JSON.parse(document.getElementById("pcv-data").textContent);
  var samples = {};
  data.samples.forEach(function (s) { samples[s.id] = s; });

  function b64bytes(b64) {
    var bin = atob(b64);
    var out = new Uint8Array(bin.length);
    for (var k = 0; k < bin.length; k++) out[k] = bin.charCodeAt(k);
    return out;
  }

  var box = document.getElementById("verdict");
  var badge = document.getElementById("verdict-badge");
  var nameEl = document.getElementById("verdict-name");
  var shaEl = document.getElementById("verdict-sha");
  var list = document.getElementById("verdict-reasons");

  function show(state, name, v) {
    box.className = "verdict " + state;
    box.setAttribute("data-state", state);
    box.setAttribute("data-codes", v ? v.codes.join(" ") : "");
    badge.textContent = state === "loading" ? "loading" : state === "green" ? "GREEN" :
      state === "red" ? "RED" : "error";
    badge.className = "badge " + state;
    nameEl.textContent = name + (v ? "  (" + v.kind + (v.result ? " " + v.result : "") + ")" : "");
    shaEl.textContent = v && v.sha256 ? "SHA-256 " + v.sha256 : "";
    list.textContent = "";
    (v ? v.reasons : []).forEach(function (r) {
      var li = document.createElement("li");
      var code = r.split(":")[0];
      var strong = document.createElement("code");
      strong.textContent = code;
      li.appendChild(strong);
      li.appendChild(document.createTextNode(r.slice(code.length)));
      li.className = "reason r-" + code;
      list.appendChild(li);
    });
  }

  var seq = 0;
  async function check(bytes, name) {
    var mine = ++seq;
    show("loading", name, null);
    try {
      var v = await PCV.verifyBytes(bytes, data.manifest, data.schemas, name);
      if (mine === seq) show(v.green ? "green" : "red", name, v);
    } catch (e) {
      if (mine === seq) {
        show("error", name, null);
        shaEl.textContent = String(e && e.message ? e.message : e);
      }
    }
  }

  async function checkFile(file) {
    if (file.size > PCV.MAX_BYTES) {
      show("red", file.name, { green: false, kind: "unknown", sha256: "", result: null,
        reasons: ["too-large: " + file.size + " bytes (limit " + PCV.MAX_BYTES + ")"], codes: ["too-large"] });
      return;
    }
    var buf = await file.arrayBuffer();
    await check(new Uint8Array(buf), file.name);
  }

  document.querySelectorAll("button.sample").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var s = samples[btn.getAttribute("data-sample")];
      check(b64bytes(s.b64), s.filename);
    });
  });
  var input = document.getElementById("file");
  input.addEventListener("change", function () {
    if (input.files && input.files[0]) checkFile(input.files[0]);
  });
  var drop = document.getElementById("drop");
  ["dragenter", "dragover"].forEach(function (ev) {
    drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.add("over"); });
  });
  ["dragleave", "drop"].forEach(function (ev) {
    drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.remove("over"); });
  });
  drop.addEventListener("drop", function (e) {
    var f = e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files[0];
    if (f) checkFile(f);
  });
  /* Stop a file dropped outside the zone from replacing the page. */
  window.addEventListener("dragover", function (e) { e.preventDefault(); });
  window.addEventListener("drop", function (e) { e.preventDefault(); });

  /* Self-check: this page's verdicts against the command line's, embedded at build time. */
  (async function () {
    var el = document.getElementById("selfcheck");
    var agree = 0, results = [];
    try {
      for (var k = 0; k < data.samples.length; k++) {
        var s = data.samples[k];
        var v = await PCV.verifyBytes(b64bytes(s.b64), data.manifest, data.schemas, s.filename);
        var ok = v.green === s.expected.green && v.codes.join(" ") === s.expected.codes.join(" ");
        if (ok) agree++;
        results.push({ id: s.id, green: v.green, codes: v.codes, agrees: ok });
      }
      el.textContent = "Self-check: this page and the command line agree on " + agree + " of " +
        data.samples.length + " samples (verdict and reason codes).";
      el.setAttribute("data-state", agree === data.samples.length ? "agree" : "disagree");
    } catch (e) {
      el.textContent = "Self-check failed: " + (e && e.message ? e.message : e);
      el.setAttribute("data-state", "error");
    }
    window.PCV_SELFCHECK = results;
  })();
})();
