// Export / import job page: the problems found, the games and the download; app.js's shared
// data-job-live poller fetches the state and sends each one here as a "casebook:job" event.
"use strict";
(function () {
  const box = document.getElementById("job"); if (!box) return;
  const $ = (id) => document.getElementById(id);
  const item = (text, cls) => Object.assign(document.createElement("li"), { textContent: text, className: cls || "" });
  function problemLines(problems) {
    return problems.map((p) => item(`[${p.severity}] ${p.where}: ${p.message}${p.action ? " → " + p.action : ""}`, p.severity === "error" ? "danger" : ""));
  }
  box.addEventListener("casebook:job", (e) => {
    const data = e.detail, result = data.result || {};
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
  });
})();
