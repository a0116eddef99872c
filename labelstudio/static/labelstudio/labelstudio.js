// Label Studio page: poll the running job's JSON status until it has finished.
"use strict";
(function () {
  const box = document.querySelector("[data-ls-job]");
  if (!box) return;
  const field = (name) => box.querySelector(`[data-field="${name}"]`);
  const tick = async () => {
    let data;
    try {
      const response = await fetch(box.dataset.lsJob, { headers: { Accept: "application/json" } });
      data = await response.json();
    } catch (e) { setTimeout(tick, 3000); return; }
    field("state").textContent = data.state;
    field("state").className = `status ls-${data.state}`;
    field("progress").textContent = data.total ? `${data.done} / ${data.total}` : "";
    field("message").textContent = data.message;
    field("bar").max = data.total || 1; field("bar").value = data.finished ? (data.total || 1) : data.done;
    const list = field("skipped");
    list.textContent = "";
    data.skipped.forEach((s) => { const li = document.createElement("li"); li.textContent = `${s.kind} · task ${s.task}: ${s.detail}`; list.append(li); });
    field("skipped-box").hidden = !data.skipped.length;
    if (data.project_url) { field("project").href = data.project_url; field("project").hidden = false; }
    if (!data.finished) setTimeout(tick, 1000);
  };
  tick();
})();
