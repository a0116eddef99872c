// Relationship editor: Conan labels searchable in English or Chinese, chosen as chips. Enter takes
// the highlighted hit of a search for exactly what is typed (the server ranks an exact label first).
"use strict";
(function () {
  const form = document.getElementById("relform"); if (!form) return;
  const input = document.getElementById("label-search"), results = document.getElementById("label-results");
  const chosen = document.getElementById("chosen-labels");
  let timer = null, cursor = 0, shownFor = null;
  function choose(label, zh) {
    label = label.trim().toLowerCase(); if (!label) return;
    if (Array.from(chosen.querySelectorAll("input")).some((i) => i.value === label)) return;
    const li = document.createElement("li"); li.className = "chip"; li.textContent = zh ? `${label} · ${zh}` : label;
    const hidden = document.createElement("input"); hidden.type = "hidden"; hidden.name = "labels"; hidden.value = label;
    const x = document.createElement("button"); x.type = "button"; x.textContent = "×"; x.dataset.unlabel = "";
    li.append(hidden, x); chosen.appendChild(li);
    input.value = ""; results.innerHTML = "";
  }
  chosen.addEventListener("click", (e) => { if (e.target.matches("[data-unlabel]")) e.target.closest("li").remove(); });
  async function search() {
    const q = input.value.trim();
    if (!q) { results.innerHTML = ""; shownFor = null; return; }
    const res = await fetch(form.dataset.labelUrl + "?q=" + encodeURIComponent(q), { credentials: "same-origin" });
    const data = await res.json();
    if (input.value.trim() !== q) return;  // a later keystroke owns the list
    results.innerHTML = ""; cursor = 0; shownFor = q;
    data.labels.forEach((item, i) => {
      const li = document.createElement("li"); li.dataset.label = item.label; li.dataset.zh = item.zh || "";
      if (i === 0) li.classList.add("cursor");
      if (item.exact) li.classList.add("exact");
      const b = document.createElement("b"); b.textContent = item.label;
      li.append(b, item.zh ? ` ${item.zh} ` : " ");
      const small = document.createElement("small");
      small.textContent = [item.canonical !== item.label ? item.canonical : "", item.category, item.category_zh].filter(Boolean).join(" · ");
      li.appendChild(small); results.appendChild(li);
    });
  }
  function moveCursor(step) {
    const items = results.querySelectorAll("li"); if (!items.length) return;
    items[cursor].classList.remove("cursor");
    cursor = (cursor + step + items.length) % items.length;
    items[cursor].classList.add("cursor"); items[cursor].scrollIntoView({ block: "nearest" });
  }
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(search, 150); });
  input.addEventListener("keydown", async (e) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") { e.preventDefault(); moveCursor(e.key === "ArrowDown" ? 1 : -1); return; }
    if (e.key !== "Enter") return;
    e.preventDefault();
    if (shownFor !== input.value.trim()) { clearTimeout(timer); await search(); }  // never pick from a stale list
    const item = results.querySelectorAll("li")[cursor];
    if (item) choose(item.dataset.label, item.dataset.zh); else choose(input.value);
  });
  results.addEventListener("click", (e) => { const li = e.target.closest("li"); if (li) choose(li.dataset.label, li.dataset.zh); });
  form.addEventListener("submit", () => { if (input.value.trim()) choose(input.value); });
})();
