/* segbench site: sortable tables. No dependencies, no network, no inline script. */
"use strict";
(function () {
  function cellKey(row, idx, numeric) {
    var cell = row.cells[idx];
    var v = cell ? cell.getAttribute("data-value") : null;
    if (v === null) { v = cell ? cell.textContent.trim() : ""; }
    if (numeric) {
      var x = parseFloat(v);
      return isNaN(x) ? null : x;
    }
    return v === "" ? null : v.toLowerCase();
  }

  function sortBy(table, th) {
    var idx = th.cellIndex;
    var numeric = th.getAttribute("data-sort") === "num";
    var current = th.getAttribute("aria-sort");
    var dir;
    if (current === "descending") { dir = "ascending"; }
    else if (current === "ascending") { dir = "descending"; }
    else { dir = (numeric && !th.hasAttribute("data-lower-better")) ? "descending" : "ascending"; }
    var sign = dir === "ascending" ? 1 : -1;
    // the last tbody holds the rows to sort; earlier ones (the human row) stay on top
    var body = table.tBodies[table.tBodies.length - 1];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, i) { r.__order = i; });
    rows.sort(function (a, b) {
      var x = cellKey(a, idx, numeric), y = cellKey(b, idx, numeric);
      if (x === null && y === null) { return a.__order - b.__order; }
      if (x === null) { return 1; }          // missing values last, either way
      if (y === null) { return -1; }
      if (x < y) { return -sign; }
      if (x > y) { return sign; }
      return a.__order - b.__order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (c) {
      if (c !== th) { c.removeAttribute("aria-sort"); }
    });
    th.setAttribute("aria-sort", dir);
  }

  function init() {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      if (!table.tHead || !table.tBodies.length) { return; }
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
        if (!th.hasAttribute("data-sort")) { return; }
        th.tabIndex = 0;
        th.title = "sort by this column";
        th.addEventListener("click", function () { sortBy(table, th); });
        th.addEventListener("keydown", function (ev) {
          if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sortBy(table, th); }
        });
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
