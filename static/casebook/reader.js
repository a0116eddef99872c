// Reader: turn a text selection into an evidence span.
// Offsets are measured in UTF-16 code units (what the DOM gives) from the start of the <pre>;
// the server converts them to code points and checks the quote against the stored text.
"use strict";
(function () {
  const root = document.querySelector(".reader"); if (!root) return;
  const bar = document.getElementById("selbar"), quoteEl = document.getElementById("selquote");
  const errorEl = document.getElementById("span-error"), list = document.getElementById("span-list");
  let current = null;

  function selectionInDoc() {
    const sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    const range = sel.getRangeAt(0);
    const node = range.startContainer.nodeType === 1 ? range.startContainer : range.startContainer.parentElement;
    const doc = node && node.closest(".doc");
    if (!doc || !doc.contains(range.endContainer)) return null;
    const before = document.createRange();
    before.selectNodeContents(doc); before.setEnd(range.startContainer, range.startOffset);
    const start = before.toString().length, quote = range.toString();
    return { doc, start, end: start + quote.length, quote };
  }

  document.addEventListener("selectionchange", () => {
    current = selectionInDoc();
    bar.hidden = !current;
    if (current) quoteEl.textContent = current.quote.length > 200 ? current.quote.slice(0, 200) + "…" : current.quote;
  });

  async function makeSpan() {
    if (!current) return;
    const body = { document: current.doc.dataset.document, owner_id: current.doc.dataset.owner || null,
      start: current.start, end: current.end, quote: current.quote, unit: "utf16" };
    errorEl.hidden = true;
    const res = await fetch(root.dataset.spanUrl, { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": Casebook.csrf() }, body: JSON.stringify(body) });
    const data = await res.json().catch(() => ({ error: "The server did not answer clearly; try again." }));
    if (!res.ok) { errorEl.textContent = data.error; errorEl.hidden = false; return; }
    const item = document.getElementById("span-item").content.firstElementChild.cloneNode(true);
    item.dataset.span = data.id; item.classList.add("new");
    item.querySelector(".q").textContent = data.label;
    item.querySelectorAll("a[data-link]").forEach((a) => { a.href += data.id; });
    list.prepend(item);
    window.getSelection().removeAllRanges();
  }
  document.getElementById("make-span").addEventListener("click", makeSpan);
  document.addEventListener("keydown", (e) => {
    if (e.key === "e" && !e.ctrlKey && !e.metaKey && !e.altKey && !Casebook.typing(e.target) && current) { e.preventDefault(); makeSpan(); }
  });
  const hl = document.querySelector("mark.hl"); if (hl) hl.scrollIntoView({ block: "center" });
})();
