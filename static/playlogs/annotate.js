// Played-session annotation: one turn at a time, keyboard-first, with a live belief matrix
// (Eq. 15, suspicions carried forward) and a suspicion-over-time chart.
"use strict";
(function () {
  const $ = (s) => document.querySelector(s);
  const data = JSON.parse($("#pl-data").textContent);
  const P = data.players, N = P.length;
  const COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];
  let cur = 0, pending = null, form = null, source = "human";
  const base = window.location.pathname;

  const blank = () => ({ triplets: [], face: "", tone: "", suspicions: {} });
  const copy = (a) => JSON.parse(JSON.stringify({ triplets: a.triplets, face: a.face, tone: a.tone, suspicions: a.suspicions }));
  const labelOf = (t) => t.mine || t.reference;

  function option(sel, value, text) { const o = document.createElement("option"); o.value = value; o.textContent = text; sel.appendChild(o); }
  data.actions.forEach((a, i) => option($("#pl-action"), a, `${i + 1}. ${a}`));
  P.forEach((p, i) => option($("#pl-object"), p, `${i + 1}. ${p}`));
  ["#pl-face", "#pl-tone"].forEach((s) => { option($(s), "", "—"); data.emotions.forEach((e, i) => option($(s), e, `${i + 1}. ${e} ${data.emotionsZh[e] || ""}`)); });

  // Suspicion state after turn i: the form for the current turn, saved/reference labels before it.
  function stateAfter(i) {
    const state = {};
    for (let k = 0; k <= i; k++) {
      const a = k === cur ? form : labelOf(data.turns[k]);
      if (a) Object.entries(a.suspicions || {}).forEach(([who, s]) => { state[who] = s.slice(); });
    }
    return state;
  }
  function matrix(state) {
    return P.map((who) => {
      const s = (state[who] || []).filter((x) => P.includes(x));
      return P.map((x) => (s.length ? (s.includes(x) ? 1 / s.length : 0) : 1 / N));
    });
  }
  const toward = (m) => P.map((_, k) => m.reduce((sum, row, j) => sum + (j === k ? 0 : row[k]), 0));

  function renderTurn() {
    const t = data.turns[cur];
    $("#pl-pos").textContent = `turn ${cur + 1} / ${data.turns.length}${t.phase ? " · " + t.phase : ""}`;
    $("#pl-text").textContent = `${t.label || "?"}: ${t.text}`;
    $("#pl-state").textContent = t.mine ? `${t.mine.status} · v${t.mine.version}${t.mine.reason ? " · " + t.mine.reason : ""}`
      : "not annotated by you";
    $("#pl-reference").textContent = t.reference && t.reference !== t.mine
      ? `Reference (${t.reference.source}${t.reference.annotator ? " by " + t.reference.annotator : ""}): ` +
        (t.reference.triplets.map((x) => x.join(" ")).join("; ") || "no triplets") : "";
    $("#pl-submit").disabled = !(t.mine && ["draft", "rejected"].includes(t.mine.status));
    renderOthers(t); renderForm();
  }
  function renderForm() {
    const t = data.turns[cur];
    const ol = $("#pl-triplets"); ol.innerHTML = "";
    form.triplets.forEach((x, i) => {
      const li = document.createElement("li"); li.textContent = x.join(" · ") + " ";
      const b = document.createElement("button"); b.type = "button"; b.textContent = "×"; b.title = "remove";
      b.onclick = () => { form.triplets.splice(i, 1); edited(); }; li.appendChild(b); ol.appendChild(li);
    });
    $("#pl-face").value = form.face || ""; $("#pl-tone").value = form.tone || "";
    const table = $("#pl-suspicions"); table.innerHTML = "";
    const head = table.insertRow(); head.insertCell().textContent = "";
    P.forEach((p, j) => { const th = document.createElement("th"); th.textContent = `${j + 1}. ${p}`; head.appendChild(th); });
    const state = stateAfter(cur);
    P.forEach((who, i) => {
      const row = table.insertRow(); const th = document.createElement("th"); th.textContent = `${i + 1}. ${who}`; row.appendChild(th);
      P.forEach((x) => {
        const box = document.createElement("input"); box.type = "checkbox"; box.dataset.who = who; box.dataset.x = x;
        box.checked = (state[who] || []).includes(x); box.setAttribute("aria-label", `${who} suspects ${x}`);
        box.onchange = () => toggle(who, x); row.insertCell().appendChild(box);
      });
    });
    $("#pl-add").disabled = !t.speaker;
    renderHeat(); renderChart();
  }
  function renderHeat() {
    const m = matrix(stateAfter(cur)); const table = $("#pl-heat"); table.innerHTML = "";
    const head = table.insertRow(); head.insertCell();
    P.forEach((p) => { const th = document.createElement("th"); th.textContent = p; head.appendChild(th); });
    m.forEach((row, i) => {
      const tr = table.insertRow(); const th = document.createElement("th"); th.textContent = P[i]; tr.appendChild(th);
      row.forEach((v) => { const td = tr.insertCell(); td.textContent = v.toFixed(2); td.style.background = `rgba(214,39,40,${v.toFixed(3)})`; });
    });
  }
  function renderChart() {
    const svg = $("#pl-chart"), W = 420, H = 200, pad = 24, T = data.turns.length;
    const series = data.turns.map((_, i) => toward(matrix(stateAfter(i))));
    const top = Math.max(1, ...series.flat());
    const x = (i) => pad + (T > 1 ? (i * (W - 2 * pad)) / (T - 1) : 0), y = (v) => H - pad - (v * (H - 2 * pad)) / top;
    let out = `<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="#999"/>`;
    out += `<line x1="${x(cur)}" y1="${pad}" x2="${x(cur)}" y2="${H - pad}" stroke="#bbb" stroke-dasharray="3"/>`;
    P.forEach((_, k) => {
      const pts = series.map((s, i) => `${x(i).toFixed(1)},${y(s[k]).toFixed(1)}`).join(" ");
      out += `<polyline fill="none" stroke-width="2" stroke="${COLORS[k % COLORS.length]}" points="${pts}" data-player="${k}"/>`;
    });
    svg.innerHTML = out;
    $("#pl-legend").innerHTML = P.map((p, k) => `<li><i style="background:${COLORS[k % COLORS.length]}"></i>${p}</li>`).join("");
  }

  // Reviewers: others' submitted / approved / rejected annotations with the state-machine actions.
  const ACTIONS = { submitted: ["approve", "reject"], approved: ["reopen"], rejected: [] };
  function renderOthers(t) {
    const list = $("#pl-others"); list.innerHTML = "";
    $("#pl-review").hidden = !(data.canReview && t.others.length);
    t.others.forEach((a, k) => {
      const li = document.createElement("li");
      li.textContent = `${a.annotator} · ${a.status} · ${a.triplets.map((x) => x.join(" ")).join("; ") || "no triplets"} · face ${a.face || "—"} · tone ${a.tone || "—"} `;
      (ACTIONS[a.status] || []).forEach((action) => {
        const b = document.createElement("button"); b.type = "button"; b.textContent = action; b.dataset.action = action;
        b.onclick = async () => {
          const reason = action === "approve" ? "" : window.prompt(`Why ${action}? (the annotator sees this)`);
          if (reason === null) return;
          try { t.others[k] = (await post(`${base}annotations/${a.id}/${action}/`, { version: a.version, reason })).annotation; message(`${action}: done.`); renderOthers(t); }
          catch (e) { message(e.message, true); }
        };
        li.appendChild(b);
      });
      list.appendChild(li);
    });
  }
  function edited() { source = "human"; renderForm(); }
  function toggle(who, x) {
    const state = stateAfter(cur); const s = (state[who] || []).slice();
    const at = s.indexOf(x); if (at >= 0) s.splice(at, 1); else s.push(x);
    form.suspicions[who] = P.filter((p) => s.includes(p)); edited();
  }
  function addTriplet(action, object) {
    const t = data.turns[cur]; if (!t.speaker) return message("This turn has no known speaker, so it takes no triplets.", true);
    if (!form.triplets.some((x) => x[1] === action && x[2] === object)) form.triplets.push([t.speaker, action, object]);
    edited();
  }
  function go(i) {
    if (i < 0 || i >= data.turns.length) return;
    cur = i; pending = null; source = "human";
    const t = data.turns[cur]; form = t.mine ? copy(t.mine) : blank();
    showPending(); message(""); renderTurn();
  }
  function message(text, error) { const m = $("#pl-msg"); m.textContent = text; m.className = error ? "error" : ""; }
  function showPending() {
    const names = { action: "object…", face: "face…", tone: "tone…", sus1: "who suspects…", sus2: "…suspects whom" };
    $("#pl-pending").textContent = pending ? names[pending.kind] : "";
  }
  async function post(url, body) {
    const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", "X-CSRFToken": Casebook.csrf() },
      body: JSON.stringify(body), credentials: "same-origin" });
    const json = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
    if (!r.ok) throw new Error(json.error || `HTTP ${r.status}`);
    return json;
  }
  async function save() {
    const t = data.turns[cur];
    try {
      const res = await post(`${base}turns/${t.index}/`, { ...form, version: t.mine ? t.mine.version : null, source });
      t.mine = res.annotation; form = copy(t.mine); message("Saved."); renderTurn();
    } catch (e) { message(e.message, true); }
  }
  async function submit() {
    const t = data.turns[cur]; if (!t.mine) return;
    try { const res = await post(`${base}annotations/${t.mine.id}/submit/`, { version: t.mine.version }); t.mine = res.annotation; message("Submitted for review."); renderTurn(); }
    catch (e) { message(e.message, true); }
  }
  async function suggest() {
    const t = data.turns[cur]; message("Asking for a suggestion…");
    try {
      const res = await post(`${base}turns/${t.index}/suggest/`, { previous: stateAfter(cur - 1) });
      const s = res.suggestion;
      form = { triplets: s.triplets, face: s.face || form.face, tone: s.tone || form.tone, suspicions: { ...form.suspicions, ...s.suspicions } };
      renderForm(); source = s.source;
      message(`Suggestion (${s.source}${s.model ? ", " + s.model : ""}) filled in: accept with Ctrl+S, edit, or move on to reject.` + (s.note ? " " + s.note : ""));
    } catch (e) { message(e.message, true); }
  }

  $("#pl-prev").onclick = () => go(cur - 1); $("#pl-next").onclick = () => go(cur + 1);
  $("#pl-add").onclick = () => addTriplet($("#pl-action").value, $("#pl-object").value);
  $("#pl-face").onchange = (e) => { form.face = e.target.value; edited(); };
  $("#pl-tone").onchange = (e) => { form.tone = e.target.value; edited(); };
  $("#pl-save").onclick = save; $("#pl-submit").onclick = submit; $("#pl-suggest").onclick = suggest;

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && (e.key === "s" || e.key === "Enter")) { e.preventDefault(); save(); return; }
    if (Casebook.typing(document.activeElement) || e.ctrlKey || e.metaKey || e.altKey) return;
    const digit = /^[1-9]$/.test(e.key) ? Number(e.key) - 1 : null;
    if (e.key === "Escape") { pending = null; }
    else if (pending && digit !== null) {
      if (pending.kind === "action" && digit < N) { addTriplet(pending.action, P[digit]); pending = null; }
      else if ((pending.kind === "face" || pending.kind === "tone") && digit < data.emotions.length) { form[pending.kind] = data.emotions[digit]; pending = null; edited(); }
      else if (pending.kind === "sus1" && digit < N) pending = { kind: "sus2", who: P[digit] };
      else if (pending.kind === "sus2" && digit < N) { toggle(pending.who, P[digit]); pending = null; }
    }
    else if (digit !== null && digit < data.actions.length) { pending = { kind: "action", action: data.actions[digit] }; $("#pl-action").value = data.actions[digit]; }
    else if (e.key === "ArrowRight") go(cur + 1);
    else if (e.key === "ArrowLeft") go(cur - 1);
    else if (e.key === "f" || e.key === "t") pending = { kind: e.key === "f" ? "face" : "tone" };
    else if (e.key === "s") pending = { kind: "sus1" };
    else if (e.key === "x") { form.triplets.pop(); edited(); }
    else if (e.key === "a") suggest();
    else return;
    e.preventDefault(); showPending();
  });
  go(0);
})();
