// Ingest job page: draws the summary of a finished ingest; app.js's shared data-job-live poller
// fetches the state and sends each one here as a "casebook:job" event.
"use strict";
(function () {
  const box = document.getElementById("job"); if (!box) return;
  const $ = (id) => document.getElementById(id);
  const counts = (o) => Object.entries(o || {}).map(([k, v]) => `${v} ${k}`).join(", ");
  function lines(r) {
    const out = [
      `pages: ${r.pages} (${counts(r.pages_by_method) || "none"}; ${r.blank_pages} blank)`,
      `characters found: ${r.characters.length}: ${r.characters.join(", ")}`,
      `truth manual: ${r.manual_chars} characters; text clues: ${r.text_clues}; image clues: ${counts(r.image_clues) || 0}`,
      `mean OCR confidence: ${r.mean_ocr_confidence === null ? "n/a (no OCR)" : r.mean_ocr_confidence}`,
    ];
    return out.concat((r.errors || []).map((e) => "error: " + e), (r.warnings || []).map((w) => "warning: " + w));
  }
  box.addEventListener("casebook:job", (e) => {
    const data = e.detail;
    if (!data.result || !data.result.characters) return;
    $("summary-lines").replaceChildren(...lines(data.result).map((t) => Object.assign(document.createElement("li"), { textContent: t })));
    $("job-summary").hidden = false;
    if (data.split_url) $("split-link").href = data.split_url;
    if (data.game_url) $("game-link").href = data.game_url;
  });
})();
