// Question editor: fields per kind, options (add/remove/reorder/correct), shortcuts, autosave.
"use strict";
(function () {
  const form = document.getElementById("qform"); if (!form) return;
  const cfg = JSON.parse(form.dataset.config);
  const kind = document.getElementById("kind"), list = document.getElementById("options");
  const status = document.getElementById("autosave");
  let nextRow = Date.now() % 100000;

  function syncKind() {
    const k = kind.value, free = cfg.freeText.includes(k);
    const show = { options: !free, answer: free, premises: k === "inferential", image: cfg.image.includes(k),
      chain: k === "multi_step", multi: !cfg.single.includes(k) && !free, subtype: true };
    document.querySelectorAll("[data-show]").forEach((el) => { el.hidden = !show[el.dataset.show]; });
    const dl = document.getElementById("subtypes"); dl.innerHTML = "";
    (cfg.subTypes[k] || []).forEach((s) => { const o = document.createElement("option"); o.value = s; dl.appendChild(o); });
    document.getElementById("weight").placeholder = "default " + (cfg.weights[k] || 1);
    const hint = document.querySelector('[data-hint="answer"]');
    if (hint) hint.textContent = k === "open_ended" ? "(ground-truth motive or method)" : k === "factual" ? "(cite the source span below)" : k === "inferential" ? "(the conclusion)" : "";
  }
  function letters() {
    list.querySelectorAll(".option").forEach((li, i) => { li.querySelector(".letter").textContent = "abcdefghij"[i] || "?"; });
  }
  function addOption(text) {
    const row = String(nextRow++);
    const li = document.createElement("li"); li.className = "option";
    li.innerHTML = '<input type="hidden" name="option_row"><span class="letter"></span>' +
      '<input type="checkbox" title="correct"><input class="grow" placeholder="Option text">' +
      '<button type="button" data-move="-1" title="Move up">↑</button><button type="button" data-move="1" title="Move down">↓</button>' +
      '<button type="button" data-remove title="Remove">✕</button>';
    li.children[0].value = row;
    li.children[2].name = "option_correct_" + row;
    li.children[3].name = "option_text_" + row; li.children[3].value = text || "";
    list.appendChild(li); letters(); return li;
  }
  list.addEventListener("click", (e) => {
    const li = e.target.closest(".option"); if (!li) return;
    if (e.target.matches("[data-remove]")) { li.remove(); }
    else if (e.target.matches("[data-move]")) {
      const step = parseInt(e.target.dataset.move, 10);
      if (step < 0 && li.previousElementSibling) list.insertBefore(li, li.previousElementSibling);
      if (step > 0 && li.nextElementSibling) list.insertBefore(li.nextElementSibling, li);
    }
    letters(); changed();
  });
  list.addEventListener("change", (e) => {
    // Single-answer kinds: ticking one option unticks the others.
    if (e.target.type === "checkbox" && e.target.checked && cfg.single.includes(kind.value)) {
      list.querySelectorAll('input[type=checkbox]').forEach((c) => { if (c !== e.target) c.checked = false; });
    }
  });
  document.getElementById("add-option").addEventListener("click", () => { addOption("").querySelector("input.grow").focus(); changed(); });
  kind.addEventListener("change", syncKind);
  const img = document.getElementById("image_clue"), preview = document.getElementById("image-preview");
  function syncImage() {
    const opt = img.options[img.selectedIndex], src = opt && opt.dataset.src;
    preview.hidden = !src; if (src) preview.src = src;
  }
  img.addEventListener("change", syncImage);
  document.addEventListener("keydown", (e) => {
    if (!e.altKey) return;
    if (e.key === "o" || e.key === "O") { e.preventDefault(); addOption("").querySelector("input.grow").focus(); }
    const n = parseInt(e.key, 10);
    if (n >= 1 && n <= 9) {
      const box = list.querySelectorAll(".option input[type=checkbox]")[n - 1];
      if (box) { e.preventDefault(); box.checked = !box.checked; box.dispatchEvent(new Event("change", { bubbles: true })); }
    }
  });

  // ---- drafts: localStorage at once, server copy every few seconds while typing ----
  function serialize() {
    const data = { fields: {}, options: [], evidence: [] };
    new FormData(form).forEach((v, k) => {
      if (k === "csrfmiddlewaretoken" || k === "version" || k.startsWith("option_") || k === "evidence") return;
      data.fields[k] = v;
    });
    list.querySelectorAll(".option").forEach((li) => { data.options.push([li.querySelector("input.grow").value, li.querySelector("input[type=checkbox]").checked]); });
    form.querySelectorAll('input[name=evidence]:checked').forEach((c) => data.evidence.push(c.value));
    if (!form.querySelector("input[name=multi]").checked) delete data.fields.multi;
    return data;
  }
  function restore(data) {
    Object.entries(data.fields || {}).forEach(([k, v]) => {
      const el = form.elements[k]; if (!el) return;
      if (el.type === "checkbox") el.checked = true; else el.value = v;
    });
    const multi = form.querySelector("input[name=multi]"); if (!("multi" in (data.fields || {}))) multi.checked = false;
    list.innerHTML = "";
    (data.options || []).forEach(([text, correct]) => { addOption(text).querySelector("input[type=checkbox]").checked = correct; });
    form.querySelectorAll("input[name=evidence]").forEach((c) => { c.checked = (data.evidence || []).includes(c.value); });
    syncKind(); syncImage();
  }
  const initial = JSON.stringify(serialize());
  let timer = null, lastServer = initial;
  function changed() {
    const now = serialize(), text = JSON.stringify(now);
    if (text === initial) { localStorage.removeItem(cfg.draftKey); return; }
    localStorage.setItem(cfg.draftKey, JSON.stringify({ data: now, version: cfg.version, at: new Date().toISOString() }));
    status.textContent = "Draft kept in this browser";
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (text === lastServer) return;
      try {
        const res = await fetch(cfg.draftUrl, { method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-CSRFToken": Casebook.csrf() },
          body: JSON.stringify({ data: now, version: cfg.version }) });
        if (res.ok) { lastServer = text; status.textContent = "Draft saved on the server " + new Date().toLocaleTimeString(); }
      } catch (err) { status.textContent = "Draft kept in this browser (server unreachable)"; }
    }, 1500);
  }
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  form.addEventListener("submit", () => { localStorage.removeItem(cfg.draftKey); });

  const hasError = !!document.getElementById("form-error");
  let found = null;
  try { found = JSON.parse(localStorage.getItem(cfg.draftKey) || "null"); } catch (err) { found = null; }
  if (!found && cfg.serverDraft) found = { data: cfg.serverDraft, version: cfg.serverDraftVersion, at: "saved on the server" };
  if (found && !hasError && JSON.stringify(found.data) !== initial) {
    const banner = document.getElementById("draft-banner");
    document.getElementById("draft-when").textContent = found.at + (found.version !== cfg.version ? ", made on version " + found.version : "");
    banner.hidden = false;
    document.getElementById("draft-restore").addEventListener("click", () => { restore(found.data); banner.hidden = true; changed(); });
    document.getElementById("draft-discard").addEventListener("click", () => {
      localStorage.removeItem(cfg.draftKey); banner.hidden = true;
      fetch(cfg.draftUrl, { method: "DELETE", credentials: "same-origin", headers: { "X-CSRFToken": Casebook.csrf() } });
    });
  }
  // ---- wrong options from the generator (LLM or offline), for the saved question ----
  const gen = document.getElementById("gen-box");
  if (gen) gen.addEventListener("click", async (e) => {
    const button = e.target.closest("[data-gen]"); if (!button) return;
    const say = (text, bad) => { const el = document.getElementById("gen-status"); el.textContent = text; el.className = bad ? "small error" : "small muted"; };
    if (JSON.stringify(serialize()) !== initial) { say("Save your changes first: the generator adds to the saved question.", true); return; }
    gen.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    say("Generating…");
    try {
      const res = await fetch(gen.dataset.url, { method: "POST", credentials: "same-origin",
        headers: { "X-CSRFToken": Casebook.csrf(), "Content-Type": "application/x-www-form-urlencoded" },
        body: "mode=" + encodeURIComponent(button.dataset.gen) });
      const started = await res.json().catch(() => ({ error: "The server did not answer clearly; try again." }));
      if (!res.ok) throw new Error(started.error);
      let job = {};
      for (;;) {
        job = await (await fetch(started.status_url, { credentials: "same-origin" })).json();
        if (job.finished) break;
        say(`Generating… ${job.message || ""}`);
        await new Promise((r) => setTimeout(r, 700));
      }
      if (job.failures && job.failures.length) throw new Error(job.failures[0].error);
      if (job.skipped && job.skipped.length) throw new Error(job.skipped[0].reason);
      if (job.state === "failed") throw new Error(job.message);
      localStorage.removeItem(cfg.draftKey);
      window.location.reload();
    } catch (err) {
      say(String(err.message || err), true);
      gen.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    }
  });
  syncKind(); syncImage(); letters();
})();
