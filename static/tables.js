// Tables marked `stack` turn into one card per row on narrow screens (see app.css): each cell is labelled with
// its column's header here, so a person on a phone reads "Role: Annotator" instead of scrolling sideways to
// find a row's actions. Runs again after htmx swaps in new rows.
(function () {
  function label(root) {
    root.querySelectorAll("table.stack").forEach(function (table) {
      var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
        return th.textContent.trim();
      });
      table.querySelectorAll("tbody tr").forEach(function (row) {
        Array.prototype.forEach.call(row.children, function (cell, index) {
          if (heads[index] && !cell.hasAttribute("data-label")) cell.setAttribute("data-label", heads[index]);
        });
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () { label(document); });
  document.addEventListener("htmx:afterSwap", function (event) { label(event.target); });
})();

// A data table larger than its box scrolls inside it (app.css keeps its header row and first column in view): mark
// a wide one's box `data-scrolls` and say above the box how many columns lie to the right and how many rows below,
// so nobody misses them. Runs again when the window is resized.
(function () {
  function plural(count, noun) { return count + " more " + noun + (count === 1 ? "" : "s"); }
  function mark() {
    document.querySelectorAll(".table-wrap").forEach(function (wrap) {
      var table = wrap.querySelector("table");
      var hint = wrap.previousElementSibling && wrap.previousElementSibling.classList.contains("scroll-hint")
        ? wrap.previousElementSibling : null;
      var wide = table && table.scrollWidth > wrap.clientWidth + 1;
      var tall = table && table.scrollHeight > wrap.clientHeight + 1;
      if (wide) wrap.setAttribute("data-scrolls", "x"); else wrap.removeAttribute("data-scrolls");
      if (!wide && !tall) {
        if (hint) hint.remove();
        return;
      }
      var row = table.querySelector("tbody tr") || table.querySelector("tr");
      var columns = wide && row ? Array.prototype.filter.call(row.children, function (cell) {
        return cell.offsetLeft + cell.offsetWidth > wrap.clientWidth + 1;
      }).length : 0;
      var rows = tall ? Array.prototype.filter.call(table.querySelectorAll("tbody tr"), function (line) {
        return line.offsetTop + line.offsetHeight > wrap.clientHeight + 1;
      }).length : 0;
      var ways = [];
      if (wide) ways.push("sideways" + (columns ? " for " + plural(columns, "column") : "") + " →");
      if (tall) ways.push("down" + (rows ? " for " + plural(rows, "row") : "") + " ↓");
      if (!hint) {
        hint = document.createElement("p");
        hint.className = "scroll-hint";
        wrap.parentNode.insertBefore(hint, wrap);
      }
      hint.textContent = (wide ? (tall ? "Larger" : "Wider") : "Taller") + " than this box: scroll it " + ways.join(" and ");
    });
  }
  // Sizes change on load, resize, a swap or a section opening: a ResizeObserver sees every one.
  var observer = window.ResizeObserver ? new ResizeObserver(function () { mark(); }) : null;
  function watch() {
    mark();
    if (observer) document.querySelectorAll(".table-wrap, .table-wrap > table").forEach(function (box) { observer.observe(box); });
  }
  document.addEventListener("DOMContentLoaded", watch);
  window.addEventListener("resize", mark);
  document.addEventListener("htmx:afterSwap", watch);
})();
