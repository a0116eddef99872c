// Casebook shared behaviour: help overlay, keyboard navigation, list cursor, filters, zoom.
"use strict";
(function () {
  const $ = (s, r = document) => r.querySelector(s);
  const $$ = (s, r = document) => Array.from(r.querySelectorAll(s));
  const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));

  window.Casebook = {
    csrf() { const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/); return m ? decodeURIComponent(m[1]) : ""; },
    typing,
  };

  // Live job state: any [data-job-live=<status URL>] element polls until its job has finished, filling
  // [data-job-field=state|progress|message|bar], showing the queued hint and the resume form as the state
  // asks. Each state is also sent to the page as a "casebook:job" event on the element (detail = the
  // status), so a job page draws its own parts (ingest summary, synthesis failure, export problems) with
  // no poller of its own. data-job-initial names a json_script drawn at once; data-job-every sets the pace.
  window.Casebook.showJob = (box, data) => {
    const set = (name, text) => $$(`[data-job-field="${name}"]`, box).forEach((el) => { el.textContent = text; });
    set("state", data.state); set("message", data.message); set("progress", `${data.done} / ${data.total}`);
    $$('[data-job-field="bar"]', box).forEach((bar) => { bar.max = Math.max(data.total, 1); bar.value = data.done; });
    $$('[data-job-field="hint"]', box).forEach((el) => { el.hidden = data.state !== "queued"; });
    $$("[data-job-resume]", box).forEach((form) => { form.hidden = !data.resumable; });
    box.dataset.jobState = data.state;
    box.dispatchEvent(new CustomEvent("casebook:job", { detail: data }));
  };
  // After every deferred script has run, so the pages' "casebook:job" listeners see the first state too.
  document.addEventListener("DOMContentLoaded", () => $$("[data-job-live]").forEach((box) => {
    const every = Number(box.dataset.jobEvery) || 1500;
    const initial = box.dataset.jobInitial && document.getElementById(box.dataset.jobInitial);
    if (initial) window.Casebook.showJob(box, JSON.parse(initial.textContent));
    const poll = async () => {
      let data = null;
      try {
        const resp = await fetch(box.dataset.jobLive, { headers: { Accept: "application/json" }, credentials: "same-origin" });
        if (resp.ok) data = await resp.json();
      } catch (e) { /* transient: try again */ }
      if (data) window.Casebook.showJob(box, data);
      if (!data || !data.finished) setTimeout(poll, every);
    };
    if (!["done", "failed", "interrupted"].includes(box.dataset.jobState)) setTimeout(poll, Math.min(every, 1000));
  }));

  const help = $("#help");
  const toggleHelp = (show) => { if (help) help.hidden = show === undefined ? !help.hidden : !show; };
  $$("[data-help-open]").forEach((b) => b.addEventListener("click", () => toggleHelp(true)));
  $$("[data-help-close]").forEach((b) => b.addEventListener("click", () => toggleHelp(false)));

  // j/k cursor over [data-row] items; Enter opens the row's link.
  let cursor = -1;
  const rows = () => $$("[data-row]");
  function move(step) {
    const list = rows(); if (!list.length) return;
    if (cursor >= 0 && list[cursor]) list[cursor].classList.remove("cursor");
    cursor = Math.max(0, Math.min(list.length - 1, cursor + step));
    list[cursor].classList.add("cursor"); list[cursor].scrollIntoView({ block: "nearest" });
  }
  function openRow() {
    const row = rows()[cursor]; if (!row) return;
    const href = row.dataset.href || (row.matches("a") ? row.href : (row.querySelector("a") || {}).href);
    if (href) window.location.href = href;
  }
  $$("tr[data-href]").forEach((tr) => tr.addEventListener("click", (e) => {
    if (!e.target.closest("a,button,input,form")) window.location.href = tr.dataset.href;
  }));

  let pendingG = false;
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { toggleHelp(false); return; }
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
    if (pendingG) {
      pendingG = false;
      const link = $(`.tabs a[data-key="g ${e.key}"]`);
      if (link) { e.preventDefault(); window.location.href = link.href; }
      return;
    }
    if (e.key === "?") { e.preventDefault(); toggleHelp(); }
    else if (e.key === "g") { pendingG = true; setTimeout(() => { pendingG = false; }, 1200); }
    else if (e.key === "j") move(1);
    else if (e.key === "k") move(-1);
    else if (e.key === "Enter" && cursor >= 0) openRow();
    else if (e.key === "/") { const s = $("[data-search]"); if (s) { e.preventDefault(); s.focus(); s.select(); } }
    else if (e.key === "n") { const n = $('[data-key="n"]'); if (n) window.location.href = n.href; }
  });

  // Client-side filter of evidence pick lists.
  $$("input[data-filter-target]").forEach((input) => {
    const list = input.nextElementSibling;
    input.addEventListener("input", () => {
      const q = input.value.toLowerCase();
      $$("li", list).forEach((li) => { li.hidden = q && !li.textContent.toLowerCase().includes(q); });
    });
  });

  // Image zoom with OCR text beside.
  const zoom = $("#zoom");
  if (zoom) {
    const img = $("#zoom-img"), ocr = $("#zoom-ocr"); let scale = 1;
    const apply = () => { img.style.transform = `scale(${scale})`; };
    $$("img[data-zoom]").forEach((thumb) => thumb.addEventListener("click", () => {
      img.src = thumb.src; scale = 1; apply();
      const figure = thumb.closest("figure"), text = figure && figure.querySelector(".ocr");
      ocr.textContent = text ? text.textContent : ""; ocr.hidden = !text; zoom.hidden = false;
    }));
    $$("[data-zoom-step]").forEach((b) => b.addEventListener("click", () => { scale *= parseFloat(b.dataset.zoomStep); apply(); }));
    img.addEventListener("wheel", (e) => { e.preventDefault(); scale *= e.deltaY < 0 ? 1.1 : 0.9; apply(); }, { passive: false });
    $("[data-zoom-close]").addEventListener("click", () => { zoom.hidden = true; });
    document.addEventListener("keydown", (e) => { if (e.key === "Escape") zoom.hidden = true; });
  }

  // Reader: choosing a document shows it at once.
  $$(".docpick select").forEach((sel) => sel.addEventListener("change", () => sel.form.submit()));

  // Chain node form: show the fields of the chosen kind.
  const nodeKind = $("#node-kind");
  if (nodeKind) {
    const sync = () => $$("[data-node]").forEach((el) => { el.hidden = !el.dataset.node.split(" ").includes(nodeKind.value); });
    nodeKind.addEventListener("change", sync); sync();
  }
  // Editors: Ctrl+S / Ctrl+Enter submit the main form.
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && (e.key === "s" || e.key === "Enter")) {
      const form = $("#qform") || $("#relform") || $("#nodeform");
      if (form) { e.preventDefault(); form.requestSubmit(); }
    }
  });
})();
