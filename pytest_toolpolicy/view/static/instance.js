// An instance page: two columns, each showing one item chosen from this instance's items.
// Each item's turns are an inert <template> until chosen (a page with many variants renders
// only the two on show). #left=ID&right=ID picks them; a bare #ID (a link from the item list)
// shows that item beside the baseline.
"use strict";
(function () {
  const ids = [...document.querySelectorAll("template.item")].map((t) => t.dataset.item);
  const baseline = document.body.dataset.baseline;
  const candidate = document.body.dataset.candidate;
  const sides = ["left", "right"];

  function chosen() {
    const hash = decodeURIComponent(location.hash.slice(1));
    if (ids.includes(hash)) {
      return hash === baseline ? { left: baseline, right: candidate } : { left: baseline, right: hash };
    }
    const params = new URLSearchParams(location.hash.slice(1));
    return {
      left: ids.includes(params.get("left")) ? params.get("left") : baseline,
      right: ids.includes(params.get("right")) ? params.get("right") : candidate,
    };
  }
  function show(side, id) {
    const column = document.getElementById("col-" + side);
    const box = document.getElementById("pick-" + side);
    box.value = id || "";
    column.replaceChildren();
    const template = [...document.querySelectorAll("template.item")].find((t) => t.dataset.item === id);
    if (template) column.append(template.content.cloneNode(true));
  }
  function render() {
    const pick = chosen();
    for (const side of sides) show(side, pick[side]);
  }
  for (const side of sides) {
    const box = document.getElementById("pick-" + side);
    for (const id of ids) box.add(new Option(id, id));
    box.addEventListener("change", () => {
      const params = new URLSearchParams();
      for (const s of sides) params.set(s, document.getElementById("pick-" + s).value);
      location.hash = params.toString();
    });
  }
  window.addEventListener("hashchange", render);
  render();
})();
