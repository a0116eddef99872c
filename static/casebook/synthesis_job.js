// Synthesis job page: the link to the draft once written, or the failed stage with the model's last
// reply; app.js's shared data-job-live poller sends each state here as a "casebook:job" event.
"use strict";
(function () {
  const box = document.getElementById("job"); if (!box) return;
  const $ = (id) => document.getElementById(id);
  box.addEventListener("casebook:job", (e) => {
    const data = e.detail;
    if (data.game_url) { $("game-link").href = data.game_url; $("job-done").hidden = false; }
    if (data.failure && data.failure.stage) {
      $("fail-stage").textContent = data.failure.stage;
      $("fail-message").textContent = data.failure.message;
      $("fail-reply").textContent = data.failure.reply || "";
      $("job-failure").hidden = false;
    }
  });
})();
