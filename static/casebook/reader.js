// Reader: evidence spans as annotations — create, label, adjust (drag or keys), delete with undo.
// Offsets are UTF-16 code units (what the DOM gives) from the start of each <pre>; the server
// converts them to code points and re-reads the quote from the stored text, so what is drawn here
// is always what the server answered.
"use strict";
(function () {
  const dataEl = document.getElementById("reader-data"); if (!dataEl) return;
  const data = JSON.parse(dataEl.textContent);
  const $ = (id) => document.getElementById(id);
  const docs = Array.from(document.querySelectorAll(".doc"));
  const texts = docs.map((d) => d.textContent);  // the stored text of each pane, before any mark
  const spans = new Map(data.spans.map((s) => [s.id, s]));
  const undoStack = [];
  let current = null, chosen = null, drag = null;
  const bar = $("selbar"), errorEl = $("span-error"), list = $("span-list"), detail = $("span-detail");

  const labelName = (value) => (value ? data.labels[value] || value : "no label");
  const short = (text, n) => (text.length > n ? text.slice(0, n - 1) + "…" : text);
  function showError(message) { errorEl.textContent = message; errorEl.hidden = !message; }

  async function post(url, body) {
    showError("");
    const res = await fetch(url, { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": Casebook.csrf() }, body: JSON.stringify(body || {}) });
    const answer = await res.json().catch(() => ({ error: "The server did not answer clearly; try again." }));
    return { ok: res.ok, status: res.status, data: answer };
  }
  const urlFor = (name, id) => data.urls[name].replace(/\/0\/(delete\/)?$/, `/${id}/$1`);

  // ---- drawing: runs of text cut at every span boundary; overlapping spans stack in depth ----
  function render(pane) {
    const doc = docs[pane], text = texts[pane];
    const mine = [...spans.values()].filter((s) => s.pane === pane);
    const cuts = new Set([0, text.length]);
    mine.forEach((s) => { cuts.add(s.start); cuts.add(s.end); });
    const hl = pane === 0 && data.highlight ? data.highlight : null;
    if (hl) { cuts.add(hl[0]); cuts.add(hl[1]); }
    const points = [...cuts].filter((p) => p >= 0 && p <= text.length).sort((a, b) => a - b);
    const frag = document.createDocumentFragment();
    const handle = (edge) => { const h = document.createElement("span"); h.className = `handle ${edge}`; h.dataset.edge = edge; h.title = `Drag to move the ${edge}`; return h; };
    for (let i = 0; i + 1 < points.length; i++) {
      const a = points[i], b = points[i + 1];
      if (chosen && !chosen.locked && chosen.pane === pane && chosen.start === a) frag.append(handle("start"));
      const covering = mine.filter((s) => s.start <= a && s.end >= b).sort((x, y) => (y.end - y.start) - (x.end - x.start));
      const piece = text.slice(a, b), inHl = hl && hl[0] <= a && hl[1] >= b;
      if (!covering.length && !inHl) { frag.append(piece); }
      else {
        const mark = document.createElement("mark");
        mark.textContent = piece;
        if (inHl) mark.classList.add("hl");
        if (covering.length) {
          const top = covering[covering.length - 1];  // the innermost (shortest) span decides the colour
          mark.classList.add("span", `d${Math.min(covering.length, 4)}`);
          mark.dataset.spans = covering.map((s) => s.id).join(" ");
          mark.dataset.label = top.label || "none";
          if (covering.some((s) => s.start === a)) mark.classList.add("bs");
          if (covering.some((s) => s.end === b)) mark.classList.add("be");
          if (chosen && covering.includes(chosen)) mark.classList.add("chosen");
          mark.title = covering.map((s) => `${labelName(s.label)}: “${short(s.quote, 40)}” — ${citedSummary(s)}`).join("\n");
        }
        frag.append(mark);
      }
      if (chosen && !chosen.locked && chosen.pane === pane && chosen.end === b) frag.append(handle("end"));
    }
    doc.replaceChildren(frag);
  }
  function citedSummary(s) {
    if (!s.cited.length) return "not cited yet";
    return "cited by " + s.cited.map((c) => `${c.kind} “${short(c.title, 30)}”`).join("; ");
  }

  function renderList() {
    const sorted = [...spans.values()].sort((x, y) => x.pane - y.pane || x.start - y.start || x.end - y.end);
    list.replaceChildren(...sorted.map((s) => {
      const li = document.createElement("li");
      li.dataset.span = s.id;
      if (s.isNew) li.classList.add("new");
      if (chosen === s) li.classList.add("chosen");
      const chip = document.createElement("span"); chip.className = `slabel l-${s.label || "none"}`; chip.textContent = labelName(s.label);
      const q = document.createElement("span"); q.className = "q"; q.textContent = ` “${short(s.quote, 60)}”`;
      const cite = document.createElement("span"); cite.className = "cite"; cite.textContent = citedSummary(s);
      li.append(chip, q, cite);
      li.addEventListener("click", () => choose(s, true));
      return li;
    }));
  }

  function renderDetail() {
    detail.hidden = !chosen;
    if (!chosen) return;
    $("detail-quote").textContent = `“${short(chosen.quote, 300)}”`;
    $("detail-where").textContent = `characters ${chosen.start}–${chosen.end} (browser units) · ${chosen.quote.length} long`;
    $("detail-label").value = chosen.label || "";
    // approved work cites it and this user may only read it: say so, and offer no control that would be refused
    $("detail-locked").hidden = !chosen.locked;
    $("detail-label").disabled = !!chosen.locked;
    $("delete-span").hidden = !!chosen.locked;
    detail.querySelectorAll("[data-nudge]").forEach((b) => { b.disabled = !!chosen.locked; });
    $("detail-cited").replaceChildren(...(chosen.cited.length ? chosen.cited.map((c) => {
      const li = document.createElement("li"), a = document.createElement("a");
      a.href = c.url; a.textContent = `${c.kind}: ${c.title}`;
      li.append(a, ` (${c.status})`); return li;
    }) : [Object.assign(document.createElement("li"), { className: "muted", textContent: "Nothing cites this span yet." })]));
    $("cite-question").href = `${data.urls.question}?evidence=${chosen.id}`;
    $("cite-relationship").href = `${data.urls.relationship}?evidence=${chosen.id}`;
  }

  function redraw() { docs.forEach((_, i) => render(i)); renderList(); renderDetail(); }
  function choose(span, scroll) {
    chosen = span || null; redraw();
    if (chosen && scroll) { const m = docs[chosen.pane].querySelector("mark.chosen"); if (m) m.scrollIntoView({ block: "center" }); }
  }
  function store(answer, isNew) {
    const old = spans.get(answer.id);
    const span = Object.assign(old || {}, answer, { isNew: isNew || (old && old.isNew) });
    spans.set(span.id, span);
    return span;
  }

  // ---- offsets of the DOM selection / a screen point, in UTF-16 units from the start of a <pre> ----
  function offsetIn(doc, node, offset) {
    const before = document.createRange();
    before.selectNodeContents(doc); before.setEnd(node, offset);
    return before.toString().length;
  }
  function selectionInDoc() {
    const sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    const range = sel.getRangeAt(0);
    const node = range.startContainer.nodeType === 1 ? range.startContainer : range.startContainer.parentElement;
    const doc = node && node.closest(".doc");
    if (!doc || !doc.contains(range.endContainer)) return null;
    const start = offsetIn(doc, range.startContainer, range.startOffset), quote = range.toString();
    return { doc, pane: Number(doc.dataset.pane), start, end: start + quote.length, quote };
  }
  function pointOffset(doc, x, y) {
    const caret = document.caretRangeFromPoint(x, y);
    if (!caret || !doc.contains(caret.startContainer)) return null;
    return offsetIn(doc, caret.startContainer, caret.startOffset);
  }

  document.addEventListener("selectionchange", () => {
    if (drag) return;
    current = selectionInDoc();
    bar.hidden = !current;
    $("move-span").hidden = !(current && chosen && !chosen.locked && chosen.pane === current.pane);
    if (current) $("selquote").textContent = short(current.quote, 200);
  });

  // ---- actions ----
  async function makeSpan() {
    if (!current) return;
    const { doc, pane } = current;
    const res = await post(data.urls.create, { document: doc.dataset.document, owner_id: doc.dataset.owner || null, pane,
      start: current.start, end: current.end, quote: current.quote, unit: "utf16", label: $("span-label").value });
    if (!res.ok) { showError(res.data.error); return; }
    window.getSelection().removeAllRanges();
    choose(store(res.data, true));
  }
  // Edits run one after another, each from the answer to the previous one, so quick key presses
  // never send a move computed from boundaries the server has already changed.
  let queue = Promise.resolve();
  function update(span, changes) {
    queue = queue.then(async () => {
      const body = typeof changes === "function" ? changes() : changes;
      if (!body) return;
      const res = await post(urlFor("span", span.id), Object.assign({ pane: span.pane, unit: "utf16" }, body));
      if (!res.ok) { showError(res.data.error); redraw(); return; }
      store(res.data); redraw();
    });
    return queue;
  }
  function nudge(edge, step) {
    if (!chosen) return;
    const span = chosen, text = texts[span.pane];
    const width = (at) => { const c = text.codePointAt(at); return c > 0xffff ? 2 : 1; };  // never split a surrogate pair
    const back = (at) => (at >= 2 && text.codePointAt(at - 2) > 0xffff ? 2 : 1);
    update(span, () => {
      let start = span.start, end = span.end;
      if (edge === "start") start = step > 0 ? start + width(start) : start - back(start);
      else end = step > 0 ? end + width(end) : end - back(end);
      return start < 0 || end > text.length || start >= end ? null : { start, end };
    });
  }
  async function remove(span, confirmed) {
    const res = await post(urlFor("delete", span.id), { confirm: !!confirmed });
    if (res.status === 409) { if (window.confirm(res.data.confirm + "\n\nDelete it anyway?")) remove(span, true); return; }
    if (!res.ok) { showError(res.data.error); return; }
    spans.delete(span.id);
    undoStack.push({ entry: res.data.undo, pane: span.pane });
    $("undo-text").textContent = `Deleted “${short(span.quote, 30)}”.`;
    $("undo-bar").hidden = false;
    choose(null);
  }
  async function undo() {
    const last = undoStack.pop(); if (!last) return;
    const res = await post(urlFor("undo", last.entry), { pane: last.pane });
    if (!res.ok) { showError(res.data.error); return; }
    $("undo-bar").hidden = undoStack.length === 0;
    choose(store(res.data, true), true);
  }

  $("make-span").addEventListener("click", makeSpan);
  $("move-span").addEventListener("click", () => { if (current && chosen) update(chosen, { start: current.start, end: current.end }); });
  $("delete-span").addEventListener("click", () => chosen && remove(chosen));
  $("undo-delete").addEventListener("click", undo);
  $("detail-label").addEventListener("change", (e) => chosen && update(chosen, { label: e.target.value }));
  detail.querySelectorAll("[data-nudge]").forEach((b) => b.addEventListener("click", () => {
    const [edge, step] = b.dataset.nudge.split(":"); nudge(edge, Number(step));
  }));

  docs.forEach((doc) => {
    doc.addEventListener("click", (e) => {
      const mark = e.target.closest("mark.span");
      if (!mark || !window.getSelection().isCollapsed) return;
      const ids = mark.dataset.spans.split(" ").map(Number);
      // clicking again on the chosen span cycles through the spans stacked there
      const at = chosen ? ids.indexOf(chosen.id) : -1;
      choose(spans.get(ids[at >= 0 ? (at + ids.length - 1) % ids.length : ids.length - 1]));
    });
    doc.addEventListener("pointerdown", (e) => {
      const h = e.target.closest(".handle"); if (!h || !chosen) return;
      e.preventDefault();
      drag = { edge: h.dataset.edge, pane: chosen.pane, from: [chosen.start, chosen.end] };
    });
  });
  // while dragging, the chosen span is redrawn at the pointer (a preview); the server decides on release
  document.addEventListener("pointermove", (e) => {
    if (!drag || !chosen) return;
    const at = pointOffset(docs[drag.pane], e.clientX, e.clientY); if (at === null) return;
    if (drag.edge === "start" && at < chosen.end && at !== chosen.start) { chosen.start = at; render(drag.pane); }
    if (drag.edge === "end" && at > chosen.start && at !== chosen.end) { chosen.end = at; render(drag.pane); }
  });
  document.addEventListener("pointerup", () => {
    if (!drag || !chosen) { drag = null; return; }
    const to = [chosen.start, chosen.end];
    [chosen.start, chosen.end] = drag.from; drag = null;
    if (to[0] !== chosen.start || to[1] !== chosen.end) update(chosen, { start: to[0], end: to[1] }); else redraw();
  });

  document.addEventListener("keydown", (e) => {
    if (Casebook.typing(e.target) || e.metaKey) return;
    if (e.ctrlKey && !e.altKey && e.key.toLowerCase() === "z" && undoStack.length) { e.preventDefault(); undo(); return; }
    if (e.ctrlKey || e.altKey) return;
    if (e.key === "e" && current) { e.preventDefault(); makeSpan(); return; }
    if (e.key === "m" && current && chosen && !chosen.locked) { e.preventDefault(); update(chosen, { start: current.start, end: current.end }); return; }
    if (!chosen || (chosen.locked && e.key !== "Escape")) return;
    if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      e.preventDefault(); nudge(e.shiftKey ? "start" : "end", e.key === "ArrowLeft" ? -1 : 1);
    } else if (e.key === "Delete" || e.key === "Backspace") { e.preventDefault(); remove(chosen); }
    else if (e.key === "Escape") { choose(null); }
  });

  redraw();
  const hl = document.querySelector("mark.hl"); if (hl) hl.scrollIntoView({ block: "center" });
})();
