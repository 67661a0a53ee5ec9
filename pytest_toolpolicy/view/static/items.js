// The item list: filters read from and written to location.hash, so a link from any table
// cell (index.html) opens the list already filtered. Every cell is set with textContent:
// nothing an item holds is ever parsed as HTML.
"use strict";
(function () {
  const items = JSON.parse(document.getElementById("items-data").textContent);
  const keys = ["variant", "outcome", "resolved", "abstained", "underspecified", "flipped", "status"];
  const body = document.getElementById("items-body");
  const count = document.getElementById("items-count");
  const select = (key) => document.getElementById("filter-" + key);

  function fill(key) {
    const seen = [...new Set(items.map((it) => String(it[key])))].sort();
    const box = select(key);
    for (const value of seen) if (value !== "") box.add(new Option(value, value));
  }
  function wanted() {
    const params = new URLSearchParams(location.hash.slice(1));
    const out = {};
    for (const key of keys) out[key] = params.get(key) || "";
    return out;
  }
  function matches(item, filters) {
    return keys.every((key) => !filters[key] || String(item[key]) === filters[key]);
  }
  function cell(row, text, className) {
    const td = row.insertCell();
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }
  function render() {
    const filters = wanted();
    for (const key of keys) select(key).value = filters[key];
    body.replaceChildren();
    let shown = 0;
    for (const item of items) {
      if (!matches(item, filters)) continue;
      shown += 1;
      const row = body.insertRow();
      const link = document.createElement("a");
      link.href = "i/" + item.page + "#" + encodeURIComponent(item.item);
      link.textContent = item.item;
      row.insertCell().append(link);
      cell(row, item.variant);
      cell(row, item.trial === null ? "" : String(item.trial));
      cell(row, item.status, item.status === "ok" ? "" : "bad");
      cell(row, item.outcome);
      cell(row, item.resolved, item.resolved === "yes" ? "ok" : "");
      cell(row, item.flipped);
      cell(row, item.turns, "num");
      cell(row, item.tokens, "num");
      cell(row, item.cost, "num");
      cell(row, item.seconds, "num");
      cell(row, item.error || "");
    }
    count.textContent = shown + " of " + items.length + " items";
  }
  function changed() {
    const params = new URLSearchParams();
    for (const key of keys) if (select(key).value) params.set(key, select(key).value);
    location.hash = params.toString();
  }
  for (const key of keys) {
    fill(key);
    select(key).addEventListener("change", changed);
  }
  window.addEventListener("hashchange", render);
  render();
})();
