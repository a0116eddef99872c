// Export / import job page: poll the job, show progress, the problems found, and the result.
"use strict";
(function () {
  const initial = document.getElementById("job-initial"); if (!initial) return;
  const $ = (id) => document.getElementById(id);
  const item = (text, cls) => Object.assign(document.createElement("li"), { textContent: text, className: cls || "" });
  function problemLines(problems) {
    return problems.map((p) => item(`[${p.severity}] ${p.where}: ${p.message}${p.action ? " → " + p.action : ""}`, p.severity === "error" ? "danger" : ""));
  }
  function show(data) {
    $("job-state").textContent = data.state; $("job-message").textContent = data.message;
    $("job-progress").max = Math.max(data.total, 1); $("job-progress").value = data.done;
    $("job-count").textContent = `${data.done} / ${data.total}`;
    const result = data.result || {};
    const problems = (result.problems || []).slice();
    (result.games || []).forEach((g) => problems.push(...(g.problems || [])));
    $("job-problems").hidden = problems.length === 0;
    $("problem-count").textContent = `(${problems.length})`;
    $("problems-list").replaceChildren(...problemLines(problems));
    if (data.download) { $("download-link").href = data.download; $("job-download").hidden = false; }
    if (result.games) {
      $("job-games").hidden = false;
      $("games-list").replaceChildren(...result.games.map((g) => {
        const li = item(`${g.title} — ${g.status}, ${g.questions} question(s) `);
        if (g.url) li.append(Object.assign(document.createElement("a"), { href: g.url, textContent: "open" }));
        return li;
      }));
    }
    return data.finished;
  }
  let finished = show(JSON.parse(initial.textContent));
  async function poll() {
    if (finished) return;
    try {
      const res = await fetch(window.location.pathname, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (res.ok) finished = show(await res.json());
    } catch (e) { /* transient: try again */ }
    if (!finished) setTimeout(poll, 700);
  }
  setTimeout(poll, 300);
})();
