// Question generation pages: live job progress, keyboard review of generated options, select-all.
"use strict";
(function () {
  const $ = (s, r = document) => r.querySelector(s);
  const $$ = (s, r = document) => Array.from(r.querySelectorAll(s));
  const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  const csrf = () => { const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/); return m ? decodeURIComponent(m[1]) : ""; };

  // Select all questions.
  const all = $("[data-select-all]");
  if (all) all.addEventListener("change", () => $$('input[name="question"]').forEach((b) => { b.checked = all.checked; }));

  // Job page: poll the JSON status until the job has finished.
  const job = $("[data-job-status]");
  if (job) {
    const field = (name) => $(`[data-field="${name}"]`, job);
    const tick = async () => {
      let data;
      try { data = await (await fetch(job.dataset.jobStatus, { headers: { Accept: "application/json" } })).json(); }
      catch (e) { setTimeout(tick, 3000); return; }
      window.Casebook.showJob(job, data);
      field("state").textContent = data.state;
      field("progress").textContent = `${data.done} / ${data.total}`;
      field("message").textContent = data.message;
      field("bar").max = data.total || 1; field("bar").value = data.done;
      const list = field("failures"); list.textContent = "";
      if (!data.failures.length) { const li = document.createElement("li"); li.className = "muted"; li.textContent = "none"; list.append(li); }
      data.failures.forEach((f) => { const li = document.createElement("li"); li.textContent = `#${f.question} ${f.stem} — ${f.error}`; list.append(li); });
      if (!data.finished) setTimeout(tick, 1000);
    };
    tick();
  }

  // Review page: j/k move, a accept, e edit, r reject (fetch with JSON; the forms work without JS too).
  const rows = $$("[data-review-row]");
  if (!rows.length) return;
  const error = $("[data-review-error]");
  let cursor = 0;
  const show = (i) => {
    rows.forEach((r) => r.classList.remove("gen-cursor"));
    cursor = Math.max(0, Math.min(rows.length - 1, i));
    rows[cursor].classList.add("gen-cursor");
    rows[cursor].scrollIntoView({ block: "nearest" });
  };
  let busy = false;  // one request at a time, so a fast typist never acts on the wrong row
  const send = async (row, action, text) => {
    if (busy) return false;
    busy = true;
    try { return await post(row, action, text); } finally { busy = false; }
  };
  const post = async (row, action, text) => {
    const body = new URLSearchParams({ action, version: row.dataset.version });
    if (text !== undefined) body.set("text", text);
    const response = await fetch(row.dataset.url, {
      method: "POST", body, headers: { "X-CSRFToken": csrf(), Accept: "application/json" },
    });
    const data = await response.json();
    if (!data.ok) { error.textContent = data.error; error.hidden = false; return false; }
    error.hidden = true;
    row.dataset.version = data.option_version;
    const hidden = $("input[name=version]", row);
    if (hidden) hidden.value = data.option_version;
    row.className = row.className.replace(/rv-(pending|accepted|edited|rejected)/, `rv-${data.review}`);
    $("[data-review]", row).textContent = data.review;
    $("[data-text]", row).textContent = data.text;
    relabel(row.closest("table"));
    return true;
  };
  const relabel = (table) => {  // letters over the options that will be exported
    let n = 0;
    $$("tr", table).forEach((tr) => {
      const cell = $("[data-letter]", tr);
      if (tr.classList.contains("rv-rejected")) cell.textContent = "—";
      else cell.textContent = "abcdefghij"[n++] || "?";
    });
  };
  const edit = (row) => {
    const input = $(".rv-edit", row);
    input.focus(); input.select();
    const done = async (e) => {
      if (e.key === "Enter") { e.preventDefault(); if (await send(row, "edit", input.value)) { input.blur(); show(cursor + 1); } }
      else if (e.key === "Escape") { input.value = $("[data-text]", row).textContent; input.blur(); }
      else return;
      input.removeEventListener("keydown", done);
    };
    input.addEventListener("keydown", done);
  };
  $$(".rv-form").forEach((form) => form.addEventListener("submit", async (e) => {
    const action = e.submitter && e.submitter.value;
    if (!action) return;
    e.preventDefault();
    const row = form.closest("[data-review-row]");
    show(rows.indexOf(row));
    await send(row, action, action === "edit" ? $(".rv-edit", row).value : undefined);
  }));
  document.addEventListener("keydown", async (e) => {
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
    const row = rows[cursor];
    if (e.key === "j") { e.preventDefault(); e.stopImmediatePropagation(); show(cursor + 1); }
    else if (e.key === "k") { e.preventDefault(); e.stopImmediatePropagation(); show(cursor - 1); }
    else if (e.key === "a") { e.preventDefault(); if (await send(row, "accept")) show(cursor + 1); }
    else if (e.key === "r") { e.preventDefault(); if (await send(row, "reject")) show(cursor + 1); }
    else if (e.key === "e") { e.preventDefault(); edit(row); }
  }, true);
  show(0);
})();
