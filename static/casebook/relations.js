// Relationship editor: searchable Conan labels (by label or fine variant), chosen as chips.
"use strict";
(function () {
  const form = document.getElementById("relform"); if (!form) return;
  const input = document.getElementById("label-search"), results = document.getElementById("label-results");
  const chosen = document.getElementById("chosen-labels");
  let timer = null;
  function choose(label) {
    label = label.trim().toLowerCase(); if (!label) return;
    if (Array.from(chosen.querySelectorAll("input")).some((i) => i.value === label)) return;
    const li = document.createElement("li"); li.className = "chip"; li.textContent = label;
    const hidden = document.createElement("input"); hidden.type = "hidden"; hidden.name = "labels"; hidden.value = label;
    const x = document.createElement("button"); x.type = "button"; x.textContent = "×"; x.dataset.unlabel = "";
    li.append(hidden, x); chosen.appendChild(li);
    input.value = ""; results.innerHTML = "";
  }
  chosen.addEventListener("click", (e) => { if (e.target.matches("[data-unlabel]")) e.target.closest("li").remove(); });
  async function search() {
    const q = input.value.trim(); results.innerHTML = "";
    if (!q) return;
    const res = await fetch(form.dataset.labelUrl + "?q=" + encodeURIComponent(q), { credentials: "same-origin" });
    const data = await res.json();
    data.labels.forEach((item) => {
      const li = document.createElement("li"); li.dataset.label = item.label; li.textContent = item.label + " ";
      const small = document.createElement("small"); small.textContent = [item.canonical, item.category].filter(Boolean).join(" · ");
      li.appendChild(small); results.appendChild(li);
    });
  }
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(search, 150); });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      const first = results.querySelector("li");
      choose(first ? first.dataset.label : input.value);
    }
  });
  results.addEventListener("click", (e) => { const li = e.target.closest("li"); if (li) choose(li.dataset.label); });
  form.addEventListener("submit", () => { if (input.value.trim()) choose(input.value); });
})();
