// Keyboard-driven review: j/k (from app.js) move the cursor; a approves, r rejects with a reason,
// x ticks the row for bulk, Shift+A approves the ticked rows; ? shows these keys in the help.
"use strict";
(function () {
  const $ = (s, r = document) => r.querySelector(s);
  const $$ = (s, r = document) => Array.from(r.querySelectorAll(s));
  const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));

  const keys = $("#help table.keys");
  if (keys) {
    [["a", "Review: approve the item under the cursor"], ["r", "Review: reject it with a reason"],
     ["x", "Review: tick / untick the row for a bulk action"], ["Shift+A", "Review: approve every ticked row"]]
      .forEach(([k, text]) => {
        const tr = document.createElement("tr");
        tr.innerHTML = `<td><kbd>${k}</kbd></td><td>${text}</td>`;
        keys.appendChild(tr);
      });
  }

  const current = () => {
    const cur = $("[data-row].cursor[data-transition]");
    if (cur) return cur;
    const all = $$("[data-row][data-transition]");
    return all.length === 1 ? all[0] : null;
  };
  const dialog = $("#reject-dialog"), rejectForm = $("#reject-form"), approveForm = $("#approve-form");

  function approve(row) {
    if (!row || !approveForm) return;
    approveForm.action = row.dataset.transition;
    approveForm.querySelector("[name=version]").value = row.dataset.version || "";
    approveForm.submit();
  }
  function openReject(row) {
    if (!row || !dialog) return;
    rejectForm.action = row.dataset.transition;
    rejectForm.querySelector("[name=version]").value = row.dataset.version || "";
    $("[data-reject-label]", dialog).textContent = row.dataset.label || "";
    dialog.hidden = false;
    $("#reject-reason").focus();
  }
  const closeReject = () => { if (dialog) dialog.hidden = true; };
  $$("[data-reject-close]").forEach((b) => b.addEventListener("click", closeReject));
  if (rejectForm) {
    rejectForm.addEventListener("keydown", (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); rejectForm.requestSubmit(); }
      if (e.key === "Escape") closeReject();
    });
  }
  $$("[data-check-all]").forEach((box) => box.addEventListener("change", () => {
    $$("input[name=items]").forEach((b) => { b.checked = box.checked; });
  }));

  document.addEventListener("keydown", (e) => {
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
    if (dialog && !dialog.hidden) return;
    if (e.key === "a") { const row = current(); if (row) { e.preventDefault(); approve(row); } }
    else if (e.key === "r") { const row = current(); if (row) { e.preventDefault(); openReject(row); } }
    else if (e.key === "x") {
      const row = $("[data-row].cursor"); const box = row && row.querySelector("input[name=items]");
      if (box) { e.preventDefault(); box.checked = !box.checked; }
    } else if (e.key === "A") { const b = $("[data-bulk-approve]"); if (b) { e.preventDefault(); b.click(); } }
  });
})();
